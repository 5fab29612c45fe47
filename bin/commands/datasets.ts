import { join } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { writeFileAtomic } from '../../core/jsonl.ts';
import { compareWithReference, formatComparison } from '../../core/reference-compare.ts';
import { DatasetStore } from '../../core/store.ts';
import { formatTable } from '../../core/table.ts';
import type { Command } from '../command.ts';
import { needPositionals } from '../flags.ts';
import { DATASETS_DIFF, DATASETS_LIST, DATASETS_SHOW, DATASETS_VERIFY } from '../command-specs.ts';

export const datasetsListCommand: Command = {
  ...DATASETS_LIST,
  async run(positionals, _values, io) {
    needPositionals(positionals, 0, this.usage);
    const store = new DatasetStore(io.home, { warn: io.err });
    const rows = store.names().map((name) => {
      const latest = store.resolve(name);
      const manifest = store.manifest(latest);
      return { name, versions: store.versions(name), latest: latest.version, pipeline: manifest.pipeline, samples: manifest.counts.samples, createdAt: manifest.createdAt };
    });
    if (io.json) io.out(JSON.stringify({ datasets: rows }));
    else if (!rows.length) io.out(`no datasets yet in ${store.root} (toolkiln run <pipeline> publishes one)`);
    else io.out(formatTable(['name', 'versions', 'latest', 'pipeline', 'samples', 'created'], rows.map((r) => [r.name, r.versions.join(' '), r.latest, r.pipeline, String(r.samples), r.createdAt])));
    return 0;
  },
};

export const datasetsShowCommand: Command = {
  ...DATASETS_SHOW,
  async run(positionals, values, io) {
    needPositionals(positionals, 1, this.usage);
    const store = new DatasetStore(io.home, { warn: io.err });
    const ref = store.resolve(positionals[0]);
    const manifest = store.manifest(ref);
    if (values['compare-reference']) {
      const rows = compareWithReference(manifest.stats);
      if (!rows.length) throw new UserError(`${ref.name}@${ref.version} holds no statistics beside a released set (its recipe's statistics stage had no reference file); run the recipe with its referenceFile / referenceDir set`);
      // Beside the version, not in it: a published version is never edited.
      const file = join(store.derivedDir(ref, 'reports'), 'compare-reference.md');
      writeFileAtomic(file, `# ${ref.name}@${ref.version} beside the released benchmark\n\n${formatComparison(rows)}\n`);
      if (io.json) io.out(JSON.stringify({ dataset: `${ref.name}@${ref.version}`, rows, file }));
      else io.out(`${formatComparison(rows)}\n\nwritten to ${file}`);
      return 0;
    }
    if (io.json) {
      io.out(JSON.stringify({ ...manifest, path: ref.dir }));
      return 0;
    }
    const c = manifest.counts;
    io.out(
      [
        `${manifest.name}@${manifest.version}  (${ref.dir})`,
        `pipeline     ${manifest.pipeline}`,
        `parent       ${manifest.parent ?? '-'}`,
        `fingerprint  ${manifest.fingerprint}`,
        `created      ${manifest.createdAt}`,
        `models       ${manifest.models.join(', ')}`,
        `samples      ${c.samples}  (${Object.entries(c.bySplit).map(([s, n]) => `${s} ${n}`).join(', ')})`,
        `categories   ${Object.entries(c.byCategory).map(([s, n]) => `${s} ${n}`).join(', ')}`,
        `tools        ${c.tools}`,
        `rejects      ${c.rejects}`,
        `tokens       ${manifest.usage.total.promptTokens} in / ${manifest.usage.total.completionTokens} out, ${manifest.usage.total.requests} requests${manifest.usage.total.costUsd != null ? `, $${manifest.usage.total.costUsd.toFixed(4)}` : ''}`,
      ].join('\n'),
    );
    return 0;
  },
};

export const datasetsDiffCommand: Command = {
  ...DATASETS_DIFF,
  async run(positionals, values, io) {
    needPositionals(positionals, 2, this.usage);
    const store = new DatasetStore(io.home, { warn: io.err });
    const [a, b] = positionals.map((ref) => store.resolve(ref));
    // Sample ids hash what a sample derives from, so two datasets share few: a diff across them is
    // almost all added and removed, which is rarely what was meant.
    const across = a.name !== b.name;
    if (across && values.across !== true) {
      throw new UserError(`${a.name}@${a.version} and ${b.name}@${b.version} are different datasets; datasets diff compares versions of one dataset (add --across to compare them anyway)`);
    }
    const diff = store.diff(a, b);
    if (io.json) {
      io.out(JSON.stringify({ ...diff, across, counts: { added: diff.added.length, removed: diff.removed.length, changed: diff.changed.length, unchanged: diff.unchanged } }));
      return 0;
    }
    io.out(`${diff.a} → ${diff.b}${across ? ' (two different datasets)' : ''}: ${diff.added.length} added, ${diff.removed.length} removed, ${diff.changed.length} changed, ${diff.unchanged} unchanged`);
    const show = values.ids === true ? Infinity : 20;
    for (const [label, ids] of [['+', diff.added], ['-', diff.removed], ['~', diff.changed]] as const) {
      for (const id of ids.slice(0, show)) io.out(`${label} ${id}`);
      if (ids.length > show) io.out(`${label} … ${ids.length - show} more (--ids lists all)`);
    }
    return 0;
  },
};

export const datasetsVerifyCommand: Command = {
  ...DATASETS_VERIFY,
  async run(positionals, _values, io) {
    needPositionals(positionals, 1, this.usage);
    const store = new DatasetStore(io.home, { warn: io.err });
    const ref = store.resolve(positionals[0]);
    const files = Object.keys(store.manifest(ref).files).length;
    const problems = store.verify(ref);
    if (io.json) io.out(JSON.stringify({ dataset: `${ref.name}@${ref.version}`, path: ref.dir, files, ok: problems.length === 0, problems }));
    else if (!problems.length) io.out(`${ref.name}@${ref.version}: all ${files} files match the manifest`);
    else {
      for (const p of problems) io.out(`${p.problem.padEnd(8)}  ${join(ref.dir, p.file)}`);
      const unlisted = problems.filter((p) => p.problem === 'unlisted').length;
      const listed = problems.length - unlisted;
      const parts = [...(listed ? [`${listed} of ${files} files do not match the manifest`] : []), ...(unlisted ? [`${unlisted} file(s) the manifest does not list`] : [])];
      io.out(`${ref.name}@${ref.version}: ${parts.join(', ')}; restore the version from a copy or publish it again${unlisted ? ' (or remove the files it does not list)' : ''}`);
    }
    return problems.length ? 1 : 0;
  },
};
