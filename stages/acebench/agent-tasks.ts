import { UserError } from '../../core/errors.ts';
import type { ScanStage } from '../../core/stage.ts';
import { ACE_AGENT_CATEGORIES, AceRecordSchema, type AceLanguage, type AceRecord } from './record.ts';
import { buildAgentTask, type AgentCategory, type TaskFamily } from './sandbox/tasks.ts';

export interface AgentTasksOptions {
  /** Tasks per agent category and language. */
  counts: Record<AgentCategory, number>;
  languages: AceLanguage[];
}

/**
 * The family mixes of agent tasks, as the released records combine their classes (message, food,
 * reminder together; travel alone; finance, an addition, alone or with messages).
 */
const FAMILY_MIXES: TaskFamily[][] = [['message'], ['food'], ['message', 'food'], ['message', 'reminder', 'food'], ['reminder', 'food'], ['message', 'reminder'], ['travel'], ['finance'], ['finance', 'message']];

/**
 * ACEBench §3.1.1 agent data: tasks over the executable sandboxes, whose final state comes from
 * executing the gold path (never written by a model). The stage passes the dialogue records on and
 * adds the agent records after them.
 */
export function agentTasksStage(options: AgentTasksOptions): ScanStage<AceRecord, AceRecord> {
  for (const [category, count] of Object.entries(options.counts)) {
    if (!Number.isInteger(count) || count < 0) throw new UserError(`agent tasks: the count of ${category} must be a whole number ≥ 0, got ${count}`);
  }
  return {
    kind: 'scan',
    name: 'build-agent-tasks',
    version: 1,
    input: AceRecordSchema,
    output: AceRecordSchema,
    fanOut: true,
    keyOf: (record) => `${record.language}/${record.data.id}`,
    run: (record) => record,
    finish: (_state, ctx) => {
      const out: AceRecord[] = [];
      for (const language of options.languages) {
        for (const category of ACE_AGENT_CATEGORIES) {
          for (let index = 0; index < options.counts[category]; index++) {
            const rng = ctx.rng('agent-task', language, category, index);
            out.push(buildAgentTask({ rng, language, category, index, families: FAMILY_MIXES[rng.int(0, FAMILY_MIXES.length - 1)]! }).record);
          }
        }
      }
      ctx.report('acebench.agentTasks', Object.fromEntries(ACE_AGENT_CATEGORIES.map((c) => [c, options.counts[c] * options.languages.length])));
      return out;
    },
  };
}
