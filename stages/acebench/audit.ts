import type { SampleAudit } from '../../core/audit.ts';
import type { Finding } from '../../core/invariants.ts';
import type { Sample } from '../../core/records.ts';
import { sampleToAceRecord } from './format.ts';
import { ACE_AGENT_CATEGORIES } from './record.ts';
import { agentReplayProblems } from './rule-checks.ts';

/**
 * ACEBench's own audit: an agent task's mile_stone, executed from its initial_config in the
 * sandboxes, must reach the task's ground_truth (the rule stage's `agent-replay`, for one sample of
 * any version, generated or imported).
 */
export function acebenchAudits(): SampleAudit[] {
  let tasks = 0;
  return [
    {
      name: 'acebench/agent-replay',
      description: "an agent task's mile_stone, executed in the sandboxes from its initial_config, reaches its ground_truth",
      checked: () => tasks,
      check(sample: Sample): Finding[] {
        if (sample.benchmark !== 'acebench' || !(ACE_AGENT_CATEGORIES as readonly string[]).includes(sample.category)) return [];
        tasks++;
        const finding = (problem: string): Finding => ({ check: 'acebench/agent-replay', sampleId: sample.id, where: 'expected.milestones', problem });
        try {
          const problems = agentReplayProblems(sampleToAceRecord(sample));
          return problems.length ? [finding(problems.join('; '))] : [];
        } catch (error) {
          return [finding((error as Error).message)];
        }
      },
    },
  ];
}
