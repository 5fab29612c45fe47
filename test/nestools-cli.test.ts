import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkNestoolsCommand } from '../bin/commands/check.ts';
import type { Values } from '../bin/command.ts';
import { UserError } from '../core/errors.ts';

const fixtures = new URL('./fixtures/nestools/', import.meta.url).pathname;
const reference = new URL('../../shared/data/reference/nestools/test_data.jsonl', import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), 'nestools-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function check(args: string[], values: Values = {}, json = true): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await checkNestoolsCommand.run(args, values, { out: (t) => lines.push(t), err: () => {}, json, home: scratch, cwd: fixtures, env: {} });
  return { code, out: lines.join('\n') };
}

describe('toolkiln check nestools', () => {
  it('reports JSONL records by test_id, a line that is not JSON by its line, and exits 1', async () => {
    const { code, out } = await check(['records.jsonl']);
    expect(code).toBe(1);
    const report = JSON.parse(out);
    expect(report).toMatchObject({ checked: 3, passed: 1, failed: 2 });
    expect(report.results.map((r: { id: unknown; ok: boolean }) => [r.id, r.ok])).toEqual([
      [1, true],
      [2, false],
      ['line 3', false],
    ]);
    expect(report.results[1].errors).toEqual([{ code: 'bad_reference', message: expect.stringContaining('API_call_7') }]);
    expect(report.results[2].errors[0].code).toBe('invalid_json');
  });

  it('checks a .py program by its file name and exits 0 when it passes', async () => {
    const { code, out } = await check(['wine-chain.py']);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual({ checked: 1, passed: 1, failed: 0, results: [{ id: 'wine-chain.py', ok: true, errors: [], warnings: [] }] });
  });

  it('prints one line per issue and a summary without --json', async () => {
    const { code, out } = await check(['wine-chain-broken.py', 'llm-answer.md'], {}, false);
    expect(code).toBe(1);
    expect(out).toContain('FAIL wine-chain-broken.py');
    expect(out).toMatch(/error line 46: subscript_or_attribute: data0\[0\]/);
    expect(out).not.toContain('llm-answer.md');
    expect(out.split('\n').pop()).toBe('checked 2: 1 passed, 1 failed');
  });

  it('turns warnings into errors with --strict', async () => {
    const program = readFileSync(join(fixtures, 'wine-chain.py'), 'utf8').replace('get_product_origin(data0)', 'get_product_origin(data1)');
    writeFileSync(join(scratch, 'mismatch.py'), program);
    const lenient = await check([join(scratch, 'mismatch.py')]);
    expect(lenient.code).toBe(0);
    expect(JSON.parse(lenient.out).results[0].warnings[0].code).toBe('type_mismatch');
    const strict = await check([join(scratch, 'mismatch.py')], { strict: true });
    expect(strict.code).toBe(1);
    expect(JSON.parse(strict.out).results[0].errors[0].code).toBe('type_mismatch');
  });

  it('passes the 1,000 released records', async () => {
    const { code, out } = await check([reference]);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ checked: 1000, passed: 1000, failed: 0 });
  });

  it('prints statistics beside the released set with --stats', async () => {
    const { out } = await check(['record-good.json'], { stats: true }, false);
    expect(out).toContain('| figure | checked | reference |');
    expect(out).toMatch(/\| nested samples \| 1 \(100\.0%\) \| 830 \(83\.0%\) \|/);
  });

  it('exits 2 on a file it cannot read or check', async () => {
    for (const args of [['missing.jsonl'], [join(scratch, 'notes.csv')]]) {
      writeFileSync(join(scratch, 'notes.csv'), 'a,b\n');
      const error = await check(args).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UserError);
      expect((error as UserError).exitCode).toBe(2);
    }
  });
});
