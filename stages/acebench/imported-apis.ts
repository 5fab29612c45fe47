import { sourceStage, type SourceStage } from '../../core/stage.ts';
import type { ToolsConfig } from '../../core/tool-source.ts';
import { importedToolRecords } from '../sources/imported-tools.ts';
import type { AceLanguage } from './record.ts';
import { ApiRecord, inReleasedOrder } from './api-pool.ts';

/**
 * An imported tool library as ACEBench's API pool, in place of the context tree and synthesis: each
 * tool an API of the run's language, its place in the tree its domain (TOUCAN: the Smithery label),
 * its server and its name, its result schema as `returns`. The pool's gate (`checkApisStage`) then
 * holds imported tools to the rules synthesised ones meet (every parameter typed and described).
 */
export function importedApisStage(options: { tools: ToolsConfig; language: AceLanguage }): SourceStage<ApiRecord> {
  return sourceStage({
    name: 'load-imported-apis',
    version: 1,
    output: ApiRecord,
    load: (ctx) =>
      importedToolRecords(options.tools, ctx, (tool) => {
        const server = String(tool.provenance?.server ?? tool.plugin ?? 'tools');
        return {
          name: tool.name,
          language: options.language,
          path: { domain: (tool.domain ?? server).split('/')[0] || server, subdomain: server, functionality: String(tool.provenance?.originalName ?? tool.name) },
          function: inReleasedOrder({ name: tool.name, description: tool.description, parameters: tool.parameters as never }),
          returns: tool.returns as never,
          origin: 'imported' as const,
        };
      }),
  });
}
