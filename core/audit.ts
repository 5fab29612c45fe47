import { INVARIANT_CHECKS, SampleInvariants, type Finding, type InvariantOptions } from './invariants.ts';
import type { Sample, ToolSpec } from './records.ts';

/**
 * An audit of a version: the shared invariants (core/invariants.ts) and a recipe's own checks, run
 * over its samples as a stream, counted per check with the first offending sample ids. What is
 * kept is the counts and a few findings per check, never the samples.
 */

/** A recipe's own check of one sample (its pipeline declares it: `audits`). */
export interface SampleAudit {
  /** The check's name as its findings carry it, e.g. `tooltalk/replay`. */
  name: string;
  /** What it checks, in a few words (printed beside its counts). */
  description: string;
  /** The findings of one sample; none when the sample is not the kind the check reads. */
  check(sample: Sample): Finding[];
  /** What the check looked at so far (calls replayed, programs checked …), if it counts them. */
  checked?(): number;
}

export interface CheckCount {
  check: string;
  kind: 'invariant' | 'recipe';
  description: string;
  /** What the check looked at (samples, calls, ranges …), when it counts them. */
  checked: number | null;
  findings: number;
  /** Samples with at least one finding. */
  samples: number;
  /** The first offending sample ids (at most `FIRST_IDS`), in the order met. */
  first: string[];
  /** The first findings, as examples, each with where its sample comes from (`source`: its id in its source file). */
  examples: (Finding & { source?: string })[];
}

export interface AuditReport {
  samples: number;
  /** One entry per check, shared invariants first, every check listed even when it found nothing. */
  checks: CheckCount[];
}

export const FIRST_IDS = 5;
const EXAMPLES = 3;

export const INVARIANT_DESCRIPTIONS: Record<string, string> = {
  'sample-id-unique': 'no two samples share an id',
  'tool-names-unique': 'one tool to a name, case aside, in the candidate lists and the tool library',
  'tool-exists': "calls name a tool the sample offers; offered tools are in the version's library",
  'argument-schema': "each call's arguments satisfy its tool's parameters schema",
  'range-order': 'two-argument ranges (start/end, from/to, min/max, check-in/out …) do not end before they start',
};

/** Counts findings per check as samples go by (each sample's findings given together). */
export class AuditTally {
  private readonly counts = new Map<string, CheckCount>();
  samples = 0;

  constructor(audits: readonly Pick<SampleAudit, 'name' | 'description'>[] = []) {
    for (const check of INVARIANT_CHECKS) this.entry(check, 'invariant', INVARIANT_DESCRIPTIONS[check]);
    for (const audit of audits) this.entry(audit.name, 'recipe', audit.description);
  }

  entry(check: string, kind: CheckCount['kind'], description: string): CheckCount {
    let entry = this.counts.get(check);
    if (!entry) this.counts.set(check, (entry = { check, kind, description, checked: null, findings: 0, samples: 0, first: [], examples: [] }));
    return entry;
  }

  /** The findings of one sample (or, with an empty sample id, of the version as a whole); `source` names the sample in its source. */
  add(findings: readonly Finding[], source?: string): void {
    const counted = new Set<string>();
    for (const finding of findings) {
      const entry = this.entry(finding.check, 'recipe', '');
      entry.findings++;
      if (entry.examples.length < EXAMPLES) entry.examples.push(source ? { ...finding, source } : finding);
      if (!finding.sampleId || counted.has(finding.check)) continue;
      counted.add(finding.check);
      entry.samples++;
      if (entry.first.length < FIRST_IDS && !entry.first.includes(finding.sampleId)) entry.first.push(finding.sampleId);
    }
  }

  /** What a check looked at, as its checker counted it. */
  setChecked(check: string, checked: number): void {
    const entry = this.counts.get(check);
    if (entry) entry.checked = checked;
  }

  report(): AuditReport {
    return { samples: this.samples, checks: [...this.counts.values()].map((entry) => ({ ...entry, first: [...entry.first], examples: [...entry.examples] })) };
  }
}

export interface AuditOptions {
  audits?: readonly SampleAudit[];
  invariants?: InvariantOptions;
  /** Records of the source that could not be made into samples (a released file's), asked for after the samples were read. */
  unreadable?: () => Finding[];
}

export const UNREADABLE = 'record-readable';

/** The audit of a stream of samples against a tool library: the shared invariants, then each recipe audit. */
export function auditSamples(samples: Iterable<Sample>, library: readonly ToolSpec[], options: AuditOptions = {}): AuditReport {
  const audits = options.audits ?? [];
  const invariants = new SampleInvariants(library, options.invariants);
  const tally = new AuditTally(audits);
  tally.add(invariants.libraryFindings());
  for (const sample of samples) {
    tally.samples++;
    tally.add([...invariants.check(sample), ...audits.flatMap((audit) => audit.check(sample))], sourceOf(sample));
  }
  if (options.unreadable) {
    tally.entry(UNREADABLE, 'invariant', 'the record can be read as a sample');
    for (const finding of options.unreadable()) tally.add([finding]);
  }
  for (const [check, checked] of Object.entries(invariants.checked)) tally.setChecked(check, checked);
  for (const audit of audits) if (audit.checked) tally.setChecked(audit.name, audit.checked());
  return tally.report();
}

/** Where a sample comes from, when its meta says: `<id in its source> in <file>` (a released record's own id). */
export function sourceOf(sample: Sample): string | undefined {
  const source = sample.meta.source;
  if (!source?.id) return undefined;
  return source.file ? `${source.id} in ${source.file}` : source.id;
}
