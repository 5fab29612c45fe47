import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sample } from '../core/records.ts';
import type { DatasetStore, VersionRef } from '../core/store.ts';
import { toolePipeline } from '../pipelines/toole.ts';
import { CARRIED_OVER_TAG } from '../review/carry.ts';
import { exportReview } from '../review/export.ts';
import { publishToolQuestions } from './fixtures/review/tool-questions.ts';
import { fill, readRawSheet, writeSheet, type RawSheet } from './fixtures/review/sheets.ts';
import { tempDirs } from './helpers/files.ts';
import { review as cli } from './helpers/review-cli.ts';
import { versionSamples, versionRejects } from './helpers/version.ts';

/**
 * Sample decisions and tool decisions made from the same version, in either order: the tool
 * decisions re-run the recipe, and the sample decisions are carried onto the re-run version instead
 * of being left behind on a branch without them.
 */

const tmp = tempDirs('tk-review-carry-');

/** The weather tools the first tool question is about (merged into sky_report by the run). */
const WEATHER = ['weather_now', 'forecaster', 'sky_report', 'flight_status'];
const usesWeather = (s: Sample) => s.tools.some((t) => WEATHER.includes(t.name)) || (s.expected.labels ?? []).some((l) => WEATHER.includes(l));

interface Setup {
  home: string;
  store: DatasetStore;
  ref: VersionRef;
  sheet: RawSheet;
  toolSheet: RawSheet;
  /** Queued samples the weather decision leaves as they are, and one it changes. */
  untouched: string[];
  touched: string;
}

async function setup(): Promise<Setup> {
  const home = tmp();
  const { store, ref } = await publishToolQuestions(home);
  const exported = exportReview({ store, ref, format: 'csv', pipeline: toolePipeline, outDir: home });
  const sheet = readRawSheet(exported.files[0]);
  const queued = new Set(sheet.rows.map((row) => row[sheet.header.indexOf('sample_id')]));
  const samples = versionSamples(store, ref).filter((s) => queued.has(s.id));
  return {
    home,
    store,
    ref,
    sheet,
    toolSheet: readRawSheet(exported.toolSheet!.file),
    untouched: samples.filter((s) => !usesWeather(s)).map((s) => s.id),
    // A query asking for one weather tool: the re-run keeps it (same id), relabelled.
    touched: samples.find((x) => usesWeather(x) && x.category === 'toole/direct')!.id,
  };
}

/** The tool sheet with the weather question decided "keep apart" (the others left blank). */
function keepWeatherApart(s: Setup): string {
  const decision = s.toolSheet.header.indexOf('decision');
  const rows = s.toolSheet.rows.map((row, i) => (i === 0 ? row.map((cell, c) => (c === decision ? 'keep apart' : cell)) : row));
  expect(rows[0][s.toolSheet.header.indexOf('tools')].split('\n')).toEqual(WEATHER);
  return writeSheet(join(s.home, 'tools-filled.csv'), { header: s.toolSheet.header, rows });
}

/** Four decisions: accept, reject and edit on samples the tool decision leaves alone, accept on one it changes. */
function sampleDecisions(s: Setup): string {
  const [accepted, rejected, edited] = s.untouched;
  return writeSheet(
    join(s.home, 'samples-filled.csv'),
    fill(s.sheet, {
      [accepted]: { decision: 'accept', annotator: 'ann' },
      [rejected]: { decision: 'reject', annotator: 'ann', notes: 'off topic' },
      [edited]: { decision: 'edit', annotator: 'ann', corrected_query: 'A clearer question, please' },
      [s.touched]: { decision: 'accept', annotator: 'ann' },
    }),
  );
}

function checkCarried(s: Setup, version: string, reviewedVersion: string) {
  const [accepted, rejected, edited] = s.untouched;
  const ref = s.store.resolve(`toole@${version}`);
  const samples = new Map(versionSamples(s.store, ref).map((x) => [x.id, x]));
  expect(samples.get(accepted)!.meta.review).toEqual([expect.objectContaining({ version: reviewedVersion, decision: 'accept', answers: [expect.objectContaining({ annotator: 'ann' })] })]);
  expect(samples.has(rejected)).toBe(false);
  expect(versionRejects(s.store, ref).filter((r) => r.recordId === rejected)).toEqual([expect.objectContaining({ stage: 'review', reason: 'review_rejected', detail: 'off topic' })]);
  expect(samples.get(edited)!.dialogue[0].content).toBe('A clearer question, please');
  expect(samples.get(edited)!.meta.review).toEqual([expect.objectContaining({ decision: 'edit' })]);
  // The decision on a sample the tool decision changed is not applied: the sample is flagged for the next queue.
  expect(samples.get(s.touched)!.meta.review).toBeUndefined();
  expect(samples.get(s.touched)!.meta.tags).toContain(CARRIED_OVER_TAG);
  const queue = exportReview({ store: s.store, ref, format: 'csv', pipeline: toolePipeline, outDir: s.home });
  expect(queue.counts.byReason[`tag ${CARRIED_OVER_TAG}`]).toBe(1);
  return ref;
}

describe('sample decisions and tool decisions on one version', () => {
  it('a tool sheet imported onto a version whose sample decisions made a later version carries those decisions onto the re-run', { timeout: 300_000 }, async () => {
    const s = await setup();
    const sampleImport = await cli(s.home, 'import', 'toole@v1', sampleDecisions(s));
    expect(sampleImport.code, sampleImport.err).toBe(0);
    expect(sampleImport.out).toContain('published toole@v2 (parent v1)');
    // A second round of sample review, on v2: one more untouched sample accepted.
    const v2Sheet = readRawSheet(exportReview({ store: s.store, ref: s.store.resolve('toole@v2'), format: 'csv', pipeline: toolePipeline, outDir: join(s.home, 'v2'), selection: { randomRate: 1 } }).files[0]);
    const later = s.untouched[3];
    const second = await cli(s.home, 'import', 'toole@v2', writeSheet(join(s.home, 'v2-filled.csv'), fill(v2Sheet, { [later]: { decision: 'accept', annotator: 'lead' } })));
    expect(second.out).toContain('published toole@v3 (parent v2)');

    const tools = keepWeatherApart(s);
    const imported = await cli(s.home, 'import', 'toole@v1', tools, '--llm', 'offline', '--quiet');
    expect(imported.code, imported.err).toBe(0);
    expect(imported.out).toContain('published toole@v4 (parent v1, the recipe run again with these decisions)');
    expect(imported.out).toContain(`carried 3 of 4 sample decision(s) of toole@v2 onto toole@v4: published toole@v5; 1 not carried (the tool decisions changed the sample (its tools, dialogue or gold answer)): their samples are tagged ${CARRIED_OVER_TAG} for the next review export`);
    expect(imported.out).toContain('carried 1 of 1 sample decision(s) of toole@v3 onto toole@v5: published toole@v6');

    const v5 = checkCarried(s, 'v5', 'v4');
    const manifest = s.store.manifest(v5);
    expect(manifest.parent).toBe('v4');
    expect(manifest.stats.review).toMatchObject({ reviewed: 'v4', carriedFrom: { version: 'v2', reviewed: 'v1', decisions: 4, carried: 3, notCarried: [expect.objectContaining({ sampleId: s.touched, decision: 'accept' })] } });
    // The tool decision is in it too: the weather tools are kept apart.
    expect((manifest.config as { overlap: { decisions: { keep: string[] } } }).overlap.decisions.keep).toEqual(expect.arrayContaining(WEATHER));
    const v6 = s.store.resolve('toole@v6');
    expect(s.store.manifest(v6).parent).toBe('v5');
    expect(versionSamples(s.store, v6).find((x) => x.id === later)!.meta.review).toEqual([expect.objectContaining({ version: 'v5', decision: 'accept' })]);

    // The same tool sheet again finds every version it made.
    const again = await cli(s.home, 'import', 'toole@v1', tools, '--llm', 'offline', '--quiet', '--json');
    expect(JSON.parse(again.out)).toMatchObject({ status: 'existing', newVersion: 'v4', carried: [{ from: 'v2', status: 'existing', newVersion: 'v5' }, { from: 'v3', status: 'existing', newVersion: 'v6' }] });
    expect(s.store.versions('toole')).toEqual(['v1', 'v2', 'v3', 'v4', 'v5', 'v6']);
  });

  it('sample decisions imported onto a version that tool decisions already re-ran are carried onto that re-run', { timeout: 300_000 }, async () => {
    const s = await setup();
    const tools = await cli(s.home, 'import', 'toole@v1', keepWeatherApart(s), '--llm', 'offline', '--quiet');
    expect(tools.out).toContain('published toole@v2 (parent v1, the recipe run again with these decisions)');

    const imported = await cli(s.home, 'import', 'toole@v1', sampleDecisions(s), '--json');
    expect(imported.code, imported.err).toBe(0);
    expect(JSON.parse(imported.out)).toMatchObject({ status: 'published', newVersion: 'v3', carried: [{ from: 'v3', onto: 'v2', status: 'published', newVersion: 'v4', decisions: 4, carried: 3 }] });
    expect(s.store.manifest(s.store.resolve('toole@v3')).parent).toBe('v1');
    const v4 = checkCarried(s, 'v4', 'v2');
    expect(s.store.manifest(v4).parent).toBe('v2');
    expect(s.store.manifest(v4).stats.toolReview).toMatchObject({ reviewed: 'v1' });

    // Decisions made later on v3 (the branch without the tool decisions) follow onto its counterpart v4.
    const v3Sheet = readRawSheet(exportReview({ store: s.store, ref: s.store.resolve('toole@v3'), format: 'csv', pipeline: toolePipeline, outDir: join(s.home, 'v3'), selection: { randomRate: 1 } }).files[0]);
    const later = await cli(s.home, 'import', 'toole@v3', writeSheet(join(s.home, 'v3-filled.csv'), fill(v3Sheet, { [s.untouched[3]]: { decision: 'reject', annotator: 'lead' } })));
    expect(later.out).toContain('published toole@v5 (parent v3)');
    expect(later.out).toContain('carried 1 of 1 sample decision(s) of toole@v5 onto toole@v4: published toole@v6');
    expect(versionSamples(s.store, s.store.resolve('toole@v6')).map((x) => x.id)).not.toContain(s.untouched[3]);
  });
});
