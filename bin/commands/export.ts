import { UserError } from '../../core/errors.ts';
import { DatasetStore } from '../../core/store.ts';
import { exportFormats } from '../../pipelines/index.ts';
import { hfDatasetName } from '../../stages/export/hf-card.ts';
import type { Command } from '../command.ts';
import { needPositionals, stringFlag } from '../flags.ts';
import { outputFolder } from '../output-paths.ts';

export const exportCommand: Command = {
  path: ['export'],
  usage: 'toolkiln export <name>@v --format <format> [--out dir] [--keep-extensions] [--json]',
  summary: "write a version in a benchmark's native format (default folder: datasets/<name>/<v>.derived/export/<format>/, for hf …/export/hf/<name>-<v>/)",
  options: { format: { type: 'string' }, out: { type: 'string' }, 'keep-extensions': { type: 'boolean' } },
  async run(positionals, values, io) {
    needPositionals(positionals, 1, this.usage);
    const out = stringFlag(values, 'out');
    const outFolder = out === undefined ? undefined : outputFolder(out, '--out', io);
    const store = new DatasetStore(io.home, { warn: io.err });
    const ref = store.resolve(positionals[0]);
    const manifest = store.manifest(ref);
    const formats = exportFormats(manifest.pipeline);
    const format = stringFlag(values, 'format');
    if (!format) throw new UserError(`--format is required: one of ${Object.keys(formats).join(', ')}`);
    const exporter = formats[format];
    if (!exporter) throw new UserError(`${ref.name}@${ref.version} (${manifest.pipeline}) cannot be exported as "${format}": choose one of ${Object.keys(formats).join(', ')}`);
    // Only the OpenAI chat format has toolkiln fields to keep or drop.
    const keepExtensions = values['keep-extensions'] === true;
    if (keepExtensions && format !== 'openai-chat') throw new UserError(`--keep-extensions applies to --format openai-chat only (its x-toolkiln fields); drop it for "${format}"`);
    store.assertIntact(ref);
    // An hf folder is named after the dataset and version: `datasets` keys its cache on the folder's name.
    const outDir = outFolder ?? store.derivedDir(ref, 'export', format, ...(format === 'hf' ? [hfDatasetName(ref)] : []));
    const files = await exporter(store.sampleSource(ref), store.tools(ref), outDir, ref, { keepExtensions });
    if (io.json) io.out(JSON.stringify({ dataset: `${ref.name}@${ref.version}`, format, files }));
    else io.out(`wrote ${files.length} file(s) for ${ref.name}@${ref.version} as ${format}:\n${files.map((f) => `  ${f}`).join('\n')}`);
    return 0;
  },
};
