import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { parseArgs } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewCommands } from '../bin/commands/review.ts';
import { commonOptions } from '../bin/flags.ts';
import { UserError } from '../core/errors.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import type { Sample } from '../core/records.ts';
import { runPipeline } from '../core/run.ts';
import { DatasetStore, type VersionRef } from '../core/store.ts';
import type { ToolQuestion } from '../core/tool-review.ts';
import { mtuPipeline } from '../pipelines/mtu.ts';
import { toolePipeline } from '../pipelines/toole.ts';
import { exportReview } from '../review/export.ts';
import { importToolReview } from '../review/tool-import.ts';
import { TOOL_SHEET_COLUMNS, validateToolDecision } from '../review/tool-sheet.ts';
import type { PipelineDefinition } from '../core/pipeline.ts';
import { TOOLE_FIXTURE_CONFIG } from './helpers/toole-fixture.ts';
import { versionSamples } from './helpers/version.ts';

const PROJECT = new URL('..', import.meta.url).pathname;

/** A sheet as a spreadsheet reads it: header → cells, one record per row. */
function readSheet(path: string): Record<string, string>[] {
  return parse(readFileSync(path), { bom: true, columns: true });
}

/** Writes rows back as Excel would (BOM, CRLF) or LibreOffice with `;` and LF, no BOM. */
function writeSheet(path: string, rows: Record<string, string>[], variant: 'excel' | 'libreoffice' = 'excel'): string {
  const table = [[...TOOL_SHEET_COLUMNS], ...rows.map((r) => TOOL_SHEET_COLUMNS.map((c) => r[c] ?? ''))];
  writeFileSync(path, variant === 'excel' ? stringify(table, { bom: true, record_delimiter: 'windows' }) : stringify(table, { delimiter: ';', record_delimiter: 'unix' }));
  return path;
}

interface Fixture {
  home: string;
  store: DatasetStore;
  ref: VersionRef;
  pipeline: PipelineDefinition;
  sheet: string;
  toolRows: number;
  queueReasons: string[];
}

async function publishAndExport(pipeline: PipelineDefinition, options: { configOverrides?: unknown; limit?: number }): Promise<Fixture> {
  const home = mkdtempSync(join(tmpdir(), `tk-tool-sheet-${pipeline.name}-`));
  const run = await runPipeline({ pipeline, ...options, llm: new OfflineGateway(42), home, projectDir: PROJECT, cwd: PROJECT, progress: { quiet: true } });
  const store = new DatasetStore(home);
  const result = exportReview({ store, ref: run.ref!, format: 'csv', pipeline });
  const queue = JSON.parse(readFileSync(result.queueFile, 'utf8')) as { items: { reasons: { kind: string; name?: string; tag?: string }[] }[] };
  return {
    home,
    store,
    ref: run.ref!,
    pipeline,
    sheet: result.toolSheet?.file ?? '',
    toolRows: result.toolSheet?.rows ?? 0,
    queueReasons: queue.items.flatMap((i) => i.reasons.map((r) => r.name ?? r.tag ?? r.kind)),
  };
}

function importSheets(f: Fixture, files: string[]) {
  return importToolReview({ store: f.store, ref: f.ref, files: files.map((path) => ({ path, shown: path.slice(f.home.length + 1) })), pipeline: f.pipeline, llm: new OfflineGateway(42), home: f.home, projectDir: PROJECT, cwd: PROJECT, progress: { quiet: true } });
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(UserError);
  const message = (error as Error).message;
  expect(message).not.toContain('\n');
  return message;
}

/** `toolkiln review …` as bin/cli.ts runs it (human output, no progress lines). */
async function cli(home: string, ...argv: string[]) {
  const command = reviewCommands.find((c) => c.path[1] === argv[0])!;
  const parsed = parseArgs({ args: ['review', ...argv], options: { ...commonOptions, ...command.options }, allowPositionals: true, strict: true });
  const out: string[] = [];
  const io = { out: (t: string) => out.push(t), err: () => {}, json: parsed.values.json === true, home, cwd: home, env: {} };
  const code = await command.run(parsed.positionals.slice(2), parsed.values, io);
  return { code, out: out.join('\n') };
}

const toolCalls = (s: Sample) => [...(s.expected.calls ?? []), ...Object.values(s.expected.turns ?? {}).flat()].map((c) => c.tool);

describe('tool review sheet: MTU merge conflicts', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await publishAndExport(mtuPipeline, { limit: 300 });
  }, 300_000);
  afterAll(() => rmSync(f.home, { recursive: true, force: true }));

  it('export writes one row per conflict and leaves the conflict out of the sample queue', () => {
    const bytes = readFileSync(f.sheet);
    expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(bytes.toString('utf8')).toContain('\r\n');
    const rows = readSheet(f.sheet);
    expect(f.toolRows).toBe(rows.length);
    // SGD's two restaurant and two flight services each have tools of one name, renamed apart by their service (a person decides whether they are one tool).
    expect(rows.map((r) => r.tools.split('\n').sort())).toEqual([
      ['BookRestaurant', 'ReserveRestaurant1', 'ReserveRestaurant2'],
      ['GetAirfare', 'GetFlight'],
      ['FindRestaurants1', 'FindRestaurants2'],
      ['SearchOnewayFlight3', 'SearchOnewayFlight4'],
      ['SearchRoundtripFlights3', 'SearchRoundtripFlights4'],
    ]);
    for (const row of rows) {
      expect(row.allowed_decisions).toBe('merge, keep apart, rename');
      expect(row.sample_counts.split('\n')).toHaveLength(row.tools.split('\n').length);
      expect(row.example_queries).toMatch(/^\w+: \S/);
    }
    // Every sample using those tools still carries the failed check, but the queue asks no sample about it.
    expect(versionSamples(f.store, f.ref).some((s) => s.meta.checks.some((c) => c.name === 'merge-tools-mtu' && !c.pass))).toBe(true);
    expect(f.queueReasons).not.toContain('merge-tools-mtu');
    expect(f.queueReasons).not.toContain('review:merge-conflict');
  });

  it('refuses a sheet with problems, naming file, row and column, and publishes nothing', async () => {
    const rows = readSheet(f.sheet);
    const bad = [
      { ...rows[0], decision: 'merge', merged_name: 'GetFlight' }, // another tool's name
      { ...rows[1], tools: 'GetFlight', decision: 'keep apart', notes: '=HYPERLINK("x")' }, // read-only edited, typed formula
      { ...rows[0], question_id: 'tq-000000000000', decision: 'merge' },
      { ...rows[1], decision: 'decompose', target_tools: 'GetFlight' }, // not allowed for MTU
    ];
    const sheet = writeSheet(join(f.home, 'bad.csv'), bad);
    const message = await refusal(importSheets(f, [sheet]));
    expect(message).toContain('bad.csv:2:merged_name: "GetFlight" is already the name of another tool');
    expect(message).toContain('bad.csv:3:notes:');
    expect(message).toContain('bad.csv:3:tools: read-only column "tools" was edited');
    expect(message).toContain('bad.csv:4:question_id: unknown question');
    expect(message).toContain('more in');
    expect(readFileSync(join(f.store.derivedDir(f.ref, 'review'), 'tool-import-problems.csv'), 'utf8')).toContain('(this question does not allow it)');
    expect(f.store.versions('mtu')).toEqual(['v1']);
  });

  it('refuses annotators who disagree on a question, naming both rows', async () => {
    const rows = readSheet(f.sheet);
    const a = writeSheet(join(f.home, 'ann-a.csv'), [{ ...rows[0], decision: 'merge' }]);
    const b = writeSheet(join(f.home, 'ann-b.csv'), [{ ...rows[0], decision: 'keep apart' }]);
    const message = await refusal(importSheets(f, [a, b]));
    expect(message).toMatch(/annotators disagree on question tq-\w+: ann-a \(ann-a\.csv row 2\): merge BookRestaurant, ReserveRestaurant1, ReserveRestaurant2 into \w+; ann-b \(ann-b\.csv row 2\): keep BookRestaurant, ReserveRestaurant1, ReserveRestaurant2 apart/);
    expect(f.store.versions('mtu')).toEqual(['v1']);
  });

  it('a decided sheet (saved by LibreOffice) publishes the next version: merged name in the samples, kept-apart tools no longer flagged, decisions in the manifest', async () => {
    const rows = readSheet(f.sheet);
    const restaurant = rows.findIndex((r) => r.tools.includes('BookRestaurant'));
    const decided = rows.map((r, i) => (i === restaurant ? { ...r, decision: 'Merge', merged_name: 'ReserveTable', annotator: 'lead' } : { ...r, decision: 'keep apart', annotator: 'lead', notes: 'fares and flights are different questions' }));
    const sheet = writeSheet(join(f.home, 'decided.csv'), decided, 'libreoffice');
    const result = await importSheets(f, [sheet]);
    expect(result.status).toBe('published');
    const next: VersionRef = f.store.resolve(`mtu@${result.newVersion}`);
    const manifest = f.store.manifest(next);
    expect(manifest.parent).toBe('v1');
    expect((manifest.config as { clustering: { decisions: unknown } }).clustering.decisions).toEqual({
      merge: [{ tools: ['BookRestaurant', 'ReserveRestaurant1', 'ReserveRestaurant2'], into: 'ReserveTable' }],
      keepApart: [['GetFlight', 'GetAirfare'], ['FindRestaurants1', 'FindRestaurants2'], ['SearchOnewayFlight3', 'SearchOnewayFlight4'], ['SearchRoundtripFlights3', 'SearchRoundtripFlights4']],
      rename: [],
    });
    const review = manifest.stats.toolReview as { reviewed: string; decisions: { decision: string; annotators: string[] }[] };
    expect(review.reviewed).toBe('v1');
    expect(review.decisions.map((d) => [d.decision, d.annotators])).toEqual([['merge', ['lead']], ...Array(4).fill(['keep-apart', ['lead']])]);

    const samples = versionSamples(f.store, next);
    const calls = samples.flatMap(toolCalls);
    expect(calls).toContain('ReserveTable');
    expect(calls.filter((t) => ['BookRestaurant', 'ReserveRestaurant1', 'ReserveRestaurant2'].includes(t))).toEqual([]);
    expect(calls).toContain('GetAirfare');
    expect(samples.some((s) => s.meta.checks.some((c) => c.name === 'merge-tools-mtu'))).toBe(false);
    expect(exportReview({ store: f.store, ref: next, format: 'csv', pipeline: mtuPipeline }).toolSheet).toBeNull();

    // The same decisions again find that version.
    expect((await importSheets(f, [sheet])).status).toBe('existing');
  }, 300_000);
});

describe('tool review sheet: ToolE merge proposals nobody decided', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await publishAndExport(toolePipeline, { configOverrides: { ...TOOLE_FIXTURE_CONFIG, overlap: { ...TOOLE_FIXTURE_CONFIG.overlap, decisions: undefined, undecided: 'merge', threshold: 0.7 } } });
  }, 300_000);
  afterAll(() => rmSync(f.home, { recursive: true, force: true }));

  it('export writes one row per undecided proposal; the relabelled queries leave the sample queue, and no reason says "X was merged into X"', () => {
    const rows = readSheet(f.sheet);
    expect(rows.map((r) => r.tools.split('\n'))).toEqual([['weather_now', 'forecaster', 'sky_report', 'flight_status'], ['hotel_deals', 'travel_all'], ['stay_finder', 'flight_finder', 'recipe_box']]);
    expect(rows[0].proposal).toMatch(/merged into sky_report without a decision/);
    expect(rows[0].allowed_decisions).toBe('merge, keep apart, decompose, rename');
    expect(f.queueReasons).not.toContain('merge-tools-metatool:auto');
    expect(f.queueReasons).not.toContain('review:auto-merge');
    const reasons = versionSamples(f.store, f.ref).flatMap((s) => s.meta.checks.filter((c) => c.name === 'merge-tools-metatool:auto').map((c) => c.reason!));
    expect(reasons.length).toBeGreaterThan(0);
    for (const reason of reasons) expect(reason).not.toMatch(/\b(\w+) was merged into \1\b/);
    expect(reasons).toContain('weather_now, forecaster, flight_status were merged into sky_report (which keeps its name) by a proposal nobody decided (undecided: merge); confirm it or decide it in the tool sheet (review export)');
  });

  it('the CLI: export prints the queue per reason and the tool sheet, import of a tool sheet publishes the next version', async () => {
    const exported = await cli(f.home, 'export', `${f.ref.name}@v1`, '--format', 'csv', '--out', 'cli');
    expect(exported.out).toMatch(/per reason: check simple_arithmetic \d+, random \d+, tag review:simple-arithmetic \d+/);
    expect(exported.out).toContain('tool sheet: 3 tool-level question(s)');
    const rows = readSheet(join(f.home, 'cli', `${f.ref.name}-v1-tools.csv`));
    writeSheet(join(f.home, 'cli', 'keep.csv'), [{ ...rows[0], decision: 'keep apart' }, rows[1], rows[2]]);
    const imported = await cli(f.home, 'import', `${f.ref.name}@v1`, 'cli/keep.csv', '--llm', 'offline', '--quiet');
    expect(imported.code).toBe(0);
    expect(imported.out).toContain('1 of 3 question(s) decided, 2 left blank');
    expect(imported.out).toMatch(/published \S+@v2 \(parent v1/);
    // Questions left blank stay questions in the next version.
    expect((await cli(f.home, 'export', `${f.ref.name}@v2`, '--format', 'csv', '--out', 'cli2')).out).toContain('tool sheet: 2 tool-level question(s)');
  }, 300_000);

  it('merge, decompose and rename decisions re-run the recipe into the next version', async () => {
    const rows = readSheet(f.sheet);
    const sheet = writeSheet(join(f.home, 'decided.csv'), [
      { ...rows[0], decision: 'merge', merged_name: 'WeatherTool', target_tools: 'weather_now, forecaster, sky_report' },
      { ...rows[1], decision: 'decompose', target_tools: 'hotel_deals\nflight_finder' },
      { ...rows[2], decision: 'rename', new_name: 'stay_finder -> LodgingFinder' },
    ]);
    const result = await importSheets(f, [sheet]);
    const next = f.store.resolve(`${f.ref.name}@${result.newVersion}`);
    const manifest = f.store.manifest(next);
    expect(manifest.parent).toBe('v1');
    expect((manifest.config as { overlap: { decisions: unknown } }).overlap.decisions).toEqual({
      merge: [{ tools: ['weather_now', 'forecaster', 'sky_report'], into: 'WeatherTool' }, { tools: ['stay_finder'], into: 'LodgingFinder' }],
      decompose: [{ tool: 'travel_all', into: ['hotel_deals', 'flight_finder'], queries: {} }],
      keep: ['flight_status', 'hotel_deals', 'flight_finder', 'recipe_box'],
    });
    const labels = new Set(versionSamples(f.store, next).flatMap((s) => s.expected.labels ?? []));
    for (const name of ['WeatherTool', 'LodgingFinder', 'flight_status']) expect(labels).toContain(name);
    for (const gone of ['weather_now', 'sky_report', 'stay_finder', 'travel_all']) expect(labels).not.toContain(gone);
    expect(versionSamples(f.store, next).some((s) => s.meta.checks.some((c) => c.name === 'merge-tools-metatool:auto'))).toBe(false);
  }, 300_000);
});

describe('validateToolDecision (one decision, field errors)', () => {
  const question: ToolQuestion = {
    id: 'tq-1',
    kind: 'merge-proposal',
    tools: ['a_tool', 'b_tool', 'c_tool'].map((name) => ({ name, description: '', samples: 1, examples: [] })),
    proposal: 'alike',
    suggestedName: 'a_tool',
    decisions: ['merge', 'keep-apart', 'decompose', 'rename'],
  };
  const ctx = { question, knownTools: new Set(['a_tool', 'b_tool', 'c_tool', 'other']) };
  const errors = (input: Parameters<typeof validateToolDecision>[0]) => validateToolDecision(input, ctx).errors.map((e) => `${e.field}: ${e.message}`);

  it('returns the decision in the shape a recipe applies', () => {
    expect(validateToolDecision({ decision: 'MERGE', target_tools: 'a_tool, b_tool' }, ctx)).toEqual({ status: 'decided', errors: [], decision: { question: 'tq-1', tools: ['a_tool', 'b_tool', 'c_tool'], decision: 'merge', members: ['a_tool', 'b_tool'], into: 'a_tool' } });
    expect(validateToolDecision({ decision: 'rename', new_name: 'b_tool → B2' }, ctx).status).toBe('decided');
    expect(validateToolDecision({ decision: '' }, ctx).status).toBe('pending');
  });

  it('names the field of each problem', () => {
    expect(errors({ decision: 'fuse' })).toEqual(['decision: decision "fuse" is not one of merge, keep apart, decompose, rename']);
    expect(errors({ decision: '', merged_name: 'x' })).toEqual(['merged_name: merged_name is filled in but the decision is empty: write one of merge, keep apart, decompose, rename (or clear merged_name)']);
    expect(errors({ decision: 'keep apart', new_name: 'x' })).toEqual(['new_name: "keep apart" takes no new_name: clear it']);
    expect(errors({ decision: 'merge', merged_name: 'other' })).toEqual(['merged_name: "other" is already the name of another tool: choose a new name']);
    // In any letter case (MetaTool's prompts and a model's answers name "Weather" and "weather" alike), but a tool may change its own case.
    expect(errors({ decision: 'merge', merged_name: 'Other' })).toEqual(['merged_name: "Other" is already the name of another tool (other, in other letter case): choose a new name']);
    expect(errors({ decision: 'rename', new_name: 'a_tool -> A_Tool' })).toEqual([]);
    expect(errors({ decision: 'merge', merged_name: '-x y' })).toEqual(['merged_name: "-x y" is not a tool name: use letters, digits, _ and - (up to 64, not starting with -)']);
    expect(errors({ decision: 'merge', target_tools: 'a_tool' })).toEqual(["target_tools: a merge needs two or more of the question's tools (leave it empty to merge all)"]);
    expect(errors({ decision: 'decompose', target_tools: 'nowhere' })).toEqual(['target_tools: unknown tool nowhere: name tools of this version']);
    expect(errors({ decision: 'decompose', target_tools: 'a_tool, b_tool, c_tool' })).toEqual(['target_tools: target_tools lists every tool of the question: leave out the one(s) to decompose']);
    expect(errors({ decision: 'rename', new_name: 'a_tool -> __proto__\nz_tool -> Z' })).toEqual([
      'new_name: "__proto__" is not allowed as a tool name (it names a part of every JavaScript object)',
      'new_name: z_tool is not among this question\'s tools (a_tool, b_tool, c_tool)',
    ]);
  });
});
