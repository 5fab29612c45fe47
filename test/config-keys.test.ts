import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { main } from '../bin/cli.ts';
import { configKeys, describeKeys } from '../core/config-doc.ts';
import { findUnknownKeys } from '../core/config-keys.ts';
import { UserError } from '../core/errors.ts';
import { resolveConfig } from '../core/run.ts';
import { pipelines } from '../pipelines/index.ts';

const bin = new URL('../bin/toolkiln.js', import.meta.url).pathname;

const Schema = z
  .object({
    count: z.number().default(1),
    sources: z
      .object({
        atis: z.object({ enabled: z.boolean().default(true), dir: z.string().optional() }).prefault({}),
        list: z.array(z.object({ name: z.string(), file: z.string() })).default([]),
      })
      .prefault({}),
    map: z.record(z.string(), z.object({ weight: z.number() })).default({}),
    note: z.object({ text: z.string() }).nullable().default(null),
    embedder: z
      .discriminatedUnion('kind', [z.object({ kind: z.literal('lexical'), dim: z.number().optional() }), z.object({ kind: z.literal('openai'), model: z.string().optional() })])
      .optional(),
    groups: z.array(z.union([z.string(), z.object({ name: z.string(), tools: z.array(z.string()) })])).optional(),
    both: z.intersection(z.object({ a: z.number() }), z.object({ b: z.number() })).optional(),
    loose: z.object({ x: z.number() }).loose().optional(),
    piped: z
      .object({ y: z.number() })
      .transform((v) => v.y)
      .optional(),
    tuple: z.tuple([z.object({ first: z.number() })]).optional(),
    lazy: z.lazy(() => z.object({ deep: z.number() })).optional(),
  })
  .strict();

const paths = (value: unknown) => findUnknownKeys(Schema, value).map((u) => [u.path, u.suggestion]);

describe('unknown config keys', () => {
  it('accepts every known key, at every depth and through every wrapper', () => {
    const good = {
      count: 3,
      sources: { atis: { enabled: false, dir: 'x' }, list: [{ name: 'a', file: 'b' }] },
      map: { anything: { weight: 1 }, 'any-other': { weight: 2 } },
      note: null,
      embedder: { kind: 'openai', model: 'm' },
      groups: ['g', { name: 'n', tools: [] }],
      both: { a: 1, b: 2 },
      loose: { x: 1, free: 2 },
      piped: { y: 1 },
      tuple: [{ first: 1 }],
      lazy: { deep: 1 },
    };
    expect(findUnknownKeys(Schema, good)).toEqual([]);
    expect(Schema.safeParse(good).success).toBe(true);
    expect(findUnknownKeys(Schema, {})).toEqual([]);
    expect(findUnknownKeys(Schema, undefined)).toEqual([]);
  });

  it('names the full path of a typo and the closest valid key there', () => {
    expect(paths({ cuont: 5 })).toEqual([['cuont', 'count']]);
    expect(paths({ sources: { atis: { enabeld: false } } })).toEqual([['sources.atis.enabeld', 'enabled']]);
    expect(paths({ sources: { list: [{ name: 'a', file: 'b' }, { nmae: 'a', file: 'b' }] } })).toEqual([['sources.list[1].nmae', 'name']]);
    expect(paths({ map: { free: { wieght: 1 } } })).toEqual([['map.free.wieght', 'weight']]);
    expect(paths({ note: { txet: 'x' } })).toEqual([['note.txet', 'text']]);
    expect(paths({ both: { a: 1, b: 2, c: 3 } })).toEqual([['both.c', 'a']]);
    expect(paths({ piped: { yy: 1 } })).toEqual([['piped.yy', 'y']]);
    expect(paths({ tuple: [{ frist: 1 }] })).toEqual([['tuple[0].frist', 'first']]);
    expect(paths({ lazy: { deeep: 1 } })).toEqual([['lazy.deeep', 'deep']]);
    // Several at once, in the order of the value.
    expect(paths({ cuont: 1, sources: { atiss: {} } })).toEqual([
      ['cuont', 'count'],
      ['sources.atiss', 'atis'],
    ]);
  });

  it('judges a union by the option the value is tagged with, or the one that fits best', () => {
    // `model` belongs to the openai option only: the tag picks it, so the typo is matched against its keys.
    expect(paths({ embedder: { kind: 'openai', modle: 'm' } })).toEqual([['embedder.modle', 'model']]);
    expect(paths({ embedder: { kind: 'lexical', model: 'm' } })).toEqual([['embedder.model', undefined]]);
    expect(paths({ groups: ['plain', { name: 'n', tols: [] }] })).toEqual([['groups[1].tols', 'tools']]);
  });

  it('suggests nothing for a key unlike every valid one, and lists them instead', () => {
    const [unknown] = findUnknownKeys(Schema, { sources: { atis: { colour: 'red' } } });
    expect(unknown).toEqual({ path: 'sources.atis.colour', known: ['enabled', 'dir'] });
  });

  it('leaves type errors to the schema (no unknown key where the value has the wrong kind)', () => {
    expect(findUnknownKeys(Schema, { sources: 3, map: [1], note: 'x' })).toEqual([]);
  });
});

describe('every shipped pipeline', () => {
  for (const pipeline of Object.values(pipelines)) {
    it(`${pipeline.name}: accepts its own defaults and refuses a typo at the top and nested`, () => {
      const defaults = pipeline.configSchema.parse({});
      expect(resolveConfig(pipeline, defaults, 'defaults.json')).toEqual(defaults);

      const first = Object.keys(defaults as object)[0];
      const top = { ...(defaults as object), [`${first}x`]: 1 };
      expect(() => resolveConfig(pipeline, top, 'top.json')).toThrow(new UserError(`top.json: unknown key "${first}x" — did you mean "${first}"?`));

      // The first nested object of the defaults, with one of its keys misspelt by a swapped letter pair.
      const [section, inner] = Object.entries(defaults as Record<string, unknown>).find(([, v]) => v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0) ?? [];
      if (section === undefined) {
        // A flat config (NesTools, ToolTalk): a nested key inside a known scalar is a type error, not a silent drop.
        expect(() => resolveConfig(pipeline, { [first]: { cuont: 1 } }, 'nested.json')).toThrow(new RegExp(`nested.json: invalid ${pipeline.name} config: ${first}`));
        return;
      }
      const [key, keyValue] = Object.entries(inner as Record<string, unknown>)[0];
      const typo = `${key.slice(0, -2)}${key.at(-1)}${key.at(-2)}`;
      const nested = { [section]: { [typo]: keyValue } };
      expect(() => resolveConfig(pipeline, nested, 'nested.json')).toThrow(`nested.json: unknown key "${section}.${typo}" — did you mean "${key}"?`);
    });
  }

  it('names the key path and the closest valid key in the message', () => {
    expect(() => resolveConfig(pipelines.mtu, { sources: { atis: { enabeld: false } } }, 'config.json')).toThrow(
      'config.json: unknown key "sources.atis.enabeld" — did you mean "enabled"?',
    );
    expect(() => resolveConfig(pipelines.nestools, { cuont: 5 }, 'config.json')).toThrow('config.json: unknown key "cuont" — did you mean "count"?');
    expect(() => resolveConfig(pipelines.toole, { tasks: { similar: { perTol: 5 } } }, 'config.json')).toThrow(
      'config.json: unknown key "tasks.similar.perTol" — did you mean "perTool"?',
    );
    expect(() => resolveConfig(pipelines.mtu, { clustering: { embedder: { kind: 'transformers', modelPth: 'x' } } }, 'config.json')).toThrow(
      'config.json: unknown key "clustering.embedder.modelPth" — did you mean "modelPath"?',
    );
    expect(() => resolveConfig(pipelines.mtu, { splits: { map: { mine: 'train' } }, sources: { generic: [{ name: 'shop', file: 'f', split: 'train', domian: 'x' }] } }, 'config.json')).toThrow(
      'config.json: unknown key "sources.generic[0].domian" — did you mean "domain"?',
    );
  });
});

describe('config key descriptions', () => {
  const Inner = z.object({ dir: z.string().default('d'), splits: z.array(z.string()).default(['a']) }).strict();
  const Plain = z
    .object({
      source: Inner.prefault({}),
      list: z.array(z.object({ name: z.string(), split: z.string().default('train'), note: z.string().optional() }).strict()).default([]),
      mix: z.record(z.string(), z.number()).optional(),
      count: z.number().default(2),
    })
    .strict()
    .superRefine((value, ctx) => {
      if (value.count > 10) ctx.addIssue({ code: 'custom', path: ['count'], message: 'too many' });
    });

  it('lists every key in dotted form, list entries as [], with the default a config leaving it out gets', () => {
    const keys = configKeys(Plain, Plain.parse({}));
    expect(keys.map((k) => [k.path, k.section, k.fallback])).toEqual([
      ['source', true, { kind: 'value', value: { dir: 'd', splits: ['a'] } }],
      ['source.dir', false, { kind: 'value', value: 'd' }],
      ['source.splits', false, { kind: 'value', value: ['a'] }],
      ['list', false, { kind: 'value', value: [] }],
      ['list[].name', false, { kind: 'required' }],
      ['list[].split', false, { kind: 'value', value: 'train' }],
      ['list[].note', false, { kind: 'unset' }],
      ['mix', false, { kind: 'unset' }],
      ['count', false, { kind: 'value', value: 2 }],
    ]);
    expect(keys.every((k) => k.description === undefined)).toBe(true);
  });

  it('describeKeys gives every key its text and parses exactly as the schema it describes', () => {
    const described = describeKeys(Plain, {
      source: ['where from', { dir: 'the folder', splits: 'which splits' }],
      list: ['entries', { name: 'its name', split: 'its split', note: 'a note' }],
      mix: 'shares',
      count: 'how many',
    });
    expect(configKeys(described, described.parse({})).map((k) => [k.path, k.description])).toEqual([
      ['source', 'where from'],
      ['source.dir', 'the folder'],
      ['source.splits', 'which splits'],
      ['list', 'entries'],
      ['list[].name', 'its name'],
      ['list[].split', 'its split'],
      ['list[].note', 'a note'],
      ['mix', 'shares'],
      ['count', 'how many'],
    ]);
    for (const value of [{}, { source: { dir: 'x' } }, { list: [{ name: 'n' }] }, { count: 11 }, { source: { dri: 'x' } }, { list: [{ name: 'n', extra: 1 }] }, { other: 1 }, { count: 'two' }]) {
      expect(described.safeParse(value)).toEqual(Plain.safeParse(value));
    }
    // A default is a fresh copy on each parse, as the schema's own.
    const first = described.parse({});
    first.source.splits.push('b');
    expect(described.parse({}).source.splits).toEqual(['a']);
    expect(() => describeKeys(Plain, { sorce: 'typo' })).toThrow('describeKeys: the schema has no key sorce');
    expect(() => describeKeys(Plain, { count: ['a number', { x: 'y' }] })).toThrow('describeKeys: count holds no keys (a number)');
  });

  for (const pipeline of Object.values(pipelines)) {
    it(`${pipeline.name}: every config key has a one-line description`, () => {
      const keys = configKeys(pipeline.configSchema, pipeline.configSchema.parse({}));
      expect(keys.length).toBeGreaterThan(5);
      expect(keys.filter((k) => !k.description?.trim()).map((k) => k.path)).toEqual([]);
      expect(keys.filter((k) => /\n/.test(k.description!)).map((k) => k.path)).toEqual([]);
    });
  }

  it('walks into every nested object and every list of objects', () => {
    const paths = (name: string) => configKeys(pipelines[name].configSchema, pipelines[name].configSchema.parse({})).map((k) => k.path);
    expect(paths('mtu')).toEqual(expect.arrayContaining(['sources', 'sources.snips.dir', 'sources.generic', 'sources.generic[].file', 'clustering.decisions.merge[].into', 'targets.steer', 'today']));
    expect(paths('toole')).toEqual(expect.arrayContaining(['source.file', 'descriptions.exclude[].tool', 'overlap.decisions', 'overlap.plotClusters', 'tasks.scenario.groups', 'statistics.reference']));
    expect(paths('acebench')).toEqual(expect.arrayContaining(['tree.fieldsFile', 'embedder', 'importDir']));
    expect(paths('nestools')).toEqual(expect.arrayContaining(['split', 'importFile']));
    expect(paths('tooltalk')).toEqual(expect.arrayContaining(['databasesDir', 'importDir']));
  });
});

describe('toolkiln run --config with an unknown key', () => {
  let home: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'tk-config-keys-'));
    writeFileSync(join(home, 'bad.json'), JSON.stringify({ cuont: 5 }));
    writeFileSync(join(home, 'nested.json'), JSON.stringify({ sources: { atis: { enabeld: false } } }));
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  async function cli(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), home, cwd: home, env: {} });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  it('exits 2 with one line naming the key and the likely meant one, and runs nothing', async () => {
    const bad = await cli('run', 'nestools', '--config', 'bad.json', '--quiet');
    expect(bad).toEqual({ code: 2, out: '', err: 'toolkiln: bad.json: unknown key "cuont" — did you mean "count"?' });
    const nested = await cli('run', 'mtu', '--config', 'nested.json', '--quiet');
    expect(nested).toEqual({ code: 2, out: '', err: 'toolkiln: nested.json: unknown key "sources.atis.enabeld" — did you mean "enabled"?' });
  });

  it('the installed binary does the same', () => {
    const result = spawnSync(process.execPath, [bin, 'run', 'nestools', '--config', 'bad.json'], { cwd: home, encoding: 'utf8', env: { ...process.env, TOOLKILN_HOME: home, OPENAI_API_KEY: '', OPENAI_BASE_URL: '' } });
    expect(result.status).toBe(2);
    expect(result.stderr).toBe('toolkiln: bad.json: unknown key "cuont" — did you mean "count"?\n');
  });
});
