import { z } from 'zod';
import { describeFinding, SampleInvariants } from '../../core/invariants.ts';
import { Sample, sampleId, ToolSpec, type ArgValue, type Call, type Json, type PropertySchema, type Turn } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import { mapStage, reject, scanStage, sourceStage, type MapStage, type ScanStage, type SourceStage, type StageContext } from '../../core/stage.ts';
import type { ToolsConfig } from '../../core/tool-source.ts';
import { mtuImportedDialoguePrompt, planText, type ImportedDialogueAnswer, type PlannedRound } from '../../prompts/mtu-imported-dialogue.ts';
import type { Situation } from '../../prompts/mtu-situation.ts';
import { mtuToolDocPrompt } from '../../prompts/mtu-tool-doc.ts';
import { importedToolRecords } from '../sources/imported-tools.ts';
import { SETTINGS, type ImportedDialogues, type Setting } from './config.ts';
import { libraryLoader, ToolLibrary, toolReference } from './library.ts';
import { assistantIndexes, categoryOf, expectedOf, toolKey, turnCalls, type MtuMeta } from './sample.ts';
import { applyProse } from './tool-docs.ts';

/**
 * MTU over an imported tool library (the `tools` block): the tools come documented, no dialogue
 * comes with them, so the dialogues are synthesised for them (in place of SNIPS / ATIS / SGD
 * conversion). Per tool and setting the planner draws a dialogue's shape — S-S one call; M-S a
 * request missing a required value, the assistant asking for it, then the call (or a closing
 * round when nothing is required); S-M two tools of one server in one turn, a parameter taking
 * the first call's result field of the same name and type (`Tool.field`); M-M the two in a round
 * after the assistant asked for a value — and the model writes the messages and arguments, which
 * are checked against the tools' schemas with the shared invariants. Then the recipe's own steps
 * go on: splits, composition, observations (executed on a live server, else simulated), ReAct
 * thoughts and replies, quality filters, the hard set, candidate lists.
 */

/** A tool as MTU documents it: a tool that declares no result fields (MCP text content) returns its text as `result`. */
export function mtuImportedToolView(tool: ToolSpec): ToolSpec {
  if (Object.keys(tool.returns.properties).length) return tool;
  return { ...tool, returns: { type: 'object', properties: { result: { type: 'string', description: `the text ${tool.name} answers` } }, required: ['result'] } };
}

export function importedToolsStage(tools: ToolsConfig): SourceStage<ToolSpec> {
  return sourceStage({ name: 'load-imported-tools', version: 1, output: ToolSpec, load: (ctx) => importedToolRecords(tools, ctx, mtuImportedToolView) });
}

const ToolRef = z.object({ name: z.string(), plugin: z.string().optional() });

/** The shape of one dialogue to write: its tools in call order, its rounds (tool indexes), the result links. */
export const DialogueRequest = z.object({
  id: z.string(),
  setting: z.enum(SETTINGS),
  tools: z.array(ToolRef).min(1),
  rounds: z.array(z.object({ calls: z.array(z.number().int().min(0)), ask: z.string().optional(), chat: z.boolean().optional() })).min(1),
  /** Parameter `parameter` of tool `to` takes field `field` of the result of tool `from` (an earlier call of the same round). */
  links: z.array(z.object({ to: z.number().int(), parameter: z.string(), from: z.number().int(), field: z.string() })),
  sourceSplit: z.enum(['train', 'test']),
  services: z.array(z.string()),
  domains: z.array(z.string()),
});
export type DialogueRequest = z.infer<typeof DialogueRequest>;

type Link = DialogueRequest['links'][number];

const folded = (name: string) => name.toLowerCase().replace(/[_-]/g, '');
const typeOf = (property: PropertySchema | undefined) => (Array.isArray(property?.type) ? property.type.find((t) => t !== 'null') : property?.type);

/** Parameters of `b` a result field of `a` can give: same name (case, `_` and `-` aside) and the same scalar type. */
export function resultLinks(a: ToolSpec, b: ToolSpec): { parameter: string; field: string }[] {
  const fields = Object.entries(a.returns.properties).filter(([, p]) => ['string', 'integer', 'number'].includes(String(typeOf(p))));
  return Object.entries(b.parameters.properties).flatMap(([parameter, property]) => {
    const field = fields.find(([name, p]) => folded(name) === folded(parameter) && typeOf(p) === typeOf(property) && !property.enum);
    return field ? [{ parameter, field: field[0] }] : [];
  });
}

const topDomain = (tool: ToolSpec) => (tool.domain ?? tool.plugin ?? 'tools').split('/')[0];

/** A second tool for `tool`: of its server, else of its top-level domain, else any; one a result links with first. */
function partnerOf(tool: ToolSpec, library: ToolSpec[], rng: Rng): ToolSpec | undefined {
  const others = library.filter((t) => t.name !== tool.name);
  const pool = [(t: ToolSpec) => t.plugin === tool.plugin, (t: ToolSpec) => topDomain(t) === topDomain(tool), () => true].map((keep) => others.filter(keep)).find((p) => p.length);
  if (!pool) return undefined;
  const linked = pool.filter((t) => resultLinks(tool, t).length || resultLinks(t, tool).length);
  return rng.pick(linked.length ? linked : pool);
}

/** The rounds of a setting over tools `0..n-1`: with `ask`, a required value the first round leaves out (asked for, then given). */
function roundsOf(setting: Setting, count: number, ask: string | undefined): DialogueRequest['rounds'] {
  const calls = Array.from({ length: count }, (_, i) => i);
  if (setting === 'S-S' || setting === 'S-M') return [{ calls }];
  return ask ? [{ calls, ask }, { calls }] : [{ calls }, { calls: [], chat: true }];
}

/** The dialogue requests of one tool: `perTool[setting]` of each setting, multi-tool ones with a partner tool. */
export function planRequests(tool: ToolSpec, library: ToolSpec[], options: { perTool: ImportedDialogues['perTool']; testFraction: number }, rng: (...keys: (string | number)[]) => Rng): DialogueRequest[] {
  const requests: DialogueRequest[] = [];
  for (const setting of SETTINGS) {
    for (let n = 0; n < options.perTool[setting]; n++) {
      const draw = rng(setting, n);
      let tools = [tool];
      let links: Link[] = [];
      if (setting.endsWith('-M')) {
        const partner = partnerOf(tool, library, draw);
        if (!partner) continue;
        // The partner goes first when its result gives one of this tool's parameters.
        tools = resultLinks(partner, tool).length ? [partner, tool] : [tool, partner];
        links = resultLinks(tools[0], tools[1]).map((link) => ({ to: 1, from: 0, ...link }));
      }
      const askable = tools.flatMap((t, i) => t.parameters.required.filter((p) => !links.some((l) => l.to === i && l.parameter === p)));
      const ask = setting.startsWith('M-') && askable.length ? draw.pick(askable) : undefined;
      const id = sampleId('mtu-request', { lead: toolKey(tool), tools: tools.map(toolKey), setting, n });
      requests.push({
        id,
        setting,
        tools: tools.map((t) => ({ name: t.name, ...(t.plugin ? { plugin: t.plugin } : {}) })),
        rounds: roundsOf(setting, tools.length, ask),
        links,
        sourceSplit: draw.chance(options.testFraction) ? 'test' : 'train',
        services: [...new Set(tools.map((t) => t.plugin ?? ''))],
        domains: [...new Set(tools.map(topDomain))],
      });
    }
  }
  return requests;
}

function needsProse(tool: ToolSpec): boolean {
  return !tool.description.trim() || Object.values(tool.parameters.properties).some((p) => !p.description);
}

interface Plan {
  library: ToolSpec[];
  failed: Map<string, string>;
}

/**
 * The library documented and saved for the recipe's later stages (the LLM writes a description
 * where the source gave none, and any missing parameter description: paper step 4, its prose
 * part), then each tool's dialogue requests.
 */
export function planImportedDialoguesStage(options: { perTool: ImportedDialogues['perTool']; testFraction: number }): ScanStage<ToolSpec, DialogueRequest, Plan> {
  return scanStage<ToolSpec, DialogueRequest, Plan>({
    name: 'plan-imported-dialogues',
    version: 1,
    fanOut: true,
    input: ToolSpec,
    output: DialogueRequest,
    prompts: [mtuToolDocPrompt],
    keyOf: (tool) => toolKey(tool),
    collect: async (tools, ctx) => {
      const failed = new Map<string, string>();
      let prosed = 0;
      const library = await Promise.all(
        [...tools].map(async (tool) => {
          if (!needsProse(tool)) return tool;
          const parameters = Object.entries(tool.parameters.properties).map(([name, p]) => ({ name, type: p.type, format: p.format, enum: p.enum, examples: [] }));
          const answer = await ctx.tryAsk(mtuToolDocPrompt, { name: tool.name, known: tool.description, parameters, returns: [], proposeReturns: false }, { key: `tool/${toolKey(tool)}` });
          if (!answer.ok) {
            failed.set(toolKey(tool), `${answer.reason}: ${answer.detail}`);
            return tool;
          }
          prosed++;
          return applyProse(tool, answer.value, true);
        }),
      );
      ToolLibrary.of(library).save(ctx.runDir);
      ctx.report('importedDocumentation', { tools: library.length, proseWrittenByLlm: prosed, failed: failed.size });
      return { library, failed };
    },
    run: (tool, ctx) => {
      const failure = ctx.state.failed.get(toolKey(tool));
      if (failure) return reject('documentation_failed', `documenting ${toolKey(tool)}: ${failure}`);
      const documented = ctx.state.library.find((t) => toolKey(t) === toolKey(tool)) ?? tool;
      return planRequests(documented, ctx.state.library, options, (...keys) => ctx.rng(...keys));
    },
  });
}

/** The calls of one written round, with ids from `next` on and linked parameters as references. */
function roundCalls(written: { tool: string; arguments: Record<string, Json> }[], planned: number[], request: DialogueRequest, next: number): Call[] {
  const ids = new Map(planned.map((toolIndex, i) => [toolIndex, `call_${next + i}`]));
  return written.map((call, i) => {
    const to = planned[i];
    const args: Record<string, ArgValue> = { ...call.arguments };
    for (const link of request.links.filter((l) => l.to === to && ids.has(l.from))) args[link.parameter] = { $ref: `${ids.get(link.from)}.${link.field}` };
    return { id: ids.get(to)!, tool: call.tool, arguments: args };
  });
}

/** The model's dialogue as an MTU sample (full tool entries), or why it does not follow the plan. */
export function dialogueSample(request: DialogueRequest, rounds: { user: string; assistant: string; calls: { tool: string; arguments: Record<string, Json> }[] }[], tools: ToolSpec[]): Sample | { reason: string; detail: string } {
  if (rounds.length !== request.rounds.length) return { reason: 'plan_not_followed', detail: `${rounds.length} rounds written, ${request.rounds.length} planned` };
  const dialogue: Turn[] = [];
  const situations: Record<string, Situation> = {};
  let next = 0;
  for (const [r, round] of rounds.entries()) {
    const planned = request.rounds[r];
    const names = planned.calls.map((i) => tools[i].name);
    if (round.calls.map((c) => c.tool).join() !== (planned.ask || planned.chat ? '' : names.join())) {
      return { reason: 'plan_not_followed', detail: `round ${r} calls ${JSON.stringify(round.calls.map((c) => c.tool))}, planned ${JSON.stringify(planned.ask || planned.chat ? [] : names)}` };
    }
    dialogue.push({ role: 'user', content: round.user });
    const calls = roundCalls(round.calls, planned.calls, request, next);
    next += calls.length;
    if (!calls.length && !round.assistant.trim()) return { reason: 'missing_response', detail: `round ${r}: the assistant's reply is empty` };
    situations[String(dialogue.length)] = planned.ask ? 'information_missing' : planned.chat ? 'chit_chat' : 'api_call';
    dialogue.push({ role: 'assistant', content: calls.length ? '' : round.assistant, ...(calls.length ? { calls } : {}) });
  }
  const expected = expectedOf(dialogue);
  const mtu: MtuMeta = { services: request.services, domains: request.domains, sourceSplit: request.sourceSplit, situations };
  return {
    id: sampleId('mtu', { imported: request.id }),
    benchmark: 'mtu',
    category: categoryOf({ dialogue, expected }),
    split: request.sourceSplit,
    tools,
    dialogue,
    expected,
    meta: { source: { dataset: 'imported', id: `${request.tools.map((t) => t.name).join('+')}/${request.setting}` }, lineage: [], checks: [], tags: [], mtu },
  };
}

/** The tools' documentation as the prompt shows it: name, description, parameters schema, result schema. */
function apisText(tools: ToolSpec[]): string {
  return JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters, returns: t.returns })), null, 1);
}

/** Answers asked per request: the first, and one more told what was wrong with it. */
const WRITE_ATTEMPTS = 2;

/**
 * The dialogue of each request, written by the model and checked: the plan followed (rounds, tools
 * in order, a reply where nothing is called), every call within its tool's schema by the shared
 * invariants as publishing checks them (tools, arguments, ranges in order), the setting as planned.
 * A dialogue that fails is asked for once more with the complaint; failing again, the request is
 * rejected with the reason (`plan_not_followed`, `missing_response`, `invalid_call`, `setting_mismatch`).
 */
export function writeImportedDialoguesStage(options: { today: string }): MapStage<DialogueRequest, Sample> {
  const library = libraryLoader();
  const toolsOf = (request: DialogueRequest, ctx: StageContext) => request.tools.map((ref) => library(ctx.runDir).get(ref) ?? ToolSpec.parse({ ...ref, description: '' }));
  const invariants = new WeakMap<ToolLibrary, SampleInvariants>();
  /** The sample the answer makes, or why it cannot be taken. */
  const check = (rounds: ImportedDialogueAnswer['rounds'], request: DialogueRequest, tools: ToolSpec[], ctx: StageContext): Sample | { reason: string; detail: string } => {
    const made = dialogueSample(request, rounds, tools);
    if (!('benchmark' in made)) return made;
    const lib = library(ctx.runDir);
    if (!invariants.has(lib)) invariants.set(lib, new SampleInvariants(lib.list()));
    // A record asked again (a resumed run) meets its own id: that finding is no fault of the dialogue.
    const findings = invariants.get(lib)!.check(made).filter((f) => f.check !== 'sample-id-unique');
    if (findings.length) return { reason: 'invalid_call', detail: findings.map(describeFinding).join('; ') };
    if (made.category !== request.setting) return { reason: 'setting_mismatch', detail: `written as ${made.category}, planned ${request.setting}` };
    return made;
  };
  return mapStage({
    name: 'write-imported-dialogues',
    version: 1,
    input: DialogueRequest,
    output: Sample,
    prompts: [mtuImportedDialoguePrompt],
    keyOf: (request) => request.id,
    run: async (request, ctx) => {
      const tools = toolsOf(request, ctx);
      const linked = (i: number) => request.links.filter((l) => l.to === i).map((l) => l.parameter);
      const rounds: PlannedRound[] = request.rounds.map((round) => ({ calls: round.calls.map((i) => ({ tool: tools[i].name, parameters: tools[i].parameters, linked: linked(i) })), ...(round.ask ? { ask: round.ask } : {}), ...(round.chat ? { chat: true } : {}) }));
      const vars = { today: options.today, apis: apisText(tools), plan: planText(rounds), rounds, feedback: '' };
      let outcome: Sample | { reason: string; detail: string } = { reason: 'invalid_call', detail: 'not asked' };
      for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
        const answer = await ctx.ask(mtuImportedDialoguePrompt, vars, attempt ? { part: `retry-${attempt}` } : {});
        outcome = check(answer.value.rounds, request, tools, ctx);
        if ('benchmark' in outcome) return { ...outcome, tools: tools.map(toolReference), meta: { ...outcome.meta, lineage: [answer.lineage] } };
        vars.feedback = `Your previous answer was refused (${outcome.reason}): ${outcome.detail.slice(0, 1000)}. Write the dialogue again, following the plan and the schemas.`;
      }
      return reject(outcome.reason, outcome.detail);
    },
  });
}

/** MTU keeps observations in its ReAct turns: each call's result goes to the turn that made it. */
export function observationsIntoTurns(sample: Sample, observations: Record<string, Json>): Sample {
  const dialogue = sample.dialogue.map((turn) => ({ ...turn }));
  for (const i of assistantIndexes(sample)) {
    const found = turnCalls(sample, i).flatMap((call) => (call.id in observations ? [[call.id, observations[call.id]] as const] : []));
    if (found.length) dialogue[i].observations = { ...(dialogue[i].observations ?? {}), ...Object.fromEntries(found) };
  }
  const { observations: _inTurns, ...meta } = sample.meta;
  return { ...sample, dialogue, meta };
}
