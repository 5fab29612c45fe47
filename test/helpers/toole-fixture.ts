import { fileURLToPath } from 'node:url';

export const tooleFixture = (name: string) => fileURLToPath(new URL(`../fixtures/toole/${name}`, import.meta.url));

/** A small ToolE run on hand-made plugins with a decisions file: fast, and every outcome is known. */
export const TOOLE_FIXTURE_CONFIG = {
  source: { file: tooleFixture('plugins.json') },
  descriptions: { exclude: [{ tool: 'plugin_search', reason: 'tool retrieval' }] },
  generation: { direct: { rounds: 2, perRound: 5 }, emotional: { perEmotion: 2 }, keyword: { keywords: 3 } },
  overlap: { decisions: tooleFixture('decisions.json'), undecided: 'keep', silhouetteClusters: [2, 3], plotClusters: 3 },
  multiTool: { topTools: 3, perPair: 4 },
  tasks: {
    awareness: { noToolFile: tooleFixture('no-tool.jsonl') },
    similar: { perTool: 2, candidates: 3 },
    reliability: { perTool: 2, candidates: 2, excludeSimilar: 1 },
    multiTool: { candidates: 4, excludeSimilar: 1 },
    scenario: { popularity: [3], groups: [{ name: 'travellers', tools: ['flight_finder', 'HotelTool', 'WeatherTool', 'no_such_tool'] }], perTool: 2 },
  },
  statistics: { reference: null },
};
