import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { AuditTally, type CheckCount, type SampleAudit } from './audit.ts';
import { describeFinding, SampleInvariants, type InvariantOptions } from './invariants.ts';
import { eachJsonl, JsonlWriter } from './jsonl.ts';
import type { Rejection, Sample, ToolSpec } from './records.ts';
import type { SampleLine } from './store.ts';

/**
 * The last check before a run publishes: every sample against the shared invariants
 * (core/invariants.ts), with the version's tool library. In `reject` mode a sample that breaks one
 * is not published: it goes to the version's rejects with the checks it breaks (reason: the
 * first check's name in snake case, `range_order`; detail: every finding); in `record` mode (an import of a released set,
 * kept as released) it is published and counted. The recipe's own audits run on the samples
 * published and are counted, never rejected. Counts per check go to the manifest (`stats.audit`).
 *
 * Memory and CPU: the samples are read from the run's files, one pass for the tool library, and
 * one that checks each sample while the store writes it (keeping the ids seen and the positions of
 * the rejected samples, not the samples); when any was rejected, one more for the library of the
 * samples published.
 */

export const GATE_STAGE = 'invariants';
/** Bump when the gate or the invariants change what is published: it is part of the dataset fingerprint. */
export const GATE_VERSION = 1;

export interface GateOptions {
  mode: 'reject' | 'record';
  /** The dataset's tool library from its samples (the recipe's, or every distinct tool). */
  toolLibrary: (samples: Iterable<Sample>) => ToolSpec[];
  invariants?: InvariantOptions;
  audits?: readonly SampleAudit[];
  /** A folder of the run where the rejects wait to be published. */
  dir: string;
}

/** What the manifest records of the gate (`stats.audit`). */
export interface GateSummary {
  gate: 'reject' | 'record';
  samples: number;
  rejected: number;
  checks: Record<string, Omit<CheckCount, 'check' | 'examples' | 'description'>>;
}

/**
 * The gate over a run's samples, in the order the store takes what it gives: `lines` first (once),
 * then `tools`, `rejects` and `summary`, which are known only when every sample has been checked.
 */
export interface GateResult {
  /** The samples to publish, each checked as it is read, with its line and the sample itself (the store writes it without parsing it again). */
  lines: () => Generator<SampleLine & { sample: Sample }>;
  /** The tool library of the samples published. */
  tools: () => Iterable<ToolSpec>;
  /** The samples the gate rejected, as Rejections. */
  rejects: () => Generator<Rejection>;
  summary: () => GateSummary;
}

/** The gate over a run's samples (`samples` and `lines` give them in the same order, each call a new pass). */
export function gateForPublishing(run: { samples: () => Iterable<Sample>; lines: () => Iterable<SampleLine & { sample: Sample }> }, options: GateOptions): GateResult {
  const library = options.toolLibrary(run.samples());
  const invariants = new SampleInvariants(library, options.invariants);
  const audits = options.audits ?? [];
  const tally = new AuditTally(audits);
  tally.add(invariants.libraryFindings());
  const rejectsPath = join(options.dir, 'invariant-rejects.jsonl');
  const rejected = new Set<number>();
  let checked = false;
  const done = (what: string) => {
    if (!checked) throw new Error(`the publish gate's ${what} is known once every sample has been checked (its lines read)`);
  };

  function* lines(): Generator<SampleLine & { sample: Sample }> {
    if (checked) throw new Error('the publish gate checks the samples once');
    rmSync(rejectsPath, { force: true });
    const writer = new JsonlWriter(rejectsPath);
    try {
      let i = 0;
      for (const line of run.lines()) {
        const { sample } = line;
        tally.samples++;
        const findings = invariants.check(sample);
        if (findings.length && options.mode === 'reject') {
          rejected.add(i);
          const reject: Rejection = { stage: GATE_STAGE, reason: findings[0].check.replace(/-/g, '_'), detail: findings.map(describeFinding).join('; '), recordId: sample.id, record: sample };
          writer.write(reject);
          tally.add(findings);
        } else {
          tally.add([...findings, ...audits.flatMap((audit) => audit.check(sample))]);
          yield line;
        }
        i++;
      }
    } finally {
      writer.close();
    }
    for (const [check, count] of Object.entries(invariants.checked)) tally.setChecked(check, count);
    for (const audit of audits) if (audit.checked) tally.setChecked(audit.name, audit.checked());
    checked = true;
  }

  return {
    lines,
    tools: () => {
      done('tool library');
      if (!rejected.size) return library;
      let i = 0;
      return options.toolLibrary((function* () {
        for (const sample of run.samples()) if (!rejected.has(i++)) yield sample;
      })());
    },
    rejects: () => {
      done('rejects');
      return eachJsonl<Rejection>(rejectsPath);
    },
    summary: () => {
      done('summary');
      const report = tally.report();
      return {
        gate: options.mode,
        samples: report.samples,
        rejected: rejected.size,
        checks: Object.fromEntries(report.checks.map(({ check, kind, checked, findings, samples, first }) => [check, { kind, checked, findings, samples, first }])),
      };
    },
  };
}

/** One line for the run's log: what the gate checked and rejected (or recorded), and what the recipe's audits counted. */
export function describeGate(summary: GateSummary): string {
  const found = (kind: 'invariant' | 'recipe') =>
    Object.entries(summary.checks)
      .filter(([, count]) => count.kind === kind && count.samples)
      .map(([check, count]) => `${check} ${count.samples}`)
      .join(', ');
  const invariants = found('invariant');
  const recipe = found('recipe');
  const verdict = summary.gate === 'reject' ? `${summary.rejected} rejected` : invariants ? 'findings recorded, none rejected' : 'nothing found';
  return `invariants: ${summary.samples} samples checked, ${verdict}${invariants ? ` (samples per check: ${invariants})` : ''}${recipe ? `; the recipe's audits found samples: ${recipe}` : ''}`;
}
