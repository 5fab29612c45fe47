import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UserError } from '../core/errors.ts';
import { Sample } from '../core/records.ts';
import { renderProgram } from '../prompts/nestools-render-program.ts';
import { checkProgram } from '../stages/nestools/check-program.ts';
import { programToChain } from '../stages/nestools/convert.ts';
import { fromNesToolsRecord, fromSealToolsRecord, sealToolEntry, toNesToolsRecord, toSealToolsRecord } from '../stages/nestools/import-export.ts';
import { parseProgram } from '../stages/nestools/parse-program.ts';
import { loadNesToolsSamples } from '../stages/sources/nestools.ts';
import { loadSealToolsLibrary } from '../stages/sources/seal-tools.ts';

const data = new URL('../../shared/data/', import.meta.url);
const REFERENCE = new URL('reference/nestools/test_data.jsonl', data);
const SEAL_TOOLS = new URL('sources/seal-tools/tool.jsonl', data);

function lines(url: URL): string[] {
  return readFileSync(url, 'utf8').split('\n').filter((line) => line.trim());
}

/** JSON text compares values and key order at every depth. */
function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

describe('NesTools import and export', () => {
  const originals = lines(REFERENCE).map((line) => JSON.parse(line));
  const samples = loadNesToolsSamples(REFERENCE.pathname);

  it('gives the 1,000 released records back identically, values and key order', () => {
    expect(samples).toHaveLength(1000);
    const exported = samples.map((sample, i) => toNesToolsRecord(Sample.parse(JSON.parse(JSON.stringify(sample))), i + 1));
    const different = exported.map((record, i) => (sameJson(record, originals[i]) ? null : originals[i].test_id)).filter((id) => id !== null);
    expect(different).toEqual([]);
  });

  it('holds nested arguments as references to the producing call and field', () => {
    const first = samples[0];
    expect(first.expected.calls?.[1]).toEqual({ id: 'call_1', tool: 'locate_book', arguments: { book_info: { $ref: 'call_0.book_details' } } });
    expect(first.tools[0].parameters.properties.isbn).toEqual({ type: 'string', description: 'the ISBN code of the book' });
    expect(first.category).toBe('nested');
    expect(samples.filter((s) => s.category === 'nested')).toHaveLength(830);
  });

  it('numbers placeholders globally in response order on export', () => {
    const sample = samples[0];
    const reordered = { ...sample, expected: { calls: sample.expected.calls!.map((call, i) => ({ ...call, id: `step${i}` })) } };
    for (const call of reordered.expected.calls) {
      for (const [name, value] of Object.entries(call.arguments)) {
        if (value && typeof value === 'object' && '$ref' in value) call.arguments[name] = { $ref: (value.$ref as string).replace('call_', 'step') };
      }
    }
    expect(toNesToolsRecord(reordered, 1).call.map((c) => c.responses)).toEqual([['API_call_0', 'API_call_1'], ['API_call_2'], ['API_call_3', 'API_call_4']]);
  });

  it('refuses a record whose placeholder no earlier call produced, naming it', () => {
    const broken = JSON.parse(JSON.stringify(originals[0]));
    broken.call[1].parameters.book_info = 'API_call_9';
    expect(() => fromNesToolsRecord(broken, { where: 'x.jsonl:1' })).toThrow(UserError);
    expect(() => fromNesToolsRecord(broken, { where: 'x.jsonl:1' })).toThrow(/x\.jsonl:1 \(test_id 1\).*API_call_9/);
  });

  it('writes each renderable record as a program that parses back to the same chain', () => {
    let rendered = 0;
    // Every third record keeps the suite quick; the benchmark renders all of them.
    for (const sample of samples.filter((_, i) => i % 3 === 0)) {
      let code: string;
      try {
        code = renderProgram({ tools: sample.tools, calls: sample.expected.calls!, task: sample.dialogue[0].content });
      } catch {
        continue; // a parameter named like `class` or `A/B_test_results` cannot be a Python name
      }
      rendered++;
      const program = parseProgram(code);
      const check = checkProgram(program, { strict: true });
      expect(check.errors, `test_id ${sample.meta.source?.id}`).toEqual([]);
      const chain = programToChain(program, check);
      expect(chain.calls).toEqual(sample.expected.calls);
      expect(chain.task).toBe(sample.dialogue[0].content.replace(/\s+/g, ' ').trim());
    }
    expect(rendered).toBeGreaterThanOrEqual(330);
  });
});

describe('Seal-Tools import and export', () => {
  const library = loadSealToolsLibrary(SEAL_TOOLS.pathname);

  it('loads the 4,076 tools and writes them back identically', () => {
    expect(library.tools).toHaveLength(4076);
    const different = lines(SEAL_TOOLS).filter((line, i) => !sameJson(sealToolEntry(library.tools[i]), JSON.parse(line)));
    expect(different).toEqual([]);
  });

  it('gives the dev records back identically, with tools from the library', () => {
    const originals = lines(new URL('reference/seal-tools/dev.jsonl', data)).map((line) => JSON.parse(line));
    const samples = originals.map((raw, i) => fromSealToolsRecord(raw, library.byName, { where: `dev.jsonl:${i + 1}` }));
    expect(samples.filter((s) => s.category === 'nested').length).toBeGreaterThan(0);
    const different = samples.map((s, i) => (sameJson(toSealToolsRecord(s), originals[i]) ? null : originals[i].id)).filter(Boolean);
    expect(different).toEqual([]);
  });
});
