import { sourceStage, type SourceStage } from '../../core/stage.ts';
import { toolSourceFiles } from '../../core/tool-source.ts';
import { atisTopic, eachAtisUtterance } from '../sources/atis.ts';
import { SourceDialogue, utteranceDialogue } from '../sources/dialogue.ts';
import { parseGenericDialogues } from '../sources/generic-dialogue.ts';
import { eachMultiwozDialogue } from '../sources/multiwoz.ts';
import { eachSgdDialogue } from '../sources/sgd.ts';
import { eachSnipsUtterance, snipsTopic } from '../sources/snips.ts';
import type { MtuConfig } from './config.ts';

/** Files and folders a config reads (hashed into the dataset fingerprint), the export's instruction templates among them. */
export function mtuSourceFiles(config: MtuConfig): string[] {
  const { snips, atis, sgd, multiwoz, generic } = config.sources;
  // An imported library takes the place of the dialogue datasets.
  if (config.tools) return [...toolSourceFiles(config.tools), ...(config.export.instructions ? [config.export.instructions] : [])];
  return [
    ...(snips.enabled ? [snips.dir] : []),
    ...(atis.enabled ? [atis.dir] : []),
    ...(sgd.enabled ? [sgd.dir] : []),
    ...(multiwoz.enabled ? [multiwoz.dir, ...(multiwoz.dialogues ? [multiwoz.dialogues] : [])] : []),
    ...generic.map((g) => g.file),
    ...(config.export.instructions ? [config.export.instructions] : []),
  ];
}

/** Reads every configured source into dialogues (step 1 of the paper: data collection), one source file at a time. */
export function* loadMtuSources(config: MtuConfig, resolvePath: (p: string) => string): Generator<SourceDialogue> {
  const { snips, atis, sgd, multiwoz, generic } = config.sources;
  if (snips.enabled) for (const u of eachSnipsUtterance(snips, resolvePath)) yield utteranceDialogue(u, u.intents.map(snipsTopic));
  if (atis.enabled) for (const u of eachAtisUtterance(atis, resolvePath)) yield utteranceDialogue(u, [...new Set(u.intents.map(atisTopic))]);
  if (sgd.enabled) yield* eachSgdDialogue(sgd, resolvePath);
  if (multiwoz.enabled) yield* eachMultiwozDialogue(multiwoz, resolvePath);
  for (const source of generic) yield* parseGenericDialogues(resolvePath(source.file), source);
}

export function loadSourcesStage(config: MtuConfig): SourceStage<SourceDialogue> {
  return sourceStage({ name: 'load-sources', version: 1, output: SourceDialogue, load: (ctx) => loadMtuSources(config, ctx.resolvePath) });
}
