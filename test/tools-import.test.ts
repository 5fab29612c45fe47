import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../bin/cli.ts';
import { hashFileSync } from '../core/hash.ts';
import { ToolsConfig } from '../core/tool-source.ts';
import { openAiProblem, type ReportLine } from '../stages/sources/tools/convert.ts';
import { importTools } from '../stages/sources/tools/import.ts';
import { OPENAI_NAME } from '../stages/sources/tools/names.ts';
import { summariseImport } from '../stages/sources/tools/report.ts';

/**
 * Tool import from files: TOUCAN's MCP server files read in place (never modified), and small MCP,
 * OpenAPI and OpenAI tool-list fixtures exercising each conversion rule and each refusal.
 */

const TOUCAN = '../shared/data/sources/mcp/servers';
const FIXTURES = 'test/fixtures/tools';
const BAD = 'test/fixtures/tools-bad';

const line = (lines: ReportLine[], tool: string) => lines.find((l) => l.tool === tool)!;

describe('TOUCAN server files', () => {
  it.skipIf(!statSync(TOUCAN, { throwIfNoEntry: false }))('imports every listed tool, says why each other server gives none, and OpenAI accepts every converted tool', async () => {
    const files = readdirSync(TOUCAN).sort();
    const before = hashFileSync(join(TOUCAN, files[0]));
    const { tools, lines, sources } = await importTools([{ kind: 'auto', path: TOUCAN }]);
    expect(sources).toHaveLength(265);
    const summary = summariseImport(lines, tools);
    // 109 servers carry a tools/list answer (724 tools); the other 156 recorded a failed listing.
    expect(summary.toolsSeen).toBe(724);
    expect(summary.serversWithoutTools).toBe(156);
    expect(summary.noToolsBy).toEqual({ 'server-not-listed': 156 });
    expect(summary.imported + summary.refused).toBe(724);
    expect(tools).toHaveLength(summary.imported);
    expect(summary.imported).toBe(724);
    expect(tools.every((tool) => openAiProblem(tool) === null && OPENAI_NAME.test(tool.name))).toBe(true);
    expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
    // The same tool name on two servers: both qualified by their server.
    const searches = tools.filter((t) => t.provenance?.originalName === 'search');
    expect(searches.length).toBeGreaterThan(1);
    expect(searches.every((t) => t.name.endsWith('__search'))).toBe(true);
    expect(summary.notes['no-description']).toBe(27);
    // Two servers both called "Weather" stay two servers: each takes its file's name.
    const weather = new Set(tools.filter((t) => String(t.provenance?.server).startsWith('Weather (')).map((t) => t.provenance?.server));
    expect(weather.size).toBe(2);
    expect(summary.notes['server-name-shared']).toBe(4);
    // TOUCAN's own filter (datagen/step1.1_gen_questions.py) leaves out 37 listed servers whose tool calls it judged invalid: flagged here.
    const invalid = tools.filter((t) => (t.provenance?.flags as string[] | undefined)?.includes('toucan-remote-tool-invalid'));
    expect(new Set(invalid.map((t) => t.provenance?.file)).size).toBe(37);
    // The other 72 servers are those TOUCAN generates from, with their 283 tools.
    expect(tools.length - invalid.length).toBe(283);
    expect(tools.filter((t) => !t.description).every((t) => (t.provenance?.flags as string[]).includes('no-description'))).toBe(true);
    // Exa's server file: its tool names, in order, with their provenance.
    const exa = JSON.parse(readFileSync(join(TOUCAN, '0001.exa_exa-search_labeled.json'), 'utf8'));
    const exaTools = tools.filter((t) => t.provenance?.file === '0001.exa_exa-search_labeled.json');
    expect(exaTools.map((t) => t.provenance?.originalName)).toEqual(exa.metadata.remote_server_response.tool_names);
    expect(exaTools[0].provenance).toMatchObject({ source: 'mcp', server: 'Exa Search', schemaHash: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(exaTools[0].domain).toBe('Web Search & Research/Exa Search');
    // A server without a tools/list answer is a line naming the file and TOUCAN's error.
    const failed = lines.find((l) => l.outcome === 'no-tools')!;
    expect(failed.where).toMatch(/servers\/.+\.json$/);
    expect(failed.detail).toMatch(/TOUCAN could not list its tools \(.+\); \d+ tool\(s\) scraped/);
    expect(hashFileSync(join(TOUCAN, files[0]))).toBe(before);
  });
});

describe('conversion rules (fixtures)', async () => {
  const { tools, lines } = await importTools([{ kind: 'auto', path: FIXTURES }]);
  const byOriginal = (server: string, name: string) => tools.find((t) => t.provenance?.server === server && t.provenance?.originalName === name)!;

  it('accounts every tool: imported or refused with a reason, nothing else', () => {
    expect(lines.filter((l) => l.outcome === 'imported')).toHaveLength(tools.length);
    expect(lines.filter((l) => l.outcome === 'refused').every((l) => l.reason && l.detail)).toBe(true);
    expect(lines).toHaveLength(20);
    expect(tools.every((tool) => openAiProblem(tool) === null)).toBe(true);
  });

  it('resolves $ref / $defs, reads Optional<X> as X and constants as an enum, drops required names without a property', () => {
    const forecast = byOriginal('weather', 'get_forecast');
    expect(forecast.parameters.properties.location).toEqual({ type: 'object', description: 'a place', properties: { city: { type: 'string' }, country: { type: 'string' } }, required: ['city'] });
    expect(forecast.parameters.properties.days).toEqual({ type: 'integer', minimum: 1, maximum: 7, description: 'days ahead' });
    expect(forecast.parameters.properties.units).toEqual({ type: 'string', enum: ['metric', 'imperial'] });
    expect(forecast.parameters.required).toEqual(['location']);
    expect(JSON.stringify(forecast.parameters)).not.toMatch(/\$ref|\$defs|\$schema/);
    expect(forecast.returns.properties.temperature).toEqual({ type: 'number', description: 'degrees' });
    expect(lines.find((l) => l.where === `${FIXTURES}/weather-mcp.json: tools[0]`)!.notes).toEqual(expect.arrayContaining(['ref-inlined', 'anyOf-optional-null-read-as-type', 'oneOf-of-constants-read-as-enum', 'required-without-property-dropped']));
  });

  it('refuses a recursive reference by name, and parameters that are not one object', () => {
    const tree = line(lines, 'tree');
    expect(tree).toMatchObject({ outcome: 'refused', reason: 'recursive-ref' });
    expect(tree.detail).toContain('#/definitions/Filter');
    expect(line(lines, 'get_todos_id_tree')).toMatchObject({ outcome: 'refused', reason: 'recursive-ref' });
    expect(line(lines, 'choose')).toMatchObject({ outcome: 'refused', reason: 'parameters-not-object' });
    expect(line(lines, 'broken')).toMatchObject({ outcome: 'refused', reason: 'parameters-not-object', where: `${FIXTURES}/functions.json: item 2` });
  });

  it('keeps anyOf the validator handles, merges allOf of objects, drops repeated enum values', () => {
    expect(byOriginal('weather', 'weather.alerts/list').parameters.properties.region).toEqual({ anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] });
    const alert = byOriginal('weather', 'set_alert');
    expect(alert.parameters.properties).toEqual({ city: { type: 'string' }, level: { type: 'string', enum: ['warning', 'severe'] } });
    expect(alert.parameters.required).toEqual(['city']);
  });

  it('makes names valid for OpenAI reversibly and distinct across servers; refuses a repeat within one server', () => {
    const dotted = byOriginal('weather', 'weather.alerts/list');
    expect(dotted.name).toMatch(/^weather_alerts_list_[0-9a-f]{8}$/);
    expect(byOriginal('weather', '天气预报').name).toMatch(/^tool_[0-9a-f]{8}$/);
    const long = tools.find((t) => (t.provenance?.originalName as string).startsWith('a_tool_name_that_is_much_too_long'))!;
    expect(long.name.length).toBe(64);
    // Two servers name a tool get_forecast: both are qualified, neither wins by coming first.
    expect(byOriginal('weather', 'get_forecast').name).toBe('weather__get_forecast');
    expect(byOriginal('maps-mcp', 'get_forecast').name).toBe('maps-mcp__get_forecast');
    const repeat = lines.filter((l) => l.tool === 'get_forecast' && l.outcome === 'refused');
    expect(repeat).toEqual([expect.objectContaining({ reason: 'duplicate-in-server', where: `${FIXTURES}/weather-mcp.json: tools[5]` })]);
    expect(lines.find((l) => l.where === `${FIXTURES}/weather-mcp.json: tools[7]`)).toMatchObject({ reason: 'no-name' });
  });

  it('flags tools without a description and carries MCP annotations into isAction', () => {
    expect(byOriginal('weather', 'weather.alerts/list').provenance?.flags).toEqual(['no-description']);
    expect(byOriginal('weather', 'get_forecast').isAction).toBe(false);
    expect(byOriginal('weather', 'set_alert').isAction).toBe(true);
    expect(byOriginal('weather', 'weather.alerts/list').isAction).toBeUndefined();
  });

  it('OpenAPI 3.0 (YAML): one tool per operation, parameters and body merged, the 2xx schema as returns', () => {
    const list = byOriginal('Petstore', 'listPets');
    expect(Object.keys(list.parameters.properties)).toEqual(['X-Request-Id', 'limit']);
    expect(list.parameters.properties.limit).toEqual({ type: ['integer', 'null'], maximum: 100, description: 'how many to return' });
    expect(list.returns.properties.result).toMatchObject({ type: 'array', items: { type: 'object', required: ['name', 'id'] } });
    expect(list.isAction).toBe(false);
    const create = byOriginal('Petstore', 'post_pets');
    expect(create.parameters).toMatchObject({ properties: { name: { type: 'string' }, tag: { type: 'string' } }, required: ['name'] });
    expect(create.returns.required).toEqual(['name', 'id']);
    expect(create).toMatchObject({ isAction: true, provenance: { method: 'POST', path: '/pets', response: '201', parameterPlaces: { name: 'body', 'X-Request-Id': 'header' } } });
    expect(byOriginal('Petstore', 'showPetById').parameters.required).toEqual(['petId']);
    expect(byOriginal('Petstore', 'deletePet').returns.properties).toEqual({});
  });

  it('OpenAPI 3.1 (JSON): a body property a parameter already names is prefixed body_', () => {
    const update = byOriginal('Todo API', 'update todo');
    expect(Object.keys(update.parameters.properties)).toEqual(['id', 'body_id', 'title', 'done']);
    expect(update.parameters.required).toEqual(['id']);
    expect(update.name).toMatch(/^update_todo_[0-9a-f]{8}$/);
  });

  it('OpenAI tool lists: wrapped and bare functions; other tool types refused', () => {
    expect(byOriginal('functions', 'get_stock_price').parameters.required).toEqual(['symbol']);
    expect(byOriginal('functions', 'convert_currency').parameters.required).toEqual(['amount', 'from', 'to']);
    expect(lines.find((l) => l.where === `${FIXTURES}/functions.json: item 3`)).toMatchObject({ reason: 'not-a-function' });
  });

  it('reads a written library back unchanged', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tools-lib-'));
    const out = join(dir, 'lib.jsonl');
    expect(await main(['tools', 'import', FIXTURES, '--out', out], { out: () => {}, err: () => {} })).toBe(0);
    const again = await importTools([{ kind: 'auto', path: out }]);
    expect(again.tools.map((t) => t.name)).toEqual(tools.map((t) => t.name));
    expect(again.tools.map((t) => t.parameters)).toEqual(tools.map((t) => t.parameters));
    const report = JSON.parse(readFileSync(join(dir, 'lib.report.json'), 'utf8'));
    expect(report.lines).toHaveLength(20);
    expect(report.summary).toMatchObject({ imported: tools.length, refused: 7, openAiShare: 1 });
  });
});

describe('bad input: one line naming the file and the item', () => {
  const run = async (args: string[]) => {
    const err: string[] = [];
    const code = await main(['tools', 'import', ...args, '--out', join(mkdtempSync(join(tmpdir(), 'tools-bad-')), 'x.jsonl')], { out: () => {}, err: (t) => err.push(t) });
    return { code, err };
  };

  it.each([
    ['bad-syntax.json', /bad-syntax\.json:2:\d+: not valid JSON/],
    ['unknown-shape.json', /unknown-shape\.json: cannot tell what tools it holds/],
    ['swagger2.json', /swagger2\.json: Swagger 2\.0 is not read, only OpenAPI 3\.0 and 3\.1/],
  ])('%s', async (file, message) => {
    const { code, err } = await run([`${BAD}/${file}`]);
    expect(code).toBe(2);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(message);
  });

  it('a missing source, and a refused tool named on its own line', async () => {
    expect((await run(['no/such/file.json'])).err).toEqual(['toolkiln: tool source not found: no/such/file.json (give a file or folder of MCP, OpenAPI, OpenAI tool-list or tools.jsonl files)']);
    const { code, err } = await run([`${FIXTURES}/functions.json`]);
    expect(code).toBe(0);
    expect(err).toEqual([
      `refused: ${FIXTURES}/functions.json: item 2 (broken): parameters-not-object: its input schema is ["not","a","schema"], not a JSON-Schema object`,
      `refused: ${FIXTURES}/functions.json: item 3 (no name): not-a-function: item 3 is a "code_interpreter" tool; only function tools are read`,
    ]);
  });

  it('the config block: paths and objects, a malformed entry refused by the schema', () => {
    const parsed = ToolsConfig.parse({ sources: ['lib.jsonl', { kind: 'openapi', path: 'api.yaml' }, { kind: 'mcp-stdio', name: 'notes', command: 'node', args: ['s.mjs'] }] });
    expect(parsed.sources[0]).toEqual({ kind: 'auto', path: 'lib.jsonl' });
    expect(parsed.execute).toEqual({ enabled: true, timeoutMs: 20000, restarts: 2 });
    expect(ToolsConfig.safeParse({ sources: [{ kind: 'mcp-stdio', command: 'node' }] }).success).toBe(false);
    expect(ToolsConfig.safeParse({ sources: [] }).success).toBe(false);
  });
});
