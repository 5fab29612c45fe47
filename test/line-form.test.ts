import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../core/hash.ts';
import { LINE_FORM, rejectionFromLine, rejectionToLine, sampleFromLine, sampleToLine, toolFromLine, toolToLine } from '../core/line-form.ts';
import { Rejection, Sample, ToolSpec } from '../core/records.ts';
import { DatasetStore } from '../core/store.ts';
import { loadLikeDatasetsJson } from './helpers/datasets-json.ts';
import { draftManifest } from './fixtures/core/samples.ts';
import { versionSamples, versionRejects } from './helpers/version.ts';

const tmp = () => mkdtempSync(join(tmpdir(), 'tk-line-form-'));

const weather = ToolSpec.parse({
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', default: 1 } }, required: ['city'] },
  returns: { type: 'object', properties: { temperature: { type: 'number' } } },
  domain: 'weather',
  isAction: false,
  provenance: { source: 'sgd', id: 'Weather_1', schema: true },
});
const plain = ToolSpec.parse({ name: 'find_place', parameters: { type: 'object', properties: { place_name: { type: 'string' } } } });

/** Two samples whose optional parts differ as much as they can: one has them all, the other none. */
const full = Sample.parse({
  id: 'full',
  benchmark: 'demo',
  category: 'M-M',
  split: 'test',
  tools: [weather, plain],
  dialogue: [
    { role: 'user', content: 'Weather where the museum is?' },
    {
      role: 'assistant',
      content: '',
      thought: 'find it, then ask',
      calls: [
        { id: 'c1', tool: 'find_place', arguments: { place_name: 'museum' } },
        { id: 'c2', tool: 'get_weather', arguments: { city: { $ref: 'c1.city' }, days: [1, { $ref: 'c1.days' }] } },
      ],
      observations: { c1: { city: 'Oslo' }, c2: 'sunny' },
      response: 'Sunny in Oslo.',
    },
  ],
  expected: { calls: [{ id: 'c1', tool: 'find_place', arguments: { place_name: 'museum' } }], turns: { '1': [] }, labels: ['x'], note: 7 },
  meta: { source: { dataset: 'sgd', id: 'd1' }, lineage: [{ stage: 'compose', version: 2, model: 'offline' }], checks: [{ name: 'c', pass: true }], tags: ['t'], extra: { deep: [1, 'a'] } },
});
const bare = Sample.parse({ id: 'bare', benchmark: 'demo', category: 'S-S', split: 'test', tools: [], dialogue: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello', calls: [] }], expected: {}, meta: {} });
const reject = Rejection.parse({ stage: 'quality', reason: 'no call', recordId: 'r1', record: { anything: [1, { place_name: { $ref: 'c1.x' } }] } });
const bareReject = Rejection.parse({ stage: 'dedup', reason: 'duplicate', duplicateOf: 'full', record: 'a plain string' });

const roundTrip = <T, L>(value: T, encode: (v: T) => L, decode: (line: unknown, where: string) => T) => decode(JSON.parse(JSON.stringify(encode(value))), 'here');

describe('line form', () => {
  it('gives back every sample, tool and reject as it was, and reads line form 2 (absent values null, calls a list)', () => {
    for (const sample of [full, bare]) expect(roundTrip(sample, sampleToLine, sampleFromLine)).toStrictEqual(sample);
    for (const tool of [weather, plain]) expect(roundTrip(tool, toolToLine, toolFromLine)).toStrictEqual(tool);
    for (const rejection of [reject, bareReject]) expect(roundTrip(rejection, rejectionToLine, rejectionFromLine)).toStrictEqual(rejection);
    // Key order is the schema's, so a sample read back serialises as the one written.
    expect(JSON.stringify(roundTrip(full, sampleToLine, sampleFromLine))).toBe(JSON.stringify(full));
    // No value is null: an empty optional text and a null record read back as absent, as they mean.
    const { record: _, ...noRecord } = reject;
    expect(roundTrip({ ...reject, record: null }, rejectionToLine, rejectionFromLine)).toStrictEqual(noRecord);
    const quiet = Sample.parse({ ...bare, dialogue: [{ role: 'assistant', content: 'hi', thought: '', response: '' }] });
    expect(roundTrip(quiet, sampleToLine, sampleFromLine).dialogue).toStrictEqual([{ role: 'assistant', content: 'hi' }]);
    const form2 = {
      id: 'old',
      benchmark: 'demo',
      category: 'S-S',
      split: 'test',
      tools: [{ name: 'find_place', description: '', parameters: '{"type":"object","properties":{},"required":[]}', returns: '{"type":"object","properties":{},"required":[]}', domain: null, plugin: null, isAction: true, provenance: null }],
      dialogue: [
        { role: 'user', content: 'where?', thought: null, calls: null, observations: null, response: null },
        { role: 'assistant', content: '', thought: 't', calls: [{ id: 'c1', tool: 'find_place', arguments: '{"q":{"$ref":"c0.x"}}' }], observations: '{"c1":1}', response: null },
      ],
      expected: '{}',
      meta: '{}',
    };
    expect(sampleFromLine(form2, 'f:1')).toStrictEqual({
      id: 'old',
      benchmark: 'demo',
      category: 'S-S',
      split: 'test',
      tools: [{ name: 'find_place', description: '', parameters: { type: 'object', properties: {}, required: [] }, returns: { type: 'object', properties: {}, required: [] }, isAction: true }],
      dialogue: [
        { role: 'user', content: 'where?' },
        { role: 'assistant', content: '', thought: 't', calls: [{ id: 'c1', tool: 'find_place', arguments: { q: { $ref: 'c0.x' } } }], observations: { c1: 1 } },
      ],
      expected: {},
      meta: {},
    });
    expect(rejectionFromLine({ stage: 's', reason: 'r', detail: null, recordId: 'x', duplicateOf: null, record: null }, 'f:2')).toStrictEqual({ stage: 's', reason: 'r', recordId: 'x' });
  });

  it('gives every key one type from the first line on, so a block-wise loader casts every later block to the first', () => {
    const dir = tmp();
    // Records without the optional parts fill the first blocks, records with them come after.
    const sparse = Sample.parse({ ...bare, tools: [plain] });
    const files = {
      samples: [...Array<Sample>(40).fill(sparse), full].map(sampleToLine),
      tools: [...Array<ToolSpec>(40).fill(plain), weather].map(toolToLine),
      rejects: [...Array<Rejection>(40).fill(bareReject), reject].map(rejectionToLine),
    };
    for (const [name, records] of Object.entries(files)) {
      const path = join(dir, `${name}.jsonl`);
      writeFileSync(path, records.map((r) => JSON.stringify(r) + '\n').join(''));
      const load = loadLikeDatasetsJson(path, { chunkBytes: 1024 });
      expect(load.chunks).toBeGreaterThan(2);
      expect(load).toMatchObject({ rows: 41, problems: [], jsonColumns: [] });
      expect(load.nullColumns).toEqual([]);
      expect(loadLikeDatasetsJson(path).problems).toEqual([]);
    }
    // The limit left: a list empty in every record of the first block types its items null.
    writeFileSync(join(dir, 'no-tools-first.jsonl'), [...Array<Sample>(40).fill(bare), full].map((s) => JSON.stringify(sampleToLine(s)) + '\n').join(''));
    expect(loadLikeDatasetsJson(join(dir, 'no-tools-first.jsonl'), { chunkBytes: 1024 }).problems).toEqual([expect.stringMatching(/: \/tools\/\[\]: Couldn't cast array of type struct<name: string, .*> to null$/)]);
    // The tools as plain JSON: `isAction`, `domain` and `provenance` first appear in a later block.
    writeFileSync(join(dir, 'tools-plain.jsonl'), files.tools.map((_, i) => JSON.stringify(i < 40 ? plain : weather) + '\n').join(''));
    expect(loadLikeDatasetsJson(join(dir, 'tools-plain.jsonl'), { chunkBytes: 1024 }).problems).toEqual([
      expect.stringMatching(/: chunk \d+ \(rows \d+–41\): Couldn't cast .* because column names don't match: new column\(s\) domain, isAction, provenance$/),
    ]);
  });

  it('is what the store publishes and what every reader of a version decodes', () => {
    const store = new DatasetStore(tmp());
    const { ref, manifest } = store.publish({ name: 'demo', samples: [full, bare], tools: [weather, plain], rejects: [reject, bareReject], manifest: draftManifest('fp') });
    expect(manifest.lineForm).toBe(LINE_FORM);
    expect(readFileSync(join(ref.dir, 'data', 'test.jsonl'), 'utf8')).toBe([full, bare].map((s) => JSON.stringify(sampleToLine(s)) + '\n').join(''));
    expect(versionSamples(store, ref)).toStrictEqual([full, bare]);
    expect([...store.sampleSource(ref).all()]).toStrictEqual([full, bare]);
    const source = store.sampleSource(ref);
    expect([...source.readAt([...source.located()].map((l) => l.at).reverse())]).toStrictEqual([bare, full]);
    expect(store.tools(ref)).toStrictEqual([weather, plain]);
    expect(versionRejects(store, ref)).toStrictEqual([reject, bareReject]);
    const next = store.publish({ name: 'demo', samples: versionSamples(store, ref), tools: store.tools(ref), rejects: versionRejects(store, ref), manifest: draftManifest('fp2') });
    expect(store.diff(ref, next.ref)).toMatchObject({ added: [], removed: [], changed: [], unchanged: 2 });
  });

  it('writes no empty rejects or tools file, and reads a version without them as having none', () => {
    const store = new DatasetStore(tmp());
    const { ref, manifest } = store.publish({ name: 'demo', samples: [bare], tools: [], rejects: [], manifest: draftManifest('fp') });
    expect(existsSync(join(ref.dir, 'rejects.jsonl'))).toBe(false);
    expect(existsSync(join(ref.dir, 'tools.jsonl'))).toBe(false);
    expect(Object.keys(manifest.files)).toEqual(['data/test.jsonl']);
    expect(manifest.counts).toMatchObject({ rejects: 0, tools: 0 });
    expect(versionRejects(store, ref)).toEqual([]);
    expect(store.tools(ref)).toEqual([]);
    expect(store.verify(ref)).toEqual([]);
  });

  it('leaves versions published before it readable as plain JSON, and republishes their fingerprint in the line form', () => {
    const home = tmp();
    const dir = join(home, 'datasets', 'old', 'v1');
    mkdirSync(join(dir, 'data'), { recursive: true });
    const files: Record<string, string> = {};
    const put = (file: string, records: unknown[]) => {
      const text = records.map((r) => JSON.stringify(r) + '\n').join('');
      writeFileSync(join(dir, file), text);
      files[file] = sha256(text);
    };
    put('data/test.jsonl', [full, bare]);
    put('tools.jsonl', [weather]);
    put('rejects.jsonl', [reject]);
    const counts = { samples: 2, rejects: 1, tools: 1, bySplit: { test: 2 }, byCategory: { 'M-M': 1, 'S-S': 1 } };
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...draftManifest('fp'), name: 'old', version: 'v1', counts, files, createdAt: '2026-01-01T00:00:00Z', toolkilnVersion: '0.1.0' }));
    for (const file of Object.keys(files)) chmodSync(join(dir, file), 0o444);
    const store = new DatasetStore(home);
    const ref = store.resolve('old@v1');
    expect(versionSamples(store, ref)).toStrictEqual([full, bare]);
    expect([...store.sampleSource(ref).all()]).toStrictEqual([full, bare]);
    expect(store.tools(ref)).toStrictEqual([weather]);
    expect(versionRejects(store, ref)).toStrictEqual([reject]);
    expect(store.findByFingerprint('old', 'fp')).toBeNull();
    expect(store.publish({ name: 'old', samples: [full], tools: [], rejects: [], manifest: draftManifest('fp') })).toMatchObject({ status: 'published', ref: { version: 'v2' } });
  });

  it('names the file and record of a line it cannot read', () => {
    const line = { ...sampleToLine(full), expected: '{not json' };
    expect(() => sampleFromLine(line, 'data/test.jsonl:3')).toThrow(/^data\/test\.jsonl:3: "expected" is not valid JSON text \(.*\); this is not a toolkiln line-form record/);
    expect(() => sampleFromLine({ ...sampleToLine(full), tools: [{ ...toolToLine(weather), parameters: { type: 'object' } }] }, 'f:1')).toThrow(/^f:1: "tools\.0\.parameters" should be JSON text, found object/);
    expect(() => sampleFromLine([1], 'f:2')).toThrow(/^f:2: not a JSON object/);
    expect(() => toolFromLine({ ...toolToLine(weather), isAction: 'maybe' }, 'f:3')).toThrow(/^f:3: "isAction" should be "yes", "no" or "unknown", found "maybe"/);
    expect(() => sampleFromLine({ ...sampleToLine(full), dialogue: [{ ...sampleToLine(full).dialogue[1], calls: '{"id":1}' }] }, 'f:4')).toThrow(/^f:4: "dialogue\.0\.calls" should be the JSON text of a list of calls/);
  });
});
