import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { AuditTally, type CheckCount, type SampleAudit } from './audit.ts';
import { describeFinding, SampleInvariants, type InvariantOptions } from './invariants.ts';
import { eachJsonl, JsonlWriter } from './jsonl.ts';
import type { ToolLibraryTally } from './pipeline.ts';
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
 * Memory and CPU: the samples are read from the run's files once, each checked while the store
 * writes it (keeping the ids seen, not the samples), the library of the samples published made as
 * they go; a pass before it makes the library of them all, unless the run made it as it wrote them.
 */

export const GATE_STAGE = 'invariants';
/** Bump when the gate or the invariants change what is published: it is part of the dataset fingerprint. */
export const GATE_VERSION = 1;

export interface GateOptions {
  mode: 'reject' | 'record';
  /** The dataset's tool library from its samples (the recipe's, or every distinct tool). */
  toolLibrary: () => ToolLibraryTally;
  /** The library of every sample, when it was made as they were written (no pass over them to make it). */
  library?: ToolSpec[];
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
  const library = options.library ?? libraryOf(run.samples(), options.toolLibrary());
  // The library of the samples published, should any be rejected.
  const published = options.toolLibrary();
  const invariants = new SampleInvariants(library, options.invariants);
  const audits = options.audits ?? [];
  const tally = new AuditTally(audits);
  tally.add(invariants.libraryFindings());
  const rejectsPath = join(options.dir, 'invariant-rejects.jsonl');
  let rejected = 0;
  let checked = false;
  const done = (what: string) => {
    if (!checked) throw new Error(`the publish gate's ${what} is known once every sample has been checked (its lines read)`);
  };

  function* lines(): Generator<SampleLine & { sample: Sample }> {
    if (checked) throw new Error('the publish gate checks the samples once');
    rmSync(rejectsPath, { force: true });
    const writer = new JsonlWriter(rejectsPath);
    try {
      for (const line of run.lines()) {
        const { sample } = line;
        tally.samples++;
        const findings = invariants.check(sample);
        if (findings.length && options.mode === 'reject') {
          rejected++;
          const reject: Rejection = { stage: GATE_STAGE, reason: findings[0].check.replace(/-/g, '_'), detail: findings.map(describeFinding).join('; '), recordId: sample.id, record: sample };
          writer.write(reject);
          tally.add(findings);
        } else {
          tally.add([...findings, ...audits.flatMap((audit) => audit.check(sample))]);
          published.add(sample);
          yield line;
        }
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
      return rejected ? published.tools() : library;
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
        rejected,
        checks: Object.fromEntries(report.checks.map(({ check, kind, checked, findings, samples, first }) => [check, { kind, checked, findings, samples, first }])),
      };
    },
  };
}

function libraryOf(samples: Iterable<Sample>, tally: ToolLibraryTally): ToolSpec[] {
  for (const sample of samples) tally.add(sample);
  return tally.tools();
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
