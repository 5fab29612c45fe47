import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ArgillaRecord } from '../review/argilla.ts';
import { exportReview } from '../review/export.ts';
import { importReview, reviewAgreement } from '../review/import.ts';
import { sampleCells } from '../review/sheet.ts';
import { publishReviewDataset, reviewSamples } from './fixtures/review/dataset.ts';
import { versionSamples, versionRejects } from './helpers/version.ts';

/** Argilla user ids are UUIDs. */
const ANN = '6f1c2a3e-0000-4000-8000-00000000000a';
const BOB = '6f1c2a3e-0000-4000-8000-00000000000b';
const CY = '6f1c2a3e-0000-4000-8000-00000000000c';

type Status = 'submitted' | 'draft' | 'discarded';
/** One user's answer to one record: status and a value per question. */
interface Answer {
  user: string;
  status: Status;
  values: Record<string, unknown>;
}

/** The queue of the 12-sample fixture with no random draw: rv-01, rv-05 (failed checks), rv-03, rv-06 (tagged). */
function exported() {
  const home = mkdtempSync(join(tmpdir(), 'tk-review-argilla-'));
  const { store, ref } = publishReviewDataset(home);
  const result = exportReview({ store, ref, format: 'argilla' });
  const records: ArgillaRecord[] = JSON.parse(readFileSync(result.files.find((f) => f.endsWith('-records.json'))!, 'utf8'));
  const bySample = Object.fromEntries(records.map((r) => [r.metadata.sample_id, r]));
  return { home, store, ref, result, records, bySample };
}

/**
 * What `dataset.records.to_json()` writes once users answered, with each response's status (as
 * `rg.Record.to_dict` nests them: `responses: {question: [{value, user_id, status}]}`), plus the
 * record's own status and server id.
 */
function nestedExport(records: ArgillaRecord[], answers: Record<string, Answer[]>) {
  return records.map((record, i) => {
    const responses: Record<string, { value: unknown; user_id: string; status: Status }[]> = {};
    for (const answer of answers[record.metadata.sample_id as string] ?? []) {
      for (const [question, value] of Object.entries(answer.values)) (responses[question] ??= []).push({ value, user_id: answer.user, status: answer.status });
    }
    return { ...record, responses, vectors: {}, status: Object.keys(responses).length ? 'completed' : 'pending', _server_id: `0d5c0000-0000-4000-9000-${String(i).padStart(12, '0')}` };
  });
}

/** The same as `dataset.records.to_list(flatten=True)` writes it: fields, metadata and `<question>.responses(.users|.status)` side by side. */
function flatExport(records: ArgillaRecord[], answers: Record<string, Answer[]>) {
  return nestedExport(records, answers).map(({ fields, metadata, suggestions, responses, vectors: _vectors, ...rest }) => {
    const flat: Record<string, unknown> = { ...rest, ...fields, ...metadata };
    for (const [question, list] of Object.entries(responses)) {
      flat[`${question}.responses`] = list.map((r) => r.value);
      flat[`${question}.responses.users`] = list.map((r) => r.user_id);
      flat[`${question}.responses.status`] = list.map((r) => r.status);
    }
    for (const [question, s] of Object.entries(suggestions)) Object.assign(flat, { [`${question}.suggestion`]: s.value, [`${question}.suggestion.score`]: s.score, [`${question}.suggestion.agent`]: s.agent });
    return flat;
  });
}

const submitted = (user: string, values: Record<string, unknown>): Answer => ({ user, status: 'submitted', values });

/** Three users: ann and bob submit every record they answer and agree; bob leaves rv-06 as a draft; cy discards rv-01. */
const AGREED: Record<string, Answer[]> = {
  'rv-01': [submitted(ANN, { decision: 'accept' }), submitted(BOB, { decision: 'accept', notes: 'fine' }), { user: CY, status: 'discarded', values: { decision: 'reject' } }],
  'rv-05': [submitted(ANN, { decision: 'edit', corrected_query: 'Weather in Rome, in fahrenheit please' }), submitted(BOB, { decision: 'edit', corrected_query: 'Weather in Rome, in fahrenheit please' })],
  'rv-03': [submitted(ANN, { decision: 'reject', notes: 'not a weather question' }), submitted(BOB, { decision: 'reject' })],
  'rv-06': [submitted(ANN, { decision: 'accept', corrected_calls: '', notes: '' }), { user: BOB, status: 'draft', values: { decision: 'reject' } }],
};

function write(home: string, name: string, content: unknown): { path: string; shown: string } {
  const path = join(home, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return { path, shown: name };
}

describe('Argilla export', () => {
  it('writes the dataset settings Argilla reads back (fields, label and text questions, metadata) and the records', () => {
    const { ref, result, records, bySample } = exported();
    const prefix = `${ref.dir}.derived/review/`;
    expect(result.files.map((f) => f.slice(prefix.length))).toEqual(['demo-v1-argilla-settings.json', 'demo-v1-records.json']);
    const settings = JSON.parse(readFileSync(result.files[0], 'utf8'));
    // The keys `rg.Settings.to_json` writes, each field / question / metadata property with its type at both levels.
    expect(Object.keys(settings)).toEqual(['guidelines', 'fields', 'questions', 'vectors', 'metadata', 'allow_extra_metadata', 'distribution', 'mapping']);
    expect(settings.fields.map((f: { name: string; type: string; required: boolean; settings: unknown }) => [f.name, f.type, f.required, f.settings])).toEqual([
      ['what_to_check', 'text', true, { type: 'text', use_markdown: false }],
      ['dialogue', 'text', true, { type: 'text', use_markdown: false }],
      ['calls', 'text', false, { type: 'text', use_markdown: false }],
      ['failed_checks', 'text', false, { type: 'text', use_markdown: false }],
      ['calls_json', 'text', true, { type: 'text', use_markdown: false }],
    ]);
    expect(settings.questions[0]).toMatchObject({
      name: 'decision',
      required: true,
      type: 'label_selection',
      settings: { type: 'label_selection', options: [{ value: 'accept', text: 'accept' }, { value: 'reject', text: 'reject' }, { value: 'edit', text: 'edit' }] },
    });
    expect(settings.questions.slice(1).map((q: { name: string; type: string; required: boolean }) => [q.name, q.type, q.required])).toEqual([
      ['corrected_query', 'text', false],
      ['corrected_calls', 'text', false],
      ['corrected_labels', 'text', false],
      ['notes', 'text', false],
    ]);
    expect(settings.metadata).toEqual([
      { name: 'category', title: 'Category', type: 'terms', settings: { type: 'terms', values: ['S-M', 'S-S'] }, visible_for_annotators: true },
      { name: 'priority', title: 'Priority', type: 'integer', settings: { type: 'integer', min: 10, max: 100 }, visible_for_annotators: true },
      { name: 'sample_id', title: 'Sample id', type: 'terms', settings: { type: 'terms', values: null }, visible_for_annotators: true },
      { name: 'dataset', title: 'Dataset', type: 'terms', settings: { type: 'terms', values: ['demo@v1'] }, visible_for_annotators: true },
    ]);
    // Argilla refuses a dataset whose fields, questions and metadata share a name.
    const names = [...settings.fields, ...settings.questions, ...settings.metadata].map((x: { name: string }) => x.name);
    expect(new Set(names).size).toBe(names.length);

    // Records: `id` = the item id, the sheet's read-only text as fields and metadata, no responses.
    expect(records.map((r) => r.metadata.sample_id)).toEqual(['rv-01', 'rv-05', 'rv-03', 'rv-06']);
    const sample = reviewSamples()[1];
    const cells = sampleCells(ref, sample);
    expect(bySample['rv-01']).toEqual({
      id: cells.item_id,
      fields: {
        what_to_check: 'failed check arg-grounded: value "Oslo" ok but unit missing',
        dialogue: cells.dialogue,
        calls: cells.calls,
        failed_checks: 'arg-grounded (soft): value "Oslo" ok but unit missing',
        calls_json: cells.calls_json,
      },
      metadata: { category: 'S-S', priority: 100, sample_id: 'rv-01', dataset: 'demo@v1' },
      // A failed check suggests a decision; its score is the share of the sample's checks that failed.
      suggestions: { decision: { value: 'reject', score: 1, agent: 'toolkiln-checks' } },
      responses: {},
    });
    expect(bySample['rv-05'].suggestions).toEqual({ decision: { value: 'reject', score: 0.5, agent: 'toolkiln-checks' } });
    // A tagged sample with no failed check: no suggestion, and no empty optional field.
    expect(bySample['rv-03'].suggestions).toEqual({});
    expect(Object.keys(bySample['rv-03'].fields)).toEqual(['what_to_check', 'dialogue', 'calls', 'calls_json']);
  });

  it('writes one records file per annotator, and the settings once', () => {
    const home = mkdtempSync(join(tmpdir(), 'tk-review-argilla-'));
    const { store, ref } = publishReviewDataset(home);
    const result = exportReview({ store, ref, format: 'argilla', annotators: 2, overlap: 1 });
    expect(result.files.map((f) => f.slice(`${ref.dir}.derived/review/`.length))).toEqual([
      'demo-v1-argilla-settings.json',
      'demo-v1-records-annotator-1.json',
      'demo-v1-records-annotator-2.json',
    ]);
    expect(result.sheets.map((s) => [s.annotator, s.items])).toEqual([
      ['annotator-1', 4],
      ['annotator-2', 4],
    ]);
  });
});

describe("import of Argilla's exported records", () => {
  it('applies submitted responses; drafts stay pending, discarded ones are skipped; the next version has the decisions', () => {
    const { home, store, ref, records } = exported();
    const file = write(home, 'argilla-records.json', nestedExport(records, AGREED));
    const result = importReview({ store, ref, files: [file] });
    expect(result.problems).toEqual([]);
    // ann 4 + bob 4 (one a draft) = 8 rows; cy's discarded response is no row.
    expect(result).toMatchObject({ status: 'published', newVersion: 'v2', counts: { files: 1, rows: 8, decided: 7, pending: 1, invalid: 0, items: 4, accepted: 2, edited: 1, rejected: 1, disagreements: 0 } });
    const annName = `argilla-user-${ANN}`;
    const bobName = `argilla-user-${BOB}`;
    expect(result.agreement).toMatchObject({ raters: [annName, bobName], items: 3, observed: 1, nestoolsP: 1 });

    const next = store.resolve('demo@v2');
    const samples = new Map(versionSamples(store, next).map((s) => [s.id, s]));
    expect(samples.get('rv-05')!.dialogue[0].content).toBe('Weather in Rome, in fahrenheit please');
    expect(samples.get('rv-01')!.meta.review![0]).toMatchObject({
      version: 'v1',
      decision: 'accept',
      answers: [
        { annotator: annName, kind: 'annotator', decision: 'accept', notes: '' },
        { annotator: bobName, kind: 'annotator', decision: 'accept', notes: 'fine' },
      ],
    });
    // bob's draft is not an answer: rv-06 is decided by ann alone.
    expect(samples.get('rv-06')!.meta.review![0].answers).toEqual([{ annotator: annName, kind: 'annotator', decision: 'accept', notes: '' }]);
    expect(samples.has('rv-03')).toBe(false);
    expect(versionRejects(store, next).find((r) => r.recordId === 'rv-03')).toMatchObject({ reason: 'review_rejected', detail: 'not a weather question' });
    expect(store.manifest(next).stats.review).toMatchObject({ files: [{ file: 'argilla-records.json', format: 'argilla', rows: 8 }] });
  });

  it('reads the flattened export (to_list(flatten=True)) to the same decisions', () => {
    const { home, store, ref, records } = exported();
    const nested = importReview({ store, ref, files: [write(home, 'nested.json', nestedExport(records, AGREED))] });
    const flat = importReview({ store, ref, files: [write(home, 'flat.json', flatExport(records, AGREED))] });
    expect(flat.problems).toEqual([]);
    // The same decisions: the version the nested export published.
    expect(flat).toMatchObject({ status: 'existing', newVersion: nested.newVersion, counts: nested.counts });
  });

  it('reads responses given as a list of {question_name, value, user_id, status} too', () => {
    const { home, store, ref, records } = exported();
    const nested = importReview({ store, ref, files: [write(home, 'nested.json', nestedExport(records, AGREED))] });
    const asList = nestedExport(records, AGREED).map((r) => ({ ...r, responses: Object.entries(r.responses).flatMap(([question_name, list]) => list.map((x) => ({ question_name, ...x }))) }));
    expect(importReview({ store, ref, files: [write(home, 'list.json', asList)] })).toMatchObject({ status: 'existing', newVersion: nested.newVersion, problems: [] });
  });

  it('measures agreement on Argilla responses and writes the adjudication sheet for a disagreement', () => {
    const { home, store, ref, records } = exported();
    const answers = { ...AGREED, 'rv-06': [submitted(ANN, { decision: 'accept' }), submitted(BOB, { decision: 'reject', notes: 'wrong party size' })] };
    const file = write(home, 'disagree.json', nestedExport(records, answers));
    const agreement = reviewAgreement(store, ref, [file]);
    expect(agreement.problems).toEqual([]);
    expect(agreement.disagreements).toBe(1);
    expect(agreement.agreement).toMatchObject({ items: 4, observed: 0.75 });
    // ann: accept, edit, reject, accept; bob: accept, edit, reject, reject → p_o = .75, p_e = .5·.25 + .25·.25 + .25·.5 = .3125
    expect(agreement.agreement.cohen[0].kappa).toBeCloseTo((0.75 - 0.3125) / (1 - 0.3125), 12);
    expect(agreement.adjudicationSheet && existsSync(agreement.adjudicationSheet)).toBe(true);
    expect(readFileSync(agreement.adjudicationSheet!, 'utf8')).toContain(`argilla-user-${BOB}: reject`);
    const imported = importReview({ store, ref, files: [file] });
    expect(imported.status).toBe('needs-adjudication');
    expect(store.versions('demo')).toEqual(['v1']);
  });
});

describe('bad Argilla files are refused with the file, record, response and question, and nothing is applied', () => {
  function refused(setup: ReturnType<typeof exported>, name: string, content: unknown) {
    const result = importReview({ store: setup.store, ref: setup.ref, files: [write(setup.home, name, content)] });
    expect(result.status).toBe('invalid');
    expect(result.newVersion).toBeNull();
    expect(setup.store.versions('demo')).toEqual(['v1']);
    expect(JSON.parse(readFileSync(result.report, 'utf8')).problems).toEqual(result.problems);
    return result.problems;
  }

  it('a submitted response with no decision, an unknown record id, formula text, an edited field', () => {
    const setup = exported();
    const records = nestedExport(setup.records, {
      ...AGREED,
      'rv-01': [submitted(ANN, { notes: 'forgot the decision' }), submitted(BOB, { decision: 'accept' })],
      'rv-05': [submitted(ANN, { decision: 'edit', corrected_query: '=HYPERLINK("http://evil.example","x") Rome' })],
    });
    records[2] = { ...records[2], id: 'it-000000000000' };
    records[3] = { ...records[3], fields: { ...records[3].fields, calls: 'call_0: book_table(restaurant="Nomad", people=2)' } };
    const problems = refused(setup, 'bad.json', records);
    const ids = Object.fromEntries(setup.records.map((r) => [r.metadata.sample_id, r.id]));
    expect(problems.map((p) => [p.file, p.row, p.record, p.annotation ?? null, p.column])).toEqual([
      ['bad.json', 1, ids['rv-01'], 1, 'decision'],
      ['bad.json', 2, ids['rv-05'], 1, 'corrected_query'],
      ['bad.json', 3, 'it-000000000000', 1, 'item_id'],
      ['bad.json', 3, 'it-000000000000', 2, 'item_id'],
      ['bad.json', 4, ids['rv-06'], 1, 'calls'],
      ['bad.json', 4, ids['rv-06'], 2, 'calls'], // bob's draft: the record's field was edited all the same
    ]);
    expect(problems[0].message).toBe(`record ${ids['rv-01']}: the submitted response of user ${ANN} has no answer to the question "decision" (it is required: were the records loaded with toolkiln's settings?)`);
    expect(problems[1].message).toMatch(/^corrected_query starts with "=", which a spreadsheet runs as a formula/);
    expect(problems[2].message).toBe('unknown item id "it-000000000000": demo@v1 has no such item (was the cell edited?)');
    expect(problems[4].message).toMatch(/^read-only column "calls" was edited at character/);
  });

  it('a text answer that is not text, and a decision that is not one label', () => {
    const setup = exported();
    const problems = refused(
      setup,
      'types.json',
      nestedExport(setup.records, { 'rv-01': [submitted(ANN, { decision: ['accept', 'reject'] })], 'rv-05': [submitted(ANN, { decision: 'edit', corrected_calls: [{ id: 'call_0' }] })] }),
    );
    expect(problems.map((p) => [p.row, p.column, p.message.replace(/^record it-\w+: /, '')])).toEqual([
      [1, 'decision', `the decision of user ${ANN} is ["accept","reject"], not one label (accept, reject or edit)`],
      [2, 'corrected_calls', `the answer of user ${ANN} to "corrected_calls" is [{"id":"call_0"}], not text`],
    ]);
  });

  it('responses without a status (a to_json export of an Argilla that leaves it out)', () => {
    const setup = exported();
    const records = nestedExport(setup.records, AGREED).map((r) => ({
      ...r,
      responses: Object.fromEntries(Object.entries(r.responses).map(([q, list]) => [q, list.map(({ status: _status, ...rest }) => rest)])),
    }));
    const problems = refused(setup, 'no-status.json', records);
    expect(problems[0]).toMatchObject({ row: 1, annotation: 1, column: null });
    expect(problems[0].message).toMatch(/the response of user .+ has no status \(submitted, draft or discarded\); export with dataset\.records\.to_list\(flatten=True\)/);
  });

  it("one user's responses with two statuses, and a response with no user", () => {
    const setup = exported();
    const records = nestedExport(setup.records, AGREED);
    records[0].responses.notes = [{ value: 'later', user_id: ANN, status: 'draft' }];
    records[1].responses.decision.push({ value: 'accept', user_id: '', status: 'submitted' });
    const problems = refused(setup, 'statuses.json', records);
    expect(problems.map((p) => [p.row, p.column, p.message.replace(/^record it-\w+: /, '')])).toEqual([
      [1, 'notes', `user ${ANN} has responses with the statuses "submitted" and "draft"; Argilla keeps one status per user and record`],
      [2, 'decision', 'a response to "decision" has no user_id'],
    ]);
  });

  it('a record that lacks a field or its id', () => {
    const setup = exported();
    const records = nestedExport(setup.records, AGREED);
    const { dialogue: _dialogue, ...noDialogue } = records[0].fields;
    records[0] = { ...records[0], fields: noDialogue };
    const { id: _id, ...noId } = records[1];
    const problems = refused(setup, 'missing.json', [records[0], noId]);
    expect(problems.map((p) => [p.row, p.column, p.message])).toEqual([
      [1, 'dialogue', `record ${records[0].id} has no field "dialogue" (records must come from toolkiln review export with its settings)`],
      [2, 'item_id', 'record has no "id" (got null): the records keep the ids toolkiln gave them; export them with their ids'],
    ]);
  });

  it('a JSON file that is neither Label Studio nor Argilla', () => {
    const setup = exported();
    for (const content of [{ records: [] }, [{ text: 'hello', label: 'x' }], '{"unclosed": ']) {
      const problems = refused(setup, 'other.json', content);
      expect(problems).toEqual([{ file: 'other.json', row: null, column: null, message: expect.stringMatching(/^not a (readable )?Label Studio JSON export or Argilla records file/) }]);
    }
    expect(refused(setup, 'other.json', [{ text: 'hello' }])[0].message).toContain('dataset.records.to_list(...), see review/README.md');
  });
});
