import { hashOf } from '../../core/hash.ts';
import { Sample } from '../../core/records.ts';
import { reject, type ScanStage } from '../../core/stage.ts';
import { besideReleased, listTally, statisticsBesideReleased, type ReleasedPlace, type Tally } from '../released-statistics.ts';
import { toolTalkMetaOf } from './conversation.ts';
import { TOOLS_BY_NAME } from './tools/index.ts';

/**
 * Statistics beside the released set's: conversations, turns and calls per conversation, the share
 * of calls that are actions, plugins per conversation, calls per tool. Reported in the manifest
 * (`stats.tooltalk`), printed in the run log and attached as `reports/tooltalk-statistics.md`.
 */

/** The figures of one conversation (all the statistics need). */
export interface ConversationFigures {
  category: string;
  turns: number;
  tools: string[];
  /** Per call: its tool's plugin and whether it is an action (from the sample's tools; imported tools are not built in). */
  plugins?: string[];
  actions?: boolean[];
}

export interface ToolTalkStatistics {
  conversations: number;
  byCategory: Record<string, number>;
  turnsPerConversation: number;
  callsPerConversation: number;
  actionShare: number;
  pluginsPerConversation: number;
  perTool: Record<string, number>;
}

export function summarise(figures: readonly ConversationFigures[], options: { builtinTools?: boolean } = {}): ToolTalkStatistics {
  const n = figures.length || 1;
  const calls = figures.flatMap((f) => f.tools);
  const perTool: Record<string, number> = {};
  if (options.builtinTools ?? true) for (const name of [...TOOLS_BY_NAME.keys()].sort()) perTool[name] = 0;
  for (const tool of calls) perTool[tool] = (perTool[tool] ?? 0) + 1;
  const byCategory: Record<string, number> = {};
  for (const f of figures) byCategory[f.category] = (byCategory[f.category] ?? 0) + 1;
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    conversations: figures.length,
    byCategory,
    turnsPerConversation: round(figures.reduce((s, f) => s + f.turns, 0) / n),
    callsPerConversation: round(calls.length / n),
    actionShare: round(figures.reduce((s, f) => s + f.tools.filter((tool, i) => f.actions?.[i] ?? TOOLS_BY_NAME.get(tool)?.isAction).length, 0) / (calls.length || 1)),
    pluginsPerConversation: round(figures.reduce((s, f) => s + new Set(f.tools.map((tool, i) => f.plugins?.[i] ?? TOOLS_BY_NAME.get(tool)?.plugin)).size, 0) / n),
    perTool,
  };
}

export function figuresOfSample(sample: Sample): ConversationFigures {
  const tools = sample.dialogue.flatMap((turn) => (turn.calls ?? []).map((call) => call.tool));
  if (!(sample.meta as { tooltalk?: { toolsImported?: boolean } }).tooltalk?.toolsImported) return { category: sample.category, turns: sample.dialogue.length, tools };
  const offered = new Map(sample.tools.map((tool) => [tool.name, tool]));
  return { category: sample.category, turns: sample.dialogue.length, tools, plugins: tools.map((tool) => offered.get(tool)?.plugin ?? ''), actions: tools.map((tool) => offered.get(tool)?.isAction === true) };
}

export function statisticsTable(ours: ToolTalkStatistics, released: ToolTalkStatistics | null): string {
  const columns = released ? '| | this version | released |\n|---|---:|---:|' : '| | this version |\n|---|---:|';
  const row = (label: string, a: number | string, b?: number | string) => `| ${label} | ${a} |${released ? ` ${b} |` : ''}`;
  const categories = [...new Set([...Object.keys(ours.byCategory), ...Object.keys(released?.byCategory ?? {})])].sort();
  return [
    columns,
    row('conversations', ours.conversations, released?.conversations),
    ...categories.map((c) => row(`  ${c}`, ours.byCategory[c] ?? 0, released?.byCategory[c] ?? 0)),
    row('turns per conversation', ours.turnsPerConversation, released?.turnsPerConversation),
    row('calls per conversation', ours.callsPerConversation, released?.callsPerConversation),
    row('action share of calls', ours.actionShare, released?.actionShare),
    row('plugins per conversation', ours.pluginsPerConversation, released?.pluginsPerConversation),
    ...Object.keys(ours.perTool).map((tool) => row(`calls to ${tool}`, ours.perTool[tool], released?.perTool[tool] ?? 0)),
  ].join('\n');
}

/** The main figures, this version's beside the released set's, for the run log. */
function logTable(ours: ToolTalkStatistics, released: ToolTalkStatistics | null): string {
  const categories = [...new Set([...Object.keys(ours.byCategory), ...Object.keys(released?.byCategory ?? {})])].sort();
  return besideReleased(
    [
      ['conversations', ours.conversations, released?.conversations],
      ...categories.map((c): [string, number, number | null] => [`  ${c}`, ours.byCategory[c] ?? 0, released && (released.byCategory[c] ?? 0)]),
      ['turns per conversation', ours.turnsPerConversation, released?.turnsPerConversation],
      ['calls per conversation', ours.callsPerConversation, released?.callsPerConversation],
      ['action share of calls', ours.actionShare, released?.actionShare],
      ['plugins per conversation', ours.pluginsPerConversation, released?.pluginsPerConversation],
    ],
    released && 'ToolTalk',
  );
}

/** Without `released` (over an imported library), the per-tool counts list only the tools called. */
export function statisticsStage(options: { released?: ReleasedPlace }): ScanStage<Sample, Sample, Tally<ConversationFigures, ToolTalkStatistics>> {
  return statisticsBesideReleased({
    version: 1,
    title: 'ToolTalk statistics',
    figures: figuresOfSample,
    tally: listTally((figures: readonly ConversationFigures[]) => summarise(figures, { builtinTools: !!options.released })),
    released: options.released,
    close: (ours, released) => ({
      reports: { tooltalk: { version: ours, ...(released ? { released } : {}) } },
      table: logTable(ours, released),
      attach: { 'tooltalk-statistics.md': `# ToolTalk statistics\n\n${statisticsTable(ours, released)}\n` },
    }),
  });
}

/**
 * Two conversations whose overlays hold different records under one key cannot share the exported
 * databases: the later one (in stream order) is rejected, naming the first.
 */
export function overlayConflictsStage(): ScanStage<Sample, Sample, Map<string, { hash: string; owner: string }>> {
  const keysOf = (sample: Sample) => {
    const overlay = toolTalkMetaOf(sample).overlay as Record<string, Record<string, Record<string, unknown>>>;
    return Object.entries(overlay).flatMap(([database, byOwner]) =>
      database === 'Account'
        ? Object.entries(byOwner).map(([id, record]) => ({ key: `${database} › ${id}`, hash: hashOf(record, 16) }))
        : Object.entries(byOwner).flatMap(([owner, rows]) => Object.entries(rows).map(([id, record]) => ({ key: `${database} › ${owner} › ${id}`, hash: hashOf(record, 16) }))),
    );
  };
  return {
    kind: 'scan',
    name: 'overlay-conflicts',
    version: 1,
    input: Sample,
    output: Sample,
    begin: () => new Map(),
    run: (sample, ctx) => {
      const keys = keysOf(sample);
      const clash = keys.find(({ key, hash }) => ctx.state.has(key) && ctx.state.get(key)!.hash !== hash);
      if (clash) return reject('overlay_conflict', `overlay key ${clash.key} holds another record in sample ${ctx.state.get(clash.key)!.owner}`);
      for (const { key, hash } of keys) if (!ctx.state.has(key)) ctx.state.set(key, { hash, owner: sample.id });
      return sample;
    },
  };
}
