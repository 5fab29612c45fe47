import { Sample, sampleId } from '../../core/records.ts';
import { mapStage, reject, type LineageEntry, type MapStage } from '../../core/stage.ts';
import { mtuToolNamePrompt } from '../../prompts/mtu-tool-name.ts';
import { mtuToolParametersPrompt } from '../../prompts/mtu-tool-parameters.ts';
import { SourceDialogue } from '../sources/dialogue.ts';
import { multiwozTopic } from '../sources/multiwoz.ts';
import { sgdTopic } from '../sources/sgd.ts';
import { schemaDialogueTurns, utteranceTurns, type CreatedTurns } from './grammar-tools.ts';
import { llmDialogueTurns } from './llm-tools.ts';
import { categoryOf, expectedOf, type MtuMeta } from './sample.ts';

/** Topic of a schema service, by source (SGD `Restaurants_1` → `Restaurants`, MultiWOZ `hotel` → `Hotels`). */
function topicFunction(dialogue: SourceDialogue): (service: string) => string {
  if (dialogue.source === 'sgd') return sgdTopic;
  if (dialogue.source === 'multiwoz') return multiwozTopic;
  return () => dialogue.domains[0] ?? dialogue.source;
}

/** The first intent the dialogue uses (as its source names it) that the exclusion list holds; turn by turn, a turn's intents, then its service calls' methods, then its frames' intents. */
function excludedIntentOf(dialogue: SourceDialogue, excluded: ReadonlySet<string>): string | undefined {
  if (!excluded.size) return undefined;
  for (const turn of dialogue.turns) {
    for (const intent of turn.intents ?? []) if (excluded.has(intent)) return intent;
    for (const call of turn.serviceCalls ?? []) if (excluded.has(call.method)) return call.method;
    for (const frame of turn.frames ?? []) if (excluded.has(frame.intent)) return frame.intent;
  }
  return undefined;
}

export interface CreateToolsOptions {
  excludeIntents: string[];
}

/**
 * Step 2 of the paper, tool creation: grammar-based for annotated sources (SNIPS, ATIS intents and
 * slots; SGD and MultiWOZ schemas with their service calls or dialogue states), LLM-based for
 * plain dialogues. Emits one sample per dialogue, carrying the tools it uses (documented later);
 * a dialogue in which no turn calls a tool is rejected.
 */
export function createToolsStage(options: CreateToolsOptions): MapStage<SourceDialogue, Sample> {
  const excluded = new Set(options.excludeIntents);
  return mapStage({
    name: 'create-tools',
    version: 1,
    input: SourceDialogue,
    output: Sample,
    prompts: [mtuToolNamePrompt, mtuToolParametersPrompt],
    keyOf: (d) => `${d.source}/${d.id}`,
    run: async (dialogue, ctx) => {
      const unsuitable = excludedIntentOf(dialogue, excluded);
      if (unsuitable) return reject('excluded_intent', `intent ${unsuitable} is listed in excludeIntents`);

      let created: CreatedTurns;
      // The LLM's calls name the answer that wrote them; grammar-made ones the stage alone.
      let lineage: LineageEntry = ctx.lineage();
      if (dialogue.turns.some((t) => t.intents?.length)) created = utteranceTurns(dialogue);
      else if (dialogue.schema.length) created = schemaDialogueTurns(dialogue, topicFunction(dialogue));
      else {
        const { lineage: answered, ...turns } = await llmDialogueTurns(dialogue, ctx);
        created = turns;
        if (answered) lineage = answered;
      }
      if (!created.dialogue.some((t) => t.calls?.length)) return reject('no_tool_call', 'no turn of the dialogue calls a tool');

      const expected = expectedOf(created.dialogue);
      const mtu: MtuMeta = {
        services: dialogue.services,
        domains: dialogue.domains,
        sourceSplit: dialogue.split,
        situations: created.situations,
        ...(dialogue.database ? { database: dialogue.database } : {}),
      };
      return {
        id: sampleId('mtu', { source: dialogue.source, split: dialogue.split, id: dialogue.id }),
        benchmark: 'mtu',
        category: categoryOf({ dialogue: created.dialogue, expected }),
        split: dialogue.split,
        tools: created.tools,
        dialogue: created.dialogue,
        expected,
        meta: {
          source: { dataset: dialogue.source, id: dialogue.id, file: dialogue.file },
          lineage: [lineage],
          checks: [],
          tags: [],
          mtu,
        },
      };
    },
  });
}
