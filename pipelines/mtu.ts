import { z } from 'zod';
import { definePipeline } from '../core/pipeline.ts';
import { commonExporters } from '../stages/export/index.ts';
import { grammarToolCallStage } from '../stages/mtu/grammar-tools.ts';
import { toolLibraryStage } from '../stages/mtu/tool-library.ts';
import { loadSnipsStage } from '../stages/sources/snips.ts';

const DATA = '../shared/data/sources';

export const MtuConfig = z.object({
  sources: z
    .object({
      snips: z.object({ dir: z.string().default(`${DATA}/snips`), splits: z.array(z.enum(['train', 'validate'])).default(['train', 'validate']) }).default({ dir: `${DATA}/snips`, splits: ['train', 'validate'] }),
    })
    .strict()
    .default({ snips: { dir: `${DATA}/snips`, splits: ['train', 'validate'] } }),
});
export type MtuConfig = z.infer<typeof MtuConfig>;

/**
 * MTU-Bench (Wang et al.): task-oriented dialogue datasets turned into tool-use samples.
 * 1. Load annotated utterances (SNIPS intents and slots).
 * 2. Grammar-based tool creation: intent → tool, slots → parameters, values → arguments.
 * 3. Each source's tool library, offered to every sample as its candidate list.
 */
export const mtuPipeline = definePipeline<MtuConfig>({
  name: 'mtu',
  benchmark: 'mtu',
  description: 'MTU-Bench: dialogue datasets → grammar-based tool calls → tool-use samples',
  configSchema: MtuConfig,
  sourceFiles: (config) => [config.sources.snips.dir],
  stages: (config) => [loadSnipsStage(config.sources.snips), grammarToolCallStage(), toolLibraryStage()],
  exports: { ...commonExporters },
});
