import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkProgram } from '../stages/nestools/check-program.ts';
import { checkNesToolsRecord } from '../stages/nestools/check-records.ts';
import { parseProgram } from '../stages/nestools/parse-program.ts';

const fixtures = new URL('./fixtures/nestools/', import.meta.url);
const WINE = readFileSync(new URL('wine-chain.py', fixtures), 'utf8');
const RECORD = JSON.parse(readFileSync(new URL('record-good.json', fixtures), 'utf8'));

function programCodes(code: string, strict = false): string[] {
  return checkProgram(parseProgram(code), { strict }).errors.map((e) => e.code);
}

function programWarnings(code: string): string[] {
  return checkProgram(parseProgram(code)).warnings.map((e) => e.code);
}

/** The wine program with one line of text replaced (the line must exist). */
function edit(code: string, from: string, to: string): string {
  expect(code).toContain(from);
  return code.replace(from, to);
}

describe('program check', () => {
  it('passes the correct program with no warnings', () => {
    const check = checkProgram(parseProgram(WINE), { strict: true });
    expect(check.errors).toEqual([]);
    expect(check.ok).toBe(true);
  });

  // Each broken program triggers its code; its corrected twin is the wine program itself.
  const cases: [string, () => string][] = [
    ['syntax_error', () => edit(WINE, 'data2 = get_product_origin(data0)', 'data2 = get_product_origin(data0')],
    ['no_main', () => edit(edit(WINE, 'def main():', 'def run_chain():'), '    main()', '    run_chain()')],
    ['unknown_function', () => edit(WINE, 'get_product_origin(data0)', 'get_origin(data0)')],
    ['too_many_positional', () => edit(WINE, 'get_product_origin(data0)', 'get_product_origin(data0, "bottle")')],
    ['unknown_parameter', () => edit(WINE, 'get_product_origin(data0)', 'get_product_origin(data0, country="FR")')],
    ['missing_required', () => edit(WINE, 'get_export_quantity(data2, "2023-10-08", data0)', 'get_export_quantity(data2, "2023-10-08")')],
    ['undefined_variable', () => edit(WINE, 'get_product_origin(data0)', 'get_product_origin(data9)')],
    ['undefined_variable', () => edit(WINE, 'data3 = get_export_quantity(data2,', 'data3 = get_export_quantity(data3,')],
    ['arity_mismatch', () => edit(WINE, 'data0, data1 = get_top_selling_wine', 'data0 = get_top_selling_wine')],
    ['arity_mismatch', () => edit(WINE, 'data2 = get_product_origin(data0)', 'get_product_origin(data0)')],
    ['subscript_or_attribute', () => edit(WINE, 'get_product_origin(data0)', 'get_product_origin(data0[0])')],
    ['subscript_or_attribute', () => edit(WINE, 'get_product_origin(data0)', 'get_product_origin(data0.name)')],
    ['subscript_or_attribute', () => edit(WINE, 'data2 = get_product_origin(data0)', 'data2 = data0.strip()')],
    ['builtin_call', () => edit(WINE, 'get_product_origin(data0)', 'get_product_origin(str(data0))')],
    ['builtin_call', () => edit(WINE, 'data2 = get_product_origin(data0)', 'data2 = get_product_origin(data0)\n    print(data2)')],
    ['unsupported_syntax', () => edit(WINE, 'get_product_origin(data0)', 'get_product_origin(get_top_selling_wine("Napa", "2023-10-08"))')],
    ['duplicate_argument', () => edit(WINE, 'get_product_origin(data0)', 'get_product_origin(data0, product="x")')],
    ['bad_docstring', () => edit(WINE, '    origin (str): where the product is made', '    where the product is made')],
    ['no_task', () => edit(WINE, '    # Which red wine sold best in California on October 8th, 2023? Tell me where it\n    # comes from and how much of it was exported from there on that day.\n', '')],
  ];
  for (const [code, broken] of cases) {
    it(`reports ${code} and not for its twin`, () => {
      expect(programCodes(broken())).toContain(code);
      expect(programCodes(WINE)).not.toContain(code);
    });
  }

  it('reports a producer/consumer type mismatch as a warning, an error under --strict', () => {
    const mismatched = edit(WINE, 'get_product_origin(data0)', 'get_product_origin(data1)'); // float sales → str product
    expect(programCodes(mismatched)).toEqual([]);
    expect(programWarnings(mismatched)).toContain('type_mismatch');
    expect(programCodes(mismatched, true)).toContain('type_mismatch');
    expect(programWarnings(WINE)).not.toContain('type_mismatch');
  });

  it('gives line numbers of the answer, not of the code block', () => {
    const answer = `Here you go:\n\n\`\`\`python\n${edit(WINE, 'get_product_origin(data0)', 'get_origin(data0)')}\`\`\`\n`;
    const error = checkProgram(parseProgram(answer)).errors.find((e) => e.code === 'unknown_function');
    const line = answer.split('\n').findIndex((l) => l.includes('get_origin(')) + 1;
    expect(error?.line).toBe(line);
  });
});

describe('record check', () => {
  const clone = () => JSON.parse(JSON.stringify(RECORD));
  const codes = (record: unknown, strict = false) => checkNesToolsRecord(record, { strict }).errors.map((e) => e.code);

  it('passes the correct record', () => {
    expect(checkNesToolsRecord(RECORD, { strict: true })).toMatchObject({ id: 1, ok: true, errors: [], warnings: [] });
  });

  const cases: [string, (r: any) => void][] = [
    ['unknown_api', (r) => (r.call[1].api_name = 'find_book')],
    ['unknown_parameter', (r) => (r.call[1].parameters.room = 'B')],
    ['missing_required', (r) => delete r.call[0].parameters.isbn],
    ['responses_mismatch', (r) => r.call[2].responses.pop()],
    ['bad_reference', (r) => (r.call[1].parameters.book_info = 'API_call_7')],
    ['bad_reference', (r) => (r.call[2].parameters.stops = ['reading room', 'API_call_3'])],
    ['bad_reference', (r) => (r.call[0].parameters.isbn = 'API_call_0')],
    ['misnumbered_reference', (r) => (r.call[1].responses = ['API_call_5'])],
    ['misnumbered_reference', (r) => (r.call[0].responses = ['API_call_1', 'API_call_0'])],
    ['malformed_record', (r) => delete r.task],
    ['duplicate_api', (r) => r.api.push(r.api[0])],
    ['bad_api_spec', (r) => r.api[1].required.push('aisle')],
  ];
  for (const [code, breakIt] of cases) {
    it(`reports ${code} and not for its twin`, () => {
      const broken = clone();
      breakIt(broken);
      expect(codes(broken)).toContain(code);
      expect(codes(clone())).not.toContain(code);
    });
  }

  it('reports a type mismatch as a warning, an error under --strict', () => {
    const broken = clone();
    broken.call[1].parameters.book_info = 'API_call_1'; // bool "available" → str book_info
    expect(codes(broken)).toEqual([]);
    expect(checkNesToolsRecord(broken).warnings.map((w) => w.code)).toContain('type_mismatch');
    expect(codes(broken, true)).toContain('type_mismatch');
  });

  it('accepts a placeholder inside a list for a list parameter', () => {
    const record = clone();
    record.call[2].parameters.stops = ['reading room', 'API_call_2'];
    expect(checkNesToolsRecord(record, { strict: true }).ok).toBe(true);
  });

  it('passes all 1,000 released records, also under --strict', () => {
    const lines = readFileSync(new URL('../../shared/data/reference/nestools/test_data.jsonl', import.meta.url), 'utf8').trim().split('\n');
    const failed = lines.map((line) => checkNesToolsRecord(JSON.parse(line), { strict: true })).filter((r) => !r.ok);
    expect(lines).toHaveLength(1000);
    expect(failed).toEqual([]);
  });
});

describe('in-context example pool', () => {
  it('holds programs that pass the strict check and state every value in their task', async () => {
    const { EXAMPLE_POOL } = await import('../prompts/nestools-example-pool.ts');
    const { programToChain } = await import('../stages/nestools/convert.ts');
    const { valueMentions } = await import('../stages/nestools/query-values.ts');
    const { chainStructure } = await import('../stages/nestools/structure.ts');
    const shapes = new Set<string>();
    for (const example of EXAMPLE_POOL) {
      const program = parseProgram(example.answer);
      const check = checkProgram(program, { strict: true });
      expect(check.errors, example.domain).toEqual([]);
      const chain = programToChain(program, check);
      expect(valueMentions(chain.task, chain.calls).filter((m) => m.presence === 'missing' || m.presence === 'loose'), example.domain).toEqual([]);
      expect(chainStructure(chain.calls).shape, example.domain).toBe(example.structure);
      shapes.add(chainStructure(chain.calls).kind);
    }
    expect([...shapes].sort()).toEqual(['chain', 'fan-in', 'fan-out', 'mixed']);
  });
});
