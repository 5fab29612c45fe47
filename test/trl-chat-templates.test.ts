import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eachJsonl } from '../core/jsonl.ts';
import { pipelines } from '../pipelines/index.ts';
import type { TrlRow } from '../stages/export/trl.ts';
import { hermes, hermesGuarded, hermesLookupRaises, llama31Json, mistral, rowCallsAndResults, type ChatTemplate } from './helpers/chat-templates.ts';
import { defaultRun } from './helpers/default-run.ts';

/** Every row of a trl export folder, split by split. */
function* rowsOf(folder: string): Generator<TrlRow> {
  for (const file of readdirSync(join(folder, 'jsonl')).sort()) yield* eachJsonl<TrlRow>(join(folder, 'jsonl', file));
}

/**
 * Renders every row through a template and reads its calls and results back: the counts, and the
 * first row (by id) that raised or whose text does not give back every call (name and arguments) and
 * every tool result of the row, in order. A row the template raises on and `fallback` takes is
 * rendered by `fallback` instead (and counted apart).
 */
function renderAll(rows: TrlRow[], template: ChatTemplate, fallback?: { template: ChatTemplate; takes: (row: TrlRow, error: unknown) => boolean }) {
  const tally = { rows: 0, rendered: 0, byFallback: 0, calls: 0, results: 0, raised: [] as string[], firstMismatch: null as string | null };
  for (const row of rows) {
    tally.rows++;
    let text: string;
    let used = template;
    try {
      text = template.render(row);
    } catch (error) {
      if (!fallback?.takes(row, error)) {
        tally.raised.push(row.id);
        continue;
      }
      used = fallback.template;
      text = used.render(row);
      tally.byFallback++;
    }
    tally.rendered++;
    const want = rowCallsAndResults(row);
    tally.calls += want.calls.length;
    tally.results += want.results.length;
    if (!tally.firstMismatch && !isDeepStrictEqual(used.readBack(text), want)) tally.firstMismatch = row.id;
  }
  return tally;
}

/** @huggingface/jinja's `mapping[undefined]` error on the Hermes template's type lookup (see hermesGuarded). */
const hermesFallback = {
  template: hermesGuarded,
  takes: (row: TrlRow, error: unknown) => String(error).includes('Cannot access property with non-string: got UndefinedValue') && hermesLookupRaises(row),
};

describe('@huggingface/jinja and Jinja2', () => {
  it("differ on the Hermes template's type lookup for an array parameter: hermesGuarded is needed while this throws", () => {
    const row = { messages: [{ role: 'user' as const, content: 'hi' }, { role: 'assistant' as const, content: 'hello' }], tools: [{ type: 'function' as const, function: { name: 'f', description: 'd', parameters: { type: 'object', properties: { ids: { type: 'array', items: { type: 'string' }, description: 'ids' } }, required: [] } } }] };
    expect(hermesLookupRaises(row)).toBe(true);
    expect(() => hermes.render(row)).toThrow('Cannot access property with non-string: got UndefinedValue');
    expect(hermesGuarded.render(row)).toContain('<|im_start|>assistant\nhello<|im_end|>');
  });
});

/**
 * Each recipe's default offline version exported with `--format trl`, every row rendered through
 * vLLM's Hermes and Mistral tool templates, and (exported with `--one-call-per-message`) through its
 * Llama 3.1 JSON template, as `apply_chat_template` renders them: every call and result is in the text.
 */
for (const name of ['mtu', 'toole', 'nestools', 'tooltalk', 'acebench']) {
  describe(`${name}: every trl row of the default version renders through real chat templates`, () => {
    const run = defaultRun(name);
    // Each export read once for the recipe's tests, not once per test; released when they are done.
    let rows: TrlRow[];
    let oneCallRows: TrlRow[];
    let parallel: string[];
    beforeAll(async () => {
      rows = [...rowsOf(await run.exportAs('trl'))];
      const oneCall = join(run.scratch, 'export', 'trl-one-call');
      await pipelines[name].exports.trl(run.store.sampleSource(run.ref), run.store.tools(run.ref), oneCall, run.ref, { oneCallPerMessage: true });
      oneCallRows = [...rowsOf(oneCall)];
      parallel = rows.filter((row) => row.messages.some((m) => (m.tool_calls?.length ?? 0) > 1)).map((row) => row.id);
    }, 900_000);
    afterAll(() => {
      rows = oneCallRows = [];
    });

    it('one row per sample, with calls and results to check', () => {
      expect(rows).toHaveLength(run.manifest.counts.samples);
      expect(rows.some((row) => row.messages.some((m) => m.tool_calls))).toBe(true);
      expect(oneCallRows.map((row) => row.id)).toEqual(rows.map((row) => row.id));
    });

    it('hermes: every row renders (with the type lookup guarded where @huggingface/jinja raises and Jinja2 does not), every call and result read back', () => {
      const tally = renderAll(rows, hermes, hermesFallback);
      expect({ raised: tally.raised.slice(0, 3), firstMismatch: tally.firstMismatch }).toEqual({ raised: [], firstMismatch: null });
      expect(tally.rendered).toBe(run.manifest.counts.samples);
      expect(tally.byFallback).toBe(rows.filter(hermesLookupRaises).length);
      expect(tally.calls).toBeGreaterThan(0);
    }, 600_000);

    it('mistral: every row renders, every call and result read back', () => {
      const tally = renderAll(rows, mistral);
      expect({ raised: tally.raised.slice(0, 3), firstMismatch: tally.firstMismatch }).toEqual({ raised: [], firstMismatch: null });
      expect(tally.rendered).toBe(run.manifest.counts.samples);
      expect(tally.calls).toBeGreaterThan(0);
    }, 600_000);

    it('llama3.1_json: every row exported one call per message renders, every call and result read back', () => {
      const tally = renderAll(oneCallRows, llama31Json);
      expect({ raised: tally.raised.slice(0, 3), firstMismatch: tally.firstMismatch }).toEqual({ raised: [], firstMismatch: null });
      expect(tally.rendered).toBe(run.manifest.counts.samples);
    }, 600_000);

    it('llama3.1_json refuses exactly the default rows with parallel calls (the template has none)', () => {
      const raised: string[] = [];
      const withParallelCalls = new Set(parallel);
      for (const row of rows) if (withParallelCalls.has(row.id)) {
        try {
          llama31Json.render(row);
        } catch (error) {
          if (String(error).includes('This model only supports single tool-calls at once!')) raised.push(row.id);
        }
      }
      expect(raised).toEqual(parallel);
    }, 600_000);
  });
}
