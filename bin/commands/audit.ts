import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { auditSamples, type AuditReport } from '../../core/audit.ts';
import { UserError } from '../../core/errors.ts';
import type { PipelineDefinition } from '../../core/pipeline.ts';
import { distinctTools, pathResolver } from '../../core/run.ts';
import { formatTable } from '../../core/table.ts';
import { DatasetStore } from '../../core/store.ts';
import { pipelines } from '../../pipelines/index.ts';
import type { Command } from '../command.ts';
import { needPositionals, stringFlag } from '../flags.ts';
import { DATASETS_AUDIT } from '../command-specs.ts';
import { PROJECT_DIR } from '../../core/project-dir.ts';


export const datasetsAuditCommand: Command = {
  ...DATASETS_AUDIT,
  async run(positionals, values, io) {
    const released = stringFlag(values, 'released');
    let audited: { subject: string; report: AuditReport };
    if (released !== undefined) {
      needPositionals(positionals, 0, this.usage);
      audited = auditReleased(released, { cwd: io.cwd, dir: stringFlag(values, 'dir') });
    } else {
      if (values.dir !== undefined) throw new UserError('--dir goes with --released (the folder of a released benchmark)');
      needPositionals(positionals, 1, this.usage);
      audited = auditVersion(new DatasetStore(io.home, { warn: io.err }), positionals[0], io.cwd);
    }
    if (io.json) io.out(JSON.stringify({ audited: audited.subject, ...audited.report }));
    else io.out(formatAudit(audited.subject, audited.report));
    return 0;
  },
};

/** The audit of a published version (`name@v`): its samples streamed from its files, against its tool library, with its recipe's audits. */
export function auditVersion(store: DatasetStore, name: string, cwd: string): { subject: string; report: AuditReport } {
  const ref = store.resolve(name);
  store.assertIntact(ref);
  const manifest = store.manifest(ref);
  // A version of a recipe this toolkiln does not know gets the shared invariants alone.
  const pipeline: PipelineDefinition | undefined = pipelines[manifest.pipeline];
  const report = auditSamples(store.sampleSource(ref).all(), store.tools(ref), {
    audits: pipeline?.audits?.(manifest.config, pathResolver(cwd, PROJECT_DIR)),
    invariants: { offeredOutsideLibrary: pipeline?.invariants?.offeredOutsideLibrary },
  });
  return { subject: `${ref.name}@${ref.version}`, report };
}

/** The audit of a released benchmark read as samples by the recipe that knows it (from `dir`, default: its place beside the project). */
export function auditReleased(name: string, options: { cwd: string; dir?: string }): { subject: string; report: AuditReport } {
  const { pipeline, entry } = releasedSet(name);
  const resolvePath = pathResolver(options.cwd, PROJECT_DIR);
  const dir = options.dir === undefined ? resolvePath(entry.path) : resolve(options.cwd, options.dir);
  if (!existsSync(dir)) throw new UserError(`released ${name} not found at ${dir}; put its files (${entry.files}) there or give --dir <folder>`);
  const { samples, tools, unreadable } = entry.read(dir, resolvePath);
  const report = auditSamples(samples(), tools?.() ?? distinctTools(samples()), {
    audits: pipeline.audits?.(pipeline.configSchema.parse({}), resolvePath),
    invariants: { offeredOutsideLibrary: pipeline.invariants?.offeredOutsideLibrary },
    unreadable,
  });
  return { subject: `released ${name} (${dir})`, report };
}

/** The recipe that reads released set `name`, and its entry; an unknown name is a one-line error listing the known ones. */
function releasedSet(name: string) {
  const known = Object.values(pipelines).flatMap((pipeline) => (pipeline.released ?? []).map((entry) => ({ pipeline, entry })));
  const found = known.find(({ entry }) => entry.name === name);
  if (!found) throw new UserError(`--released ${name}: not a released benchmark toolkiln reads; choose one of ${known.map(({ entry }) => entry.name).join(', ')}`);
  return found;
}

/** The audit as a table (one row per check) and an example of each check that found something. */
export function formatAudit(subject: string, report: AuditReport): string {
  const rows = report.checks.map((c) => [c.check, c.checked === null ? '-' : String(c.checked), String(c.findings), String(c.samples), c.first.join(' ')]);
  const examples = report.checks
    .filter((c) => c.examples.length)
    .map((c) => {
      const first = c.examples[0];
      const sample = first.sampleId ? `${first.sampleId}${first.source ? ` (${first.source})` : ''}` : '(tool library)';
      return `  ${c.check}: ${sample} ${first.where}: ${first.problem}`;
    });
  return [
    `${subject}: ${report.samples} samples audited`,
    formatTable(['check', 'checked', 'findings', 'samples', 'first ids'], rows),
    ...(examples.length ? ['', 'first finding of each check:', ...examples] : ['', 'nothing found']),
  ].join('\n');
}
