import { join } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { writeFolderAtomic } from '../../core/folders.ts';
import { DatasetStore } from '../../core/store.ts';
import { loadRecipe } from '../../pipelines/catalog.ts';
import { hfDatasetName } from '../../stages/export/hf-card.ts';
import type { Command } from '../command.ts';
import { needPositionals, stringFlag } from '../flags.ts';
import { outputFolder } from '../output-paths.ts';
import { EXPORT } from '../command-specs.ts';

export const exportCommand: Command = {
  ...EXPORT,
  async run(positionals, values, io) {
    needPositionals(positionals, 1, this.usage);
    const out = stringFlag(values, 'out');
    const outFolder = out === undefined ? undefined : outputFolder(out, '--out', io);
    const store = new DatasetStore(io.home, { warn: io.err });
    const ref = store.resolve(positionals[0]);
    const manifest = store.manifest(ref);
    const formats = (await loadRecipe(manifest.pipeline)).exports;
    const format = stringFlag(values, 'format');
    if (!format) throw new UserError(`--format is required: one of ${Object.keys(formats).join(', ')}`);
    const exporter = formats[format];
    if (!exporter) throw new UserError(`${ref.name}@${ref.version} (${manifest.pipeline}) cannot be exported as "${format}": choose one of ${Object.keys(formats).join(', ')}`);
    // Only the OpenAI chat format (its x-toolkiln fields) and ACEBench's (agent records over toolkiln's classes) have extensions to keep or drop.
    const keepExtensions = values['keep-extensions'] === true;
    if (keepExtensions && format !== 'openai-chat' && format !== 'acebench') throw new UserError(`--keep-extensions applies to --format openai-chat (its x-toolkiln fields) and acebench (agent records over toolkiln's own classes) only; drop it for "${format}"`);
    const oneCallPerMessage = values['one-call-per-message'] === true;
    if (oneCallPerMessage && format !== 'trl') throw new UserError(`--one-call-per-message applies to --format trl only; drop it for "${format}"`);
    store.assertIntact(ref);
    // Whole or not at all: a failure part way (a full disk) leaves no half export. The default
    // folder is toolkiln's and is replaced whole; a folder given with --out only gets the new files.
    // An hf folder is named after the dataset and version: `datasets` keys its cache on the folder's name.
    const outDir = outFolder ?? join(store.derivedDir(ref, 'export'), format, ...(format === 'hf' ? [hfDatasetName(ref)] : []));
    const written = await writeFolderAtomic(outDir, (dir) => exporter(store.sampleSource(ref), store.tools(ref), dir, ref, { keepExtensions, oneCallPerMessage, notice: io.err }), { replace: outFolder === undefined });
    const files = written.value.map(written.final);
    if (io.json) io.out(JSON.stringify({ dataset: `${ref.name}@${ref.version}`, format, files }));
    else io.out(`wrote ${files.length} file(s) for ${ref.name}@${ref.version} as ${format}:\n${files.map((f) => `  ${f}`).join('\n')}`);
    return 0;
  },
};
