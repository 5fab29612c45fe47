import { Sample, sampleId, type Call, type ToolSpec } from '../../core/records.ts';
import { reject, type MapStage } from '../../core/stage.ts';
import { AnnotatedUtterance } from '../sources/utterance.ts';
import { parameterNameOfSlot, toolNameOfIntent } from './names.ts';

/**
 * Grammar-based tool creation (MTU-Bench §2.1): an intent becomes a tool, its slots become the
 * tool's parameters and the slot values the call's arguments. One intent gives a single-turn
 * single-tool sample (S-S); several intents (ATIS `a#b`) a single-turn multi-tool one (S-M).
 * The sample's candidate tool list is filled in later, once every tool of the source is known.
 */
export function grammarToolCallStage(options: { intentPrefix?: Record<string, string> } = {}): MapStage<AnnotatedUtterance, Sample> {
  return {
    kind: 'map',
    name: 'grammar-tool-calls',
    version: 1,
    input: AnnotatedUtterance,
    output: Sample,
    keyOf: (u) => `${u.source}/${u.id}`,
    run: async (utterance) => {
      const prefix = options.intentPrefix?.[utterance.source];
      const tools = utterance.intents.map((intent) => toolNameOfIntent(intent, prefix));
      if (tools.some((t) => !t)) return reject('empty_tool_name', `intent(s) ${utterance.intents.join('#')} give no tool name`);

      const args: Record<string, string> = {};
      for (const slot of utterance.slots) {
        const name = parameterNameOfSlot(slot.name);
        // A slot repeated in one utterance (e.g. two cities) keeps every value, joined in order.
        args[name] = name in args ? `${args[name]}, ${slot.value}` : slot.value;
      }
      // With several intents the slots cannot be told apart by grammar alone: each call gets them all.
      const calls: Call[] = tools.map((tool, i) => ({ id: `call_${i}`, tool, arguments: { ...args } }));
      const specs: ToolSpec[] = tools.map((tool) => ({
        name: tool,
        description: '',
        parameters: { type: 'object', properties: Object.fromEntries(Object.keys(args).map((a) => [a, { type: 'string' }])), required: [] },
        returns: { type: 'object', properties: {}, required: [] },
        domain: utterance.source,
        provenance: { source: utterance.source, id: utterance.intents.join('#') },
      }));
      return {
        id: sampleId('mtu', { source: utterance.source, id: utterance.id }),
        benchmark: 'mtu',
        category: tools.length > 1 ? 'S-M' : 'S-S',
        split: utterance.split,
        tools: specs,
        dialogue: [
          { role: 'user', content: utterance.text },
          { role: 'assistant', content: '', calls },
        ],
        expected: { calls },
        meta: {
          source: { dataset: utterance.source, id: utterance.id, file: utterance.file },
          lineage: [{ stage: 'grammar-tool-calls', version: 1 }],
          checks: [],
          tags: [],
        },
      };
    },
  };
}
