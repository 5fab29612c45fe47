import { Sample, isRef, parseRef, type Check, type ToolSpec } from '../../core/records.ts';
import type { MapStage } from '../../core/stage.ts';
import { pythonTypeOfJson, typesCompatible } from '../../prompts/nestools-python-types.ts';
import { fieldMatch } from './edge-match.ts';
import { taskOf } from './import-export.ts';
import { leaves } from './notation.ts';
import { valueMentions } from './query-values.ts';
import { apiNamesIn } from './refine-query.ts';
import { withChecks, withMeta, withTags } from '../../core/sample-edits.ts';
import { chainStructure } from './structure.ts';

/**
 * §3.3 manual review, prepared: tags what an annotator should look at. Nested arguments are traced
 * to their producer (is it the right return value?), literal arguments that an earlier call could
 * have supplied are flagged, and values the task does not state plainly are listed.
 */

export interface ReviewNotes {
  tags: string[];
  checks: Check[];
  /** One line per thing to look at, in call order. */
  focus: string[];
  nesting: { depth: number; kind: string; shape: string; nestedArgs: number; args: number };
}

const WEAK_LINK = 0.5;

function typeOf(tool: ToolSpec | undefined, where: 'parameters' | 'returns', name: string): string {
  const type = tool?.[where].properties[name]?.type;
  return pythonTypeOfJson((Array.isArray(type) ? type[0] : type) ?? 'any');
}

function describe(tool: ToolSpec | undefined, where: 'parameters' | 'returns', name: string): { name: string; description: string } {
  return { name, description: tool?.[where].properties[name]?.description ?? '' };
}

export function reviewNotes(sample: Sample): ReviewNotes {
  const calls = sample.expected.calls ?? [];
  const tools = new Map(sample.tools.map((tool) => [tool.name, tool]));
  const position = new Map(calls.map((call, i) => [call.id, i]));
  const structure = chainStructure(calls);
  const tags = new Set<string>([`structure:${structure.kind}`, `depth:${structure.depth}`]);
  const checks: Check[] = [];
  const focus: string[] = [];
  const weak: string[] = [];
  const mismatched: string[] = [];
  const maybeNested: string[] = [];

  calls.forEach((call, i) => {
    const consumer = tools.get(call.tool);
    for (const [param, value] of Object.entries(call.arguments)) {
      const refs = leaves(value).filter(isRef);
      for (const ref of refs) {
        const { callId, field } = parseRef(ref);
        const from = position.get(callId) ?? -1;
        const producer = tools.get(calls[from]?.tool ?? '');
        const score = fieldMatch(describe(producer, 'returns', field), describe(consumer, 'parameters', param));
        const line = `call ${i + 1} ${call.tool}.${param} ← call ${from + 1} ${calls[from]?.tool}.${field} (match ${score.toFixed(2)})`;
        focus.push(line);
        if (score < WEAK_LINK) weak.push(line);
        const produced = typeOf(producer, 'returns', field);
        const consumed = typeOf(consumer, 'parameters', param);
        if (!Array.isArray(value) && !typesCompatible(produced, consumed)) mismatched.push(`${line}: ${produced} → ${consumed}`);
      }
      if (refs.length) continue;
      // A literal where an earlier call returns a field of the same name and type: nested by mistake?
      for (const earlier of calls.slice(0, i)) {
        const producer = tools.get(earlier.tool);
        for (const field of Object.keys(producer?.returns.properties ?? {})) {
          if (fieldMatch({ name: field, description: '' }, { name: param, description: '' }) === 1 && typesCompatible(typeOf(producer, 'returns', field), typeOf(consumer, 'parameters', param))) {
            maybeNested.push(`call ${i + 1} ${call.tool}.${param} is given ${JSON.stringify(value)}, but call ${position.get(earlier.id)! + 1} ${earlier.tool} returns ${field}`);
          }
        }
      }
    }
  });

  const task = taskOf(sample);
  const mentions = valueMentions(task, calls);
  const unclear = mentions.filter((m) => m.presence === 'loose' || m.presence === 'missing');
  const complex = mentions.filter((m) => m.value !== null && typeof m.value === 'object');
  const leaked = apiNamesIn(task, sample.tools);

  const flag = (tag: string, name: string, items: string[], what: string) => {
    if (!items.length) return;
    tags.add(tag);
    checks.push({ name, pass: false, soft: true, reason: `${what}: ${items.join('; ')}` });
    focus.push(...items.map((item) => `${what}: ${item}`));
  };
  if (structure.nestedArgs) tags.add('review:nested-params');
  flag('review:weak-nested-link', 'nestools/nested-link-match', weak, 'producer and parameter share little');
  flag('review:type-mismatch', 'nestools/nested-link-type', mismatched, 'type differs');
  flag('review:maybe-nested', 'nestools/maybe-nested', maybeNested, 'literal where an earlier result fits');
  flag('review:values-in-query', 'nestools/values-stated', unclear.map((m) => `${m.param} ${JSON.stringify(m.value)} (${m.presence})`), 'value not stated plainly');
  flag('review:complex-values', 'nestools/complex-values', complex.map((m) => `${m.param} ${JSON.stringify(m.value)}`), 'list or dict value');
  flag('review:api-name-in-query', 'nestools/api-name-free', leaked, 'API name in the task');
  return {
    tags: [...tags].sort(),
    checks,
    focus,
    nesting: { depth: structure.depth, kind: structure.kind, shape: structure.shape, nestedArgs: structure.nestedArgs, args: structure.args },
  };
}

export function tagForReviewStage(): MapStage<Sample, Sample> {
  return {
    kind: 'map',
    name: 'tag-for-review',
    version: 1,
    input: Sample,
    output: Sample,
    run: async (sample) => {
      const notes = reviewNotes(sample);
      return withMeta(withChecks(withTags(sample, notes.tags), notes.checks), { nesting: notes.nesting, reviewFocus: notes.focus });
    },
  };
}
