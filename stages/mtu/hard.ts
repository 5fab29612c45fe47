import { Sample, sampleId } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import type { ScanStage } from '../../core/stage.ts';
import type { MtuConfig } from './config.ts';
import { libraryLoader } from './library.ts';
import { allCalls, assistantIndexes, categoryOf, expectedOf, literalText, mtuMeta, toolOf, turnCalls, userTurns, withMtuMeta } from './sample.ts';

/**
 * Categories and the hard set (MTU-Eval, Appendix D, Table 8). Every sample gets its setting
 * (S-S, S-M, M-S, M-M). Test samples meeting a hard rule are tagged `hard` and `hard:<rule>`:
 * - `extensive-parameters`: a call with more than `maxParameters` arguments;
 * - `choice-restricted-values`: an argument whose parameter only takes listed values (an enum) and
 *   that the user did not say verbatim, so the model must map their words to a choice;
 * - `many-tools`: a turn calling more than `maxToolsPerTurn` tools;
 * - `parameter-inheritance`: a value the current user message does not state, taken from earlier turns.
 * Two rules need a changed sample, so they make variants of test samples:
 * - `nonsensical-tool-name`: a called tool renamed to letters that mean nothing (as "eee");
 * - `no-suitable-tool`: a single-tool request whose tool list lacks the needed tool (answer: no call).
 */

export const HARD_RULES = ['extensive-parameters', 'choice-restricted-values', 'many-tools', 'parameter-inheritance', 'nonsensical-tool-name', 'no-suitable-tool'] as const;

const TRIVIAL = new Set(['dontcare', 'true', 'false', 'yes', 'no']);

/** The content-based hard rules a sample meets. */
export function hardRules(sample: Sample, options: Pick<MtuConfig['hard'], 'maxParameters' | 'maxToolsPerTurn'>): string[] {
  const rules = new Set<string>();
  const dialogue = sample.dialogue;
  const multiTurn = userTurns(sample) > 1;
  // Each turn's text written once; the texts of the turns before a call are joined only when a rule asks.
  const earlierText: string[] = [];
  const turnText = (i: number) => (earlierText[i] ??= `${dialogue[i].content}\n${dialogue[i].response ?? ''}\n${JSON.stringify(dialogue[i].observations ?? {})}`);
  const userLower: string[] = [];
  const lowerOf = (i: number) => (userLower[i] ??= dialogue[i].content.toLowerCase());
  for (const index of assistantIndexes(sample)) {
    const calls = turnCalls(sample, index);
    if (calls.length > options.maxToolsPerTurn) rules.add('many-tools');
    const current = dialogue[index - 1]?.role === 'user' ? lowerOf(index - 1) : '';
    let said: string | undefined;
    const saidText = () => {
      if (said === undefined) {
        const parts: string[] = [];
        for (let i = 0; i < index; i++) if (dialogue[i].role === 'user') parts.push(lowerOf(i));
        said = parts.join('\n');
      }
      return said;
    };
    let earlier: string | undefined;
    const earlierTexts = () => {
      if (earlier === undefined) {
        const parts: string[] = [];
        for (let i = 0; i < index - 1; i++) parts.push(turnText(i));
        earlier = parts.join('\n').toLowerCase();
      }
      return earlier;
    };
    for (const call of calls) {
      if (Object.keys(call.arguments).length > options.maxParameters) rules.add('extensive-parameters');
      const tool = toolOf(sample, call);
      for (const [name, value] of Object.entries(call.arguments)) {
        const text = literalText(value);
        if (text !== undefined && tool?.parameters.properties[name]?.enum?.length && !saidText().includes(text.toLowerCase())) rules.add('choice-restricted-values');
        const needle = text?.toLowerCase();
        if (multiTurn && needle && needle.length > 1 && !TRIVIAL.has(needle) && !current.includes(needle) && earlierTexts().includes(needle)) rules.add('parameter-inheritance');
      }
    }
  }
  return HARD_RULES.filter((r) => rules.has(r));
}

function tag(sample: Sample, rules: string[]): Sample {
  if (!rules.length) return sample;
  const tagged = withMtuMeta(sample, { hard: rules });
  return { ...tagged, meta: { ...tagged.meta, tags: [...new Set([...sample.meta.tags, 'hard', ...rules.map((r) => `hard:${r}`)])] } };
}

const LETTERS: readonly string[] = [...'abcdefghijklmnopqrstuvwxyz'];

function nonsenseName(rng: Rng, taken: Set<string>): string {
  for (;;) {
    const letter = () => rng.pick(LETTERS);
    const name = rng.chance(0.5) ? letter().repeat(3) : Array.from({ length: rng.int(3, 5) }, letter).join('');
    if (!taken.has(name)) return name;
  }
}

/**
 * The sample with one called tool renamed to a meaningless name everywhere it appears
 * (`meta.mtu.renamed` keeps the documented name, for the candidate list).
 */
export function withNonsensicalName(sample: Sample, rng: Rng): Sample {
  const target = rng.pick([...new Set(allCalls(sample).map((c) => c.tool))]);
  const name = nonsenseName(rng, new Set(sample.tools.map((t) => t.name)));
  const rename = (tool: string) => (tool === target ? name : tool);
  const dialogue = sample.dialogue.map((t) => (t.calls ? { ...t, calls: t.calls.map((c) => ({ ...c, tool: rename(c.tool) })) } : t));
  return {
    ...sample,
    id: sampleId('mtu', { variant: 'nonsensical-tool-name', of: sample.id }),
    tools: sample.tools.map((t) => (t.name === target ? { ...t, name } : t)),
    dialogue,
    expected: { ...sample.expected, ...expectedOf(dialogue) },
    meta: withMtuMeta(sample, { variantOf: sample.id, renamed: { [name]: target } }).meta,
  };
}

/**
 * A single-tool request whose tool list lacks the tool it needs: the gold answer is no call
 * (`meta.mtu.withheld` names the tools the candidate list must leave out).
 */
export function withoutSuitableTool(sample: Sample): Sample {
  const gold = [...new Set(allCalls(sample).map((c) => c.tool))];
  const dialogue = sample.dialogue.map((turn, i) => {
    if (turn.role !== 'assistant' || !turnCalls(sample, i).length) return turn;
    const { calls: _calls, observations: _observations, ...rest } = turn;
    return {
      ...rest,
      thought: 'The user needs an API for this request, but none of the available APIs provides it, so no call can be made.',
      response: "I'm sorry, I can't do that with the tools I have.",
    };
  });
  return {
    ...sample,
    id: sampleId('mtu', { variant: 'no-suitable-tool', of: sample.id }),
    tools: sample.tools.filter((t) => !gold.includes(t.name)),
    dialogue,
    expected: expectedOf(dialogue),
    meta: withMtuMeta(sample, { variantOf: sample.id, withheld: gold }).meta,
  };
}

export function hardSetStage(options: MtuConfig['hard']): ScanStage<Sample, Sample, HardSetState> {
  const library = libraryLoader();
  return {
    kind: 'scan',
    name: 'categorize-hard',
    version: 1,
    fanOut: true,
    input: Sample,
    output: Sample,
    // The documented library comes from the run folder: nothing is gathered from the samples first.
    begin: (ctx) => ({ full: library(ctx.runDir), hard: 0, byRule: {} }),
    run: (sample, ctx) => {
      const out: Sample[] = [];
      const categorized = { ...sample, category: categoryOf(sample) };
      if (sample.split !== 'test') return [categorized];
      const rules = hardRules(ctx.state.full.full(categorized), options);
      out.push(tag(categorized, rules));
      const rng = ctx.rng(); // keyed by the sample's id
      if (rng.chance(options.nonsensicalNameRate)) {
        out.push(tag(withNonsensicalName(categorized, rng), [...rules, 'nonsensical-tool-name']));
      }
      if (categorized.category === 'S-S' && allCalls(categorized).length === 1 && rng.chance(options.noSuitableToolRate)) {
        const variant = withoutSuitableTool(categorized);
        out.push(tag({ ...variant, category: categoryOf(variant) }, ['no-suitable-tool']));
      }
      for (const s of out) {
        if (!s.meta.tags.includes('hard')) continue;
        ctx.state.hard++;
        for (const rule of mtuMeta(s).hard ?? []) ctx.state.byRule[rule] = (ctx.state.byRule[rule] ?? 0) + 1;
      }
      return out;
    },
    finish: (state, ctx) => {
      ctx.report('hardSet', { samples: state.hard, byRule: Object.fromEntries(HARD_RULES.map((r) => [r, state.byRule[r] ?? 0])) });
    },
  };
}

interface HardSetState {
  full: ReturnType<ReturnType<typeof libraryLoader>>;
  hard: number;
  byRule: Record<string, number>;
}
