import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportReview } from '../review/export.ts';
import { importReview } from '../review/import.ts';
import { SHEET_COLUMNS } from '../review/sheet.ts';
import { publishReviewDataset, reviewSamples } from './fixtures/review/dataset.ts';
import { versionSamples, versionRejects } from './helpers/version.ts';

const handWritten = new URL('./fixtures/review/labelstudio-export.json', import.meta.url).pathname;

/** The three-sample dataset the hand-written export was annotated on (every sample queued). */
function threeSamples() {
  const home = mkdtempSync(join(tmpdir(), 'tk-review-ls-'));
  const samples = reviewSamples().filter((s) => ['rv-00', 'rv-02', 'rv-04'].includes(s.id));
  return { home, ...publishReviewDataset(home, { review: { randomRate: 1 } }, samples) };
}

describe('Label Studio export', () => {
  it('writes tasks and a labeling config: Paragraphs for the dialogue, Choices for the decision, TextAreas for corrections', () => {
    const { store, ref } = threeSamples();
    const result = exportReview({ store, ref, format: 'labelstudio' });
    expect(result.files.map((f) => f.slice(`${ref.dir}.derived`.length + 1))).toEqual(['review/demo-v1-labelstudio-config.xml', 'review/demo-v1-tasks.json']);
    const xml = readFileSync(result.files[0], 'utf8');
    expect(xml).toMatch(/<Paragraphs name="dialogue" value="\$dialogue" layout="dialogue" nameKey="author" textKey="text"\/>/);
    expect(xml).toMatch(/<Choices name="decision" toName="dialogue" choice="single"[^>]*>\s*<Choice value="accept"\/>\s*<Choice value="reject"\/>\s*<Choice value="edit"\/>\s*<\/Choices>/);
    for (const name of ['corrected_query', 'corrected_calls', 'notes']) expect(xml).toMatch(new RegExp(`<TextArea name="${name}" toName="dialogue"[^>]*/>`));
    // every $variable the config reads is in the task data
    const tasks = JSON.parse(readFileSync(result.files[1], 'utf8'));
    const variables = [...xml.matchAll(/value="\$(\w+)"/g)].map((m) => m[1]);
    for (const task of tasks) for (const v of variables) expect(task.data).toHaveProperty(v);
    expect(Object.keys(tasks[0].data)).toEqual(SHEET_COLUMNS.slice(0, SHEET_COLUMNS.indexOf('decision')));
    expect(tasks[1].data.dialogue).toEqual([
      { author: 'user', text: '-5 degrees in Montréal? "quoted", with commas\nand a second line' },
      { author: 'assistant', text: '→ call_0: get_weather(city="Montréal", unit="celsius")' },
    ]);
    // The hand-written export was annotated on exactly these tasks.
    const exported = JSON.parse(readFileSync(handWritten, 'utf8'));
    expect(exported.map((t: { data: unknown }) => t.data)).toEqual(tasks.map((t: { data: unknown }) => t.data));
  });

  it('writes one tasks file per annotator', () => {
    const { store, ref } = threeSamples();
    const result = exportReview({ store, ref, format: 'labelstudio', annotators: 2, overlap: 1 });
    expect(result.sheets.map((s) => [s.annotator, s.items, s.file.slice(`${ref.dir}.derived`.length + 1)])).toEqual([
      ['annotator-1', 3, 'review/demo-v1-tasks-annotator-1.json'],
      ['annotator-2', 3, 'review/demo-v1-tasks-annotator-2.json'],
    ]);
  });
});

describe("import of Label Studio's JSON export", () => {
  it('applies a hand-written export: one row per annotation, cancelled ones skipped, annotators from completed_by', () => {
    const { store, ref } = threeSamples();
    exportReview({ store, ref, format: 'labelstudio' });
    const result = importReview({ store, ref, files: [{ path: handWritten, shown: 'labelstudio-export.json' }] });
    expect(result.problems).toEqual([]);
    expect(result).toMatchObject({ status: 'published', newVersion: 'v2', counts: { rows: 6, decided: 6, items: 3, accepted: 1, edited: 1, rejected: 1, disagreements: 0 } });
    // Both annotators agree on all three items (the corrected calls equal to the original count as no change).
    expect(result.agreement).toMatchObject({ raters: ['bob@lab.example', 'labelstudio-user-1'], items: 3, observed: 1, nestoolsP: 1, fleiss: 1 });
    expect(result.agreement.cohen).toEqual([{ a: 'bob@lab.example', b: 'labelstudio-user-1', items: 3, observed: 1, kappa: 1 }]);

    const next = store.resolve('demo@v2');
    const samples = new Map(versionSamples(store, next).map((s) => [s.id, s]));
    expect(samples.get('rv-02')!.dialogue[0].content).toBe('Is it -5 degrees in Montréal?');
    expect(samples.get('rv-02')!.expected.calls).toEqual(reviewSamples()[2].expected.calls);
    expect(samples.get('rv-00')!.meta.review![0].answers).toEqual([
      { annotator: 'labelstudio-user-1', kind: 'annotator', decision: 'accept', notes: '' },
      { annotator: 'bob@lab.example', kind: 'annotator', decision: 'accept', notes: 'fine' },
    ]);
    expect(samples.has('rv-04')).toBe(false);
    expect(versionRejects(store, next)[0]).toMatchObject({ recordId: 'rv-04', detail: '+1 is not a party size' });
    expect(store.manifest(next).stats.review).toMatchObject({ files: [{ file: 'labelstudio-export.json', format: 'labelstudio', rows: 6 }] });
  });

  it('reports problems by task and annotation number', () => {
    const { home, store, ref } = threeSamples();
    const tasks = JSON.parse(readFileSync(handWritten, 'utf8'));
    tasks[0].annotations[1].result[0].value.choices = ['accept', 'reject'];
    tasks[1].data.calls = 'call_0: get_weather(city="Montreal")';
    tasks[2].data.item_id = 'it-ffffffffffff';
    tasks.push({ id: 104, item_id: 'x', decision: 'accept' }); // a JSON-MIN row
    const path = join(home, 'ls-bad.json');
    writeFileSync(path, JSON.stringify(tasks));
    const result = importReview({ store, ref, files: [{ path, shown: 'ls-bad.json' }] });
    expect(result.status).toBe('invalid');
    expect(store.versions('demo')).toEqual(['v1']);
    expect(result.problems.map((p) => [p.row, p.annotation ?? null, p.column])).toEqual([
      [1, 2, 'decision'],
      [4, null, null],
      [2, 1, 'calls'],
      [2, 2, 'calls'],
      [3, 1, 'item_id'],
      [3, 2, 'item_id'],
    ]);
    expect(result.problems[0].message).toBe('choose exactly one decision (got ["accept","reject"])');
    expect(result.problems[1].message).toMatch(/task has no "data" object \(a "JSON-MIN" or CSV export\? export the project as "JSON"\)/);
    for (const notAList of ['{"tasks": []}', 'not json']) {
      writeFileSync(path, notAList);
      expect(importReview({ store, ref, files: [{ path, shown: 'ls-bad.json' }] }).problems[0].message).toMatch(/^not a (readable )?Label Studio JSON export/);
    }
  });
});
