import { z } from 'zod';
import { hashOf } from '../../core/hash.ts';
import { promptStep, reject, sourceStage, type MapStage, type RejectReason, type ScanStage, type SourceStage, type StageContext } from '../../core/stage.ts';
import plausibilityPrompt from '../../prompts/tooltalk-plausibility.ts';
import scenariosPrompt from '../../prompts/tooltalk-scenarios.ts';
import { attachDatabases, readDatabasesFolder } from './database-report.ts';
import type { SimTool } from './tool.ts';
import { TOOLTALK_TOOLS, TOOLS_BY_NAME } from './tools/index.ts';

/**
 * ToolTalk §2.2, scenarios: one prompt per 3-plugin subset and tool in it (35 subsets), three
 * scenarios each; the ones that lack the required tool, name a tool that is not there, or use fewer
 * than 3 APIs (or 5 calls) are rejected, then an LLM judges plausibility; finally scenarios are
 * sampled evenly over the tools for drafting, and one easy scenario per tool is added.
 */

export const PLUGINS = [...new Set(TOOLTALK_TOOLS.map((tool) => tool.plugin))].sort();

export const ScenarioRequest = z.object({ plugins: z.array(z.string()).length(3), requiredApi: z.string() });
export type ScenarioRequest = z.infer<typeof ScenarioRequest>;

export const Scenario = z.object({
  id: z.string(),
  category: z.enum(['easy', 'tooltalk']),
  plugins: z.array(z.string()),
  requiredApi: z.string(),
  description: z.string(),
  /** The calls the scenario makes, in order. */
  calls: z.array(z.string()),
});
export type Scenario = z.infer<typeof Scenario>;

/** Every 3-plugin subset of the plugins, in lexical order. */
export function pluginSubsets(plugins: readonly string[] = PLUGINS): string[][] {
  const out: string[][] = [];
  for (let a = 0; a < plugins.length; a++) for (let b = a + 1; b < plugins.length; b++) for (let c = b + 1; c < plugins.length; c++) out.push([plugins[a], plugins[b], plugins[c]]);
  return out;
}

export function toolsOfPlugins(plugins: readonly string[]): SimTool[] {
  return TOOLTALK_TOOLS.filter((tool) => plugins.includes(tool.plugin));
}

/** The documentation a prompt shows: per tool its description, parameters and return fields. */
export function apiDocs(tools: readonly SimTool[]): string {
  return tools
    .map((tool) => {
      const params = Object.entries(tool.parameters).map(([name, doc]) => `    ${name} (${doc.type}${doc.required ? ', required' : ''}${doc.enum ? `, one of ${doc.enum.join('/')}` : ''}): ${doc.description}`);
      const returns = Object.entries(tool.output).map(([name, doc]) => `    ${name}: ${(doc as { description?: string }).description ?? ''}`.trimEnd());
      return [`${tool.name} (${tool.plugin}${tool.isAction ? ', action' : ''}${tool.requiresAuth ? ', needs login' : ''}): ${tool.description}`, '  parameters:', ...(params.length ? params : ['    none']), '  returns:', ...returns].join('\n');
    })
    .join('\n\n');
}

export interface ScenarioRequestsOptions {
  databasesDir: string;
  /** Limit to these plugins' subsets (default: all 7). */
  plugins?: string[];
}

/** The prompts to send: one per 3-plugin subset and tool in it. Also checks and attaches the databases. */
export function scenarioRequestsStage(options: ScenarioRequestsOptions): SourceStage<ScenarioRequest> {
  return sourceStage({
    name: 'scenario-requests',
    version: 1,
    output: ScenarioRequest,
    load: function* (ctx) {
      // A bad database file stops the run here, before any request is sent.
      attachDatabases(ctx, readDatabasesFolder(ctx.resolvePath(options.databasesDir)));
      for (const plugins of pluginSubsets(options.plugins ?? PLUGINS)) for (const tool of toolsOfPlugins(plugins)) yield { plugins, requiredApi: tool.name };
    },
  });
}

export function generateScenariosStage(options: { temperature?: number } = {}): MapStage<ScenarioRequest, Scenario> {
  return promptStep({
    name: 'generate-scenarios',
    version: 1,
    input: ScenarioRequest,
    output: Scenario,
    fanOut: true,
    keyOf: (request) => `${request.plugins.join('-')}:${request.requiredApi}`,
    prompt: scenariosPrompt,
    variables: (request) => {
      const tools = toolsOfPlugins(request.plugins);
      return { apiDocs: apiDocs(tools), requiredApi: request.requiredApi, toolNames: tools.map((tool) => tool.name) };
    },
    options: () => ({ temperature: options.temperature }),
    result: (answer, request) =>
      answer.value.scenarios.map((scenario, index) => ({
        id: `${request.plugins.join('-')}-${request.requiredApi}-${index}`,
        category: 'tooltalk' as const,
        plugins: request.plugins,
        requiredApi: request.requiredApi,
        description: scenario.description,
        calls: scenario.calls,
      })),
  });
}

/** CamelCase words a scenario may use to name an API. */
const API_NAME = /\b[A-Z][a-z]+(?:[A-Z][a-z]*)+\b/g;

/**
 * Why a scenario is unusable (§2.2's filters and Appendix B's counts), or null. `offered`: the tools
 * of an imported library's plugins (default: the built-in plugins' tools, whose CamelCase names
 * the description is also searched for; imported names are checked in the calls only).
 */
export function scenarioProblem(scenario: Pick<Scenario, 'plugins' | 'requiredApi' | 'description' | 'calls'>, imported?: ReadonlySet<string>): RejectReason | null {
  const offered = imported ?? new Set(toolsOfPlugins(scenario.plugins).map((tool) => tool.name));
  const named = new Set([...scenario.calls, ...(imported ? [] : (scenario.description.match(API_NAME) ?? []))]);
  const unknown = [...named].filter((name) => !offered.has(name) && (scenario.calls.includes(name) || TOOLS_BY_NAME.has(name) || /[A-Z][a-z]+[A-Z]/.test(name)));
  if (unknown.length) return { reason: 'unknown_tool', detail: `names ${unknown.join(', ')}, not among the tools of ${scenario.plugins.join(', ')}` };
  if (!scenario.calls.includes(scenario.requiredApi)) return { reason: 'missing_required_tool', detail: `does not call ${scenario.requiredApi}` };
  const distinct = new Set(scenario.calls).size;
  if (distinct < 3) return { reason: 'too_few_apis', detail: `uses ${distinct} distinct API(s); at least 3 are needed` };
  if (scenario.calls.length < 5) return { reason: 'too_few_calls', detail: `makes ${scenario.calls.length} call(s); at least 5 are needed` };
  return null;
}

export function filterScenariosStage(): MapStage<Scenario, Scenario> {
  return {
    kind: 'map',
    name: 'filter-scenarios',
    version: 1,
    input: Scenario,
    output: Scenario,
    run: async (scenario) => {
      const problem = scenarioProblem(scenario);
      return problem ? reject(problem.reason, problem.detail) : scenario;
    },
  };
}

export function plausibilityStage(): MapStage<Scenario, Scenario> {
  return promptStep({
    name: 'check-plausibility',
    version: 1,
    input: Scenario,
    output: Scenario,
    prompt: plausibilityPrompt,
    variables: (scenario) => ({ scenario: scenario.description, calls: scenario.calls.join(' → '), callList: scenario.calls }),
    result: (answer, scenario) => (answer.value.plausible ? scenario : reject('implausible', answer.value.reason)),
  });
}

export interface SelectOptions {
  /** Conversations of the hard set to draft (scenarios sampled evenly over the required tools). */
  conversations: number;
  /** Also draft one easy conversation per tool. */
  easy: boolean;
  /** The easy scenarios (default: one per built-in tool). */
  easyScenarios?: (ctx: StageContext) => Scenario[] | Promise<Scenario[]>;
}

/**
 * §2.2: scenarios sampled evenly over the tools — round robin over the required tools (in a
 * seeded order), a seeded pick within each — up to `conversations`; the rest are rejected
 * `not_sampled`. Then one easy scenario per tool.
 */
export function selectScenariosStage(options: SelectOptions): ScanStage<Scenario, Scenario, Set<string>> {
  return {
    kind: 'scan',
    name: 'select-scenarios',
    version: 1,
    input: Scenario,
    output: Scenario,
    fanOut: true,
    collect: (scenarios, ctx) => {
      const byTool = new Map<string, string[]>();
      for (const scenario of scenarios) {
        const ids = byTool.get(scenario.requiredApi) ?? [];
        ids.push(scenario.id);
        byTool.set(scenario.requiredApi, ids);
      }
      const rng = ctx.rng(ctx.stage.name);
      const queues = rng.shuffle([...byTool.keys()].sort()).map((tool) => rng.shuffle(byTool.get(tool)!));
      const chosen = new Set<string>();
      while (chosen.size < options.conversations && queues.some((queue) => queue.length)) {
        for (const queue of queues) if (queue.length && chosen.size < options.conversations) chosen.add(queue.shift()!);
      }
      return chosen;
    },
    run: (scenario, ctx) => (ctx.state.has(scenario.id) ? scenario : reject('not_sampled', `${options.conversations} conversation(s) asked for; scenarios are sampled evenly over the tools`)),
    finish: (_, ctx) =>
      !options.easy
        ? []
        : options.easyScenarios
          ? options.easyScenarios(ctx)
          : TOOLTALK_TOOLS.map((tool) => ({ id: `${tool.name}-easy`, category: 'easy' as const, plugins: [tool.plugin], requiredApi: tool.name, description: `${tool.name} easy scenario`, calls: [tool.name] })),
  };
}

/** A stable key of a scenario's content (sample ids derive from it). */
export function scenarioKey(scenario: Scenario): string {
  return `${scenario.id}:${hashOf(scenario, 12)}`;
}
