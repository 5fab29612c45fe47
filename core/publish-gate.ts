import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { AuditTally, type CheckCount, type SampleAudit } from './audit.ts';
import { describeFinding, SampleInvariants, type InvariantOptions } from './invariants.ts';
import { eachJsonl, JsonlWriter } from './jsonl.ts';
import type { ToolLibraryTally } from './pipeline.ts';
import type { Rejection, Sample, ToolSpec } from './records.ts';
import { SampleFiles, type PreparedSamples } from './store.ts';
import { SampleLineTexts } from './line-form.ts';
import type { JsonTexts } from './json-texts.ts';

/**
 * The last check before a run publishes: every sample against the shared invariants
 * (core/invariants.ts), with the version's tool library. In `reject` mode a sample that breaks one
 * is not published: it goes to the version's rejects with the checks it breaks (reason: the
 * first check's name in snake case, `range_order`; detail: every finding); in `record` mode (an import of a released set,
 * kept as released) it is published and counted. The recipe's own audits run on the samples
 * published and are counted, never rejected. Counts per check go to the manifest (`stats.audit`).
 *
 * Memory and CPU: the gate takes the samples one at a time, in order, and writes each one it keeps
 * in the line form to the version's data files in the run folder (the store moves them into the
 * version), keeping the ids seen, not the samples. It runs as the last stage writes its samples,
 * before the library is known (`library: null`): the checks that need the library are made at the
 * end over the distinct tools offered; should one find anything (a version whose tools clash), the
 * result is not used (`end` returns null) and the gate runs again over the last stage's file with
 * the library, as it does when the last stage ran in an earlier process.
 */

export const GATE_STAGE = 'invariants';
/** Bump when the gate or the invariants change what is published: it is part of the dataset fingerprint. */
export const GATE_VERSION = 1;

export interface GateOptions {
  mode: 'reject' | 'record';
  /** The dataset's tool library from its samples (the recipe's, or every distinct tool). */
  toolLibrary: () => ToolLibraryTally;
  /** The library of every sample; null: made as the samples come, and the checks that need it made at the end. */
  library: ToolSpec[] | null;
  invariants?: InvariantOptions;
  audits?: readonly SampleAudit[];
  /** A folder of the run: the data files and the rejects wait there to be published. */
  dir: string;
  /** The run's record texts: a sample's parts the last stage wrote are not serialised again. */
  texts?: JsonTexts;
  /** Told each sample written to the data files, in their order (what publishing measures next sees them while they are in memory). */
  onPublished?: (sample: Sample) => void;
}

/** What the manifest records of the gate (`stats.audit`). */
export interface GateSummary {
  gate: 'reject' | 'record';
  samples: number;
  rejected: number;
  checks: Record<string, Omit<CheckCount, 'check' | 'examples' | 'description'>>;
}

/** What the gate made of every sample. */
export interface GateResult {
  /** The data files of the samples published, to be moved into the version. */
  prepared: PreparedSamples;
  /** The tool library of the samples published. */
  tools: ToolSpec[];
  /** The library of every sample the gate saw. */
  library: ToolSpec[];
  /** The samples the gate rejected, as Rejections. */
  rejects: () => Generator<Rejection>;
  summary: GateSummary;
}

export class PublishGate {
  private readonly invariants: SampleInvariants;
  private readonly audits: readonly SampleAudit[];
  private readonly tally: AuditTally;
  /** Every sample's library, when it is made as they come. */
  private readonly all: ToolLibraryTally | null;
  /** The library of the samples published, should any be rejected. */
  private readonly published: ToolLibraryTally;
  private readonly files: SampleFiles;
  private readonly rejectsPath: string;
  private readonly rejectWriter: JsonlWriter;
  private rejected = 0;

  constructor(private readonly options: GateOptions) {
    this.invariants = new SampleInvariants(options.library, options.invariants);
    this.audits = options.audits ?? [];
    this.tally = new AuditTally(this.audits);
    if (options.library) this.tally.add(this.invariants.libraryFindings());
    this.all = options.library ? null : options.toolLibrary();
    this.published = options.toolLibrary();
    const data = join(options.dir, 'data');
    rmSync(data, { recursive: true, force: true });
    this.files = new SampleFiles(data, new SampleLineTexts(options.texts));
    this.rejectsPath = join(options.dir, 'invariant-rejects.jsonl');
    this.rejectWriter = new JsonlWriter(this.rejectsPath);
  }

  /** Checks the next sample: rejected with the checks it breaks, or written to the data files. */
  add(sample: Sample): void {
    this.all?.add(sample);
    this.tally.samples++;
    const findings = this.invariants.check(sample);
    if (findings.length && this.options.mode === 'reject') {
      this.rejected++;
      const reject: Rejection = { stage: GATE_STAGE, reason: findings[0].check.replace(/-/g, '_'), detail: findings.map(describeFinding).join('; '), recordId: sample.id, record: sample };
      this.rejectWriter.write(reject);
      this.tally.add(findings);
    } else {
      this.tally.add([...findings, ...this.audits.flatMap((audit) => audit.check(sample))]);
      this.published.add(sample);
      this.files.add(sample);
      this.options.onPublished?.(sample);
    }
  }

  /**
   * After the last sample: what the gate made of them all; `{ redo }` when the checks that needed
   * the library find something now (what it wrote is dropped: run the gate again over the files
   * with `library`, the library of every sample).
   */
  end(): GateResult | { redo: true; library: ToolSpec[] } {
    this.rejectWriter.close();
    const prepared = this.files.close();
    const library = this.options.library ?? this.all!.tools();
    if (!this.options.library && !this.invariants.holdsWith(library)) {
      this.discard();
      return { redo: true, library };
    }
    for (const [check, count] of Object.entries(this.invariants.checked)) this.tally.setChecked(check, count);
    for (const audit of this.audits) if (audit.checked) this.tally.setChecked(audit.name, audit.checked());
    const report = this.tally.report();
    const rejectsPath = this.rejectsPath;
    return {
      prepared,
      tools: this.rejected ? this.published.tools() : library,
      library,
      rejects: () => eachJsonl<Rejection>(rejectsPath),
      summary: {
        gate: this.options.mode,
        samples: report.samples,
        rejected: this.rejected,
        checks: Object.fromEntries(report.checks.map(({ check, kind, checked, findings, samples, first }) => [check, { kind, checked, findings, samples, first }])),
      },
    };
  }

  /** Drops what the gate wrote (a gate not used). */
  discard(): void {
    try {
      this.rejectWriter.close();
    } catch {
      // Closed already, or the disk failed: the file goes either way.
    }
    this.files.discard();
    rmSync(this.rejectsPath, { force: true });
  }
}

/** The gate over samples read again from the run's files, with their library made in a pass before it unless given. */
export function gateOverFiles(samples: () => Iterable<Sample>, options: Omit<GateOptions, 'library'> & { library?: ToolSpec[] }): GateResult {
  const library = options.library ?? libraryOf(samples(), options.toolLibrary());
  const gate = new PublishGate({ ...options, library });
  try {
    for (const sample of samples()) gate.add(sample);
  } catch (error) {
    gate.discard();
    throw error;
  }
  const result = gate.end();
  if ('redo' in result) throw new Error('the publish gate with its library known asked to be run again');
  return result;
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
