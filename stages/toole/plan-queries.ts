import type { MapStage } from '../../core/stage.ts';
import { TooleItem, briefOf, jobItem } from './records.ts';

/** How many queries each single-tool generation method asks for (defaults: Appendix A.5). */
export interface GenerationCounts {
  /** Direct diverse generation: `rounds` requests of `perRound` queries per tool (2 × 10). */
  direct: { rounds: number; perRound: number };
  /** Emotional generation: `perEmotion` queries in each emotion (happiness, excitement, anger, depression × 5). */
  emotional: { emotions: string[]; perEmotion: number };
  /** Keyword generation: `keywords` labels extracted, then one query per label (5). */
  keyword: { keywords: number };
  /** Details generation: every direct query rewritten with details. */
  details: { enabled: boolean };
}

/**
 * Plans the single-tool generation requests of each tool (paper §2.2.1): direct rounds, one request
 * per emotion and a keyword extraction. Keyword queries and details follow from the answers to
 * these, in later stages. A count of 0 turns a method off.
 */
export function planQueriesStage(counts: GenerationCounts): MapStage<TooleItem, TooleItem> {
  return {
    kind: 'map',
    name: 'toole-plan-queries',
    version: 1,
    input: TooleItem,
    output: TooleItem,
    fanOut: true,
    run: async (item) => {
      if (item.kind !== 'tool') return [item];
      const tools = [briefOf(item.tool)];
      const jobs: TooleItem[] = [];
      if (counts.direct.perRound > 0) {
        for (let round = 1; round <= counts.direct.rounds; round++) jobs.push(jobItem({ method: 'direct', tools, count: counts.direct.perRound, round }));
      }
      if (counts.emotional.perEmotion > 0) {
        for (const emotion of counts.emotional.emotions) jobs.push(jobItem({ method: 'emotional', tools, count: counts.emotional.perEmotion, emotion }));
      }
      if (counts.keyword.keywords > 0) jobs.push(jobItem({ method: 'keyword-extract', tools, count: counts.keyword.keywords }));
      return [item, ...jobs];
    },
  };
}
