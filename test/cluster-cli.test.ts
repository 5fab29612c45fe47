import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolsClusterCommand } from '../bin/commands/tools.ts';
import type { Io } from '../bin/command.ts';

const FIXTURE = new URL('./fixtures/embed/tools-mixed.jsonl', import.meta.url).pathname;
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolkiln-tools-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `toolkiln tools cluster …` as the CLI would (flags parsed with the command's options). */
async function cluster(args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const parsed = parseArgs({ args, options: { ...toolsClusterCommand.options, json: { type: 'boolean' } }, allowPositionals: true, strict: true });
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (t) => out.push(t), err: (t) => err.push(t), json: parsed.values.json === true, home: dir, cwd: dir, env: {} };
  const code = await toolsClusterCommand.run(parsed.positionals, parsed.values, io);
  return { code, out, err };
}

describe('toolkiln tools cluster', () => {
  it('reads mixed tool formats and reports clusters, reduction and silhouette as JSON', async () => {
    const { code, out, err } = await cluster([FIXTURE, '--threshold', '0.3', '--json']);
    expect(code).toBe(0);
    expect(err.join('\n')).toMatch(/1 repeated tool name\(s\) skipped \(first kept\): get_weather/);
    const result = JSON.parse(out[0]);
    expect(result).toMatchObject({ tools: 7, repeatedNames: 1, clusters: 4, reductionRatio: 1.75, linkage: 'average', threshold: 0.3, mode: 'exact', by: 'name+parameters' });
    expect(typeof result.silhouette).toBe('number');
    const groups = result.clusterList.map((c: { members: string[] }) => [...c.members].sort());
    expect(groups).toEqual([['find_movie', 'lookupMovies', 'search_movie'], ['bookHotel', 'reserveHotel'], ['get_weather'], ['delete_user']]);
  });

  it('prints a summary and writes the plot', async () => {
    const plot = join(dir, 'plot.html');
    const { code, out } = await cluster([FIXTURE, '--clusters', '3', '--linkage', 'complete', '--plot', plot]);
    expect(code).toBe(0);
    expect(out[0]).toBe('7 tools → 3 clusters (reduction 2.33:1)');
    expect(out.join('\n')).toMatch(/silhouette: -?\d\.\d{4}/);
    expect(out.at(-1)).toBe(`plot: ${plot}`);
    const html = readFileSync(plot, 'utf8');
    expect(html.match(/<circle /g)).toHaveLength(7);
    expect(html).toContain('lookupMovies');
    expect(html).not.toContain('<script');
  });

  it('fails clearly on bad input', async () => {
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, '\n\n');
    await expect(cluster([empty])).rejects.toThrow(/empty.jsonl: no tools in the file/);
    const nameless = join(dir, 'nameless.jsonl');
    writeFileSync(nameless, '{"name": "a"}\n{"description": "no name"}\n');
    await expect(cluster([nameless])).rejects.toThrow(/nameless.jsonl:2: tool has no name/);
    const broken = join(dir, 'broken.jsonl');
    writeFileSync(broken, '{"name": "a"}\n{"name": \n');
    await expect(cluster([broken])).rejects.toThrow(/broken.jsonl:2: not valid JSON/);
    await expect(cluster([FIXTURE, '--threshold', '5'])).rejects.toThrow(/threshold 5 is out of range/);
    await expect(cluster([FIXTURE, '--threshold', 'abc'])).rejects.toThrow(/--threshold takes a number/);
    await expect(cluster([FIXTURE, '--clusters', '99'])).rejects.toThrow(/cluster count 99 is out of range/);
    await expect(cluster([FIXTURE, '--linkage', 'ward'])).rejects.toThrow(/--linkage must be one of single, complete, average/);
    await expect(cluster([join(dir, 'missing.jsonl')])).rejects.toThrow(/tools file not found/);
    await expect(cluster([])).rejects.toThrow(/missing argument/);
  });

  it('clusters the 390 MetaTool plugins (a JSON array) by description', async () => {
    const plugins = new URL('../../shared/data/sources/metatool/plugin_info.json', import.meta.url).pathname;
    const { code, out } = await cluster([plugins, '--by', 'description', '--threshold', '0.5', '--json']);
    expect(code).toBe(0);
    const result = JSON.parse(out[0]);
    expect(result.tools).toBeGreaterThan(300);
    expect(result.clusters).toBeLessThan(result.tools);
  });
});
