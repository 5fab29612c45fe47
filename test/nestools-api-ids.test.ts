import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EvalItem } from '../core/eval.ts';
import { collectItems } from '../eval/run.ts';
import { nestoolsScorer, readCalls } from '../stages/nestools/score.ts';
import { defaultRun } from './helpers/default-run.ts';
import { peerFiles, pythonHas, runPython } from './helpers/peer-code.ts';

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));

interface ExportedRecord {
  test_id: number;
  api: { api_name: string }[];
  call: { api_name: string }[];
}

/**
 * NesTools' eval.py and utils.process_results_gen as far as they match calls by id: the gold call's
 * id is `test_api_ids[test_id - 1]` at its API's place in the record's `api` list; a predicted call
 * is right when its `api_id` has a gold call not yet matched; order pairs are consecutive ids.
 */
function idCounts(record: ExportedRecord, apiIds: number[], predicted: { api_id: unknown }[]) {
  const idOf = new Map(record.api.map((api, i) => [api.api_name, apiIds[i]]));
  const gold = record.call.map((call) => idOf.get(call.api_name));
  const open = new Map<unknown, number>();
  for (const id of gold) open.set(id, (open.get(id) ?? 0) + 1);
  let apiCorrect = 0;
  for (const call of predicted) {
    const left = open.get(call.api_id) ?? 0;
    if (left > 0) {
      apiCorrect++;
      open.set(call.api_id, left - 1);
    }
  }
  const pairs = (ids: unknown[]) => ids.slice(1).map((id, i) => `${ids[i]}→${id}`);
  const goldPairs = pairs(gold);
  const predictedPairs = predicted.length <= 1 ? [] : pairs(predicted.map((call) => call.api_id));
  let orderCorrect = 0;
  for (const pair of predictedPairs) {
    const at = goldPairs.indexOf(pair);
    if (at >= 0) {
      orderCorrect++;
      goldPairs.splice(at, 1);
    }
  }
  return { apiCorrect, apiPredicted: predicted.length, apiGold: gold.length, orderCorrect, orderPredicted: predictedPairs.length, orderGold: gold.length - 1 };
}

const f1 = (correct: number, predicted: number, gold: number) => (correct === 0 ? 0 : (2 * (correct / predicted) * (correct / gold)) / (correct / predicted + correct / gold));

describe('NesTools: the ids the eval prompt shows are the ids the export writes', () => {
  const run = defaultRun('nestools');
  let exported: string;
  let items: EvalItem[];
  let records: ExportedRecord[];

  const prepare = async () => {
    exported ??= await run.exportAs('nestools');
    const samples = run.store.sampleSource(run.ref);
    items ??= collectItems(nestoolsScorer, samples, undefined, { dir: run.ref.dir, samples });
    records ??= lines(join(exported, 'test.jsonl'));
  };

  it('answers written from the eval prompt score 100 % on API and order F1 by eval.py\'s id matching with test_api_ids.jsonl (full default export)', async () => {
    await prepare();
    const apiIds = lines(join(exported, 'test_api_ids.jsonl')) as { test_id: number; api_ids: number[] }[];
    expect(records).toHaveLength(200);
    expect(items).toHaveLength(records.length);
    const total = { apiCorrect: 0, apiPredicted: 0, apiGold: 0, orderCorrect: 0, orderPredicted: 0, orderGold: 0 };
    items.forEach((item, i) => {
      const record = records[i];
      const ids = apiIds[record.test_id - 1];
      expect(ids.test_id).toBe(record.test_id);
      // Every API the prompt lists, with the id it shows, is the record's api entry with its exported id.
      const shown = [...item.messages[0].content!.matchAll(/'api_name': '([^']*)', 'api_id': (\d+)/g)].map((m) => [m[1], Number(m[2])]);
      expect(shown).toEqual(record.api.map((api, k) => [api.api_name, ids.api_ids[k]]));
      const counts = idCounts(record, ids.api_ids, readCalls(nestoolsScorer.oracle(item))!);
      for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += counts[key];
    });
    expect(f1(total.apiCorrect, total.apiPredicted, total.apiGold)).toBe(1);
    expect(f1(total.orderCorrect, total.orderPredicted, total.orderGold)).toBe(1);
  }, 600_000);

  const peer = pythonHas(['tqdm']) ? peerFiles('hhan1018/NesTools', ['evaluation']) : null;
  it.skipIf(!peer)(
    "NesTools' own evaluation/eval.py scores the gold answers 100.0 on every metric with the exported test_api_ids.jsonl (skipped without python3, tqdm or a NesTools checkout)",
    async () => {
      await prepare();
      // `rouge` is imported by utils.py; check_score returns 1 for an equal value before it reaches ROUGE, so gold answers never call it: the stand-in fails if they do.
      writeFileSync(join(peer!, 'rouge.py'), "class Rouge:\n    def get_scores(self, *a, **k):\n        raise RuntimeError('ROUGE called: a prediction differs from its gold value')\n");
      const predictions = join(peer!, 'raw_response.jsonl');
      writeFileSync(predictions, items.map((item, i) => `${JSON.stringify({ test_id: records[i].test_id, response: nestoolsScorer.oracle(item) })}\n`).join(''));
      const script = "import runpy, sys; sys.argv = ['eval.py'] + sys.argv[1:]; runpy.run_path('evaluation/eval.py', run_name='__main__')";
      const out = runPython(script, ['--gold_file_path', join(exported, 'test.jsonl'), '--predict_file_path', predictions, '--api_ids_path', join(exported, 'test_api_ids.jsonl'), '--result_path', join(peer!, 'results.csv')], {
        cwd: peer!,
        pythonPath: [peer!, join(peer!, 'evaluation')],
      });
      const figures = out.split('\n').find((line) => /^[\d. ]+$/.test(line.trim()))!.trim().split(' ');
      expect(figures).toHaveLength(14);
      expect(figures.every((figure) => figure === '100.0')).toBe(true);
    },
    600_000,
  );
});
