import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFunctionDefinition } from '../core/json-schema.ts';
import { OfflineGateway } from '../core/llm/offline.ts';
import type { LlmGateway } from '../core/llm/types.ts';
import type { ChatMessage, PromptFile } from '../core/prompt.ts';
import { applyScanStage, isReject, standaloneContext, applySourceStage } from '../core/stage.ts';
import { checkApisStage } from '../stages/acebench/api-check.ts';
import { documentSections, loadDocumentDomains } from '../stages/acebench/api-documents.ts';
import { ApiRecord } from '../stages/acebench/api-pool.ts';
import { synthesiseApisStage } from '../stages/acebench/api-synthesis.ts';
import { contextTreeStage, loadDomainLists, type ContextPath } from '../stages/acebench/api-tree.ts';
import { ATOM_KINDS, functionAtomKinds } from '../stages/acebench/record.ts';

const projectDir = new URL('..', import.meta.url).pathname;
const resolvePath = (path: string) => (path.startsWith('/') ? path : join(projectDir, path));
const FIELDS = '../shared/data/sources/nestools/fields.json';
const SEAL_FIELDS = '../shared/data/sources/seal-tools/field.jsonl';
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'acebench-api-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const contextOf = (llm: LlmGateway, seed = 3) => standaloneContext({ llm, seed, runDir: tempDir(), resolvePath });

/** A gateway answering each prompt with a scripted value, recording the messages it was sent. */
function scripted(answer: (promptId: string, vars: Record<string, unknown>, call: number) => unknown): LlmGateway & { sent: { prompt: string; vars: Record<string, unknown>; messages: ChatMessage[] }[] } {
  const sent: { prompt: string; vars: Record<string, unknown>; messages: ChatMessage[] }[] = [];
  return {
    backend: 'openai',
    model: 'scripted',
    sent,
    async generate<V extends Record<string, unknown>, O>(prompt: PromptFile<V, O>, vars: V) {
      sent.push({ prompt: prompt.id, vars, messages: prompt.render(vars) });
      const parsed = prompt.schema.safeParse(answer(prompt.id, vars, sent.length));
      return parsed.success ? { ok: true as const, value: parsed.data, model: 'scripted', cached: false } : { ok: false as const, reason: 'schema_invalid', detail: parsed.error.message };
    },
    embed: async () => [],
    usage: () => ({ total: { requests: 0, cached: 0, promptTokens: 0, completionTokens: 0, costUsd: null }, byStage: {}, byModel: {} }),
    close: async () => {},
  };
}

async function synthesise(leaves: ContextPath[], llm: LlmGateway, options = {}): Promise<ApiRecord[]> {
  const stage = synthesiseApisStage(options);
  const ctx = contextOf(llm);
  const out: ApiRecord[] = [];
  for (const leaf of leaves) {
    const result = await stage.run(leaf, { ...ctx, key: leaf.id });
    if (isReject(result)) throw new Error(result.detail);
    out.push(...(result as ApiRecord[]).map((api) => ApiRecord.parse(api)));
  }
  return out;
}

describe('context tree', () => {
  let offline: ContextPath[];
  beforeAll(async () => {
    offline = (await applySourceStage(contextTreeStage({ fieldsFile: FIELDS, sealFieldsFile: SEAL_FIELDS, domains: 6, subdomainsPerDomain: 3, functionalitiesPerSubdomain: 4 }), contextOf(new OfflineGateway(3)))).out;
  });

  it('grows domain → subdomain → functionality from the shipped domain lists, offline', async () => {
    const listed = loadDomainLists(resolvePath(FIELDS), resolvePath(SEAL_FIELDS));
    expect(listed.size).toBeGreaterThanOrEqual(140);
    const domains = new Set(offline.map((p) => p.path.domain));
    expect(domains.size).toBe(6);
    for (const domain of domains) {
      const subdomains = new Set(offline.filter((p) => p.path.domain === domain).map((p) => p.path.subdomain));
      expect(subdomains.size).toBe(3);
      for (const subdomain of subdomains) {
        expect(listed.get(domain)).toContain(subdomain);
        const functionalities = offline.filter((p) => p.path.domain === domain && p.path.subdomain === subdomain).map((p) => p.path.functionality.toLowerCase());
        expect(functionalities).toHaveLength(4);
        expect(new Set(functionalities).size).toBe(4);
      }
    }
    expect(offline.every((p) => p.origin === 'list')).toBe(true);
    // Deterministic for a seed, different for another.
    const again = (await applySourceStage(contextTreeStage({ fieldsFile: FIELDS, sealFieldsFile: SEAL_FIELDS, domains: 6, subdomainsPerDomain: 3, functionalitiesPerSubdomain: 4 }), contextOf(new OfflineGateway(3)))).out;
    expect(again).toEqual(offline);
    const other = (await applySourceStage(contextTreeStage({ fieldsFile: FIELDS, sealFieldsFile: SEAL_FIELDS, domains: 6, subdomainsPerDomain: 3, functionalitiesPerSubdomain: 4 }), contextOf(new OfflineGateway(3), 4))).out;
    expect(other.map((p) => p.path.domain)).not.toEqual(offline.map((p) => p.path.domain));
  });

  it('with an LLM, expands each level step by step, showing what exists so far', async () => {
    const llm = scripted((_id, vars, call) => ({ items: [`${String(vars.path).split(' > ').at(-1)} item ${call}`, `${String(vars.path).split(' > ').at(-1)} extra ${call}`] }));
    const { out } = await applySourceStage(contextTreeStage({ fieldsFile: FIELDS, domains: 1, subdomainsPerDomain: 4, functionalitiesPerSubdomain: 2, rounds: 2 }), contextOf(llm));
    const subdomainAsks = llm.sent.filter((s) => s.vars.level === 'subdomain');
    expect(subdomainAsks).toHaveLength(2);
    const [first, second] = subdomainAsks.map((s) => s.messages.at(-1)!.content);
    expect(first).toContain('(none yet)');
    // The second step is shown the subdomains the first proposed.
    expect(second).toContain('item 1');
    expect(second).toContain('extra 1');
    expect(new Set(out.map((p) => p.path.subdomain)).size).toBe(4);
    expect(out).toHaveLength(8);
    expect(out.every((p) => p.origin === 'llm')).toBe(true);
  });

  it('takes a folder of documents as a new domain: headings become subdomains, key phrases functionalities', async () => {
    const root = tempDir();
    const folder = join(root, 'pet_clinic');
    mkdirSync(folder);
    writeFileSync(
      join(folder, 'handbook.md'),
      '# Pet Clinic Handbook\n\n## Appointments\n\n- Book a vaccination: owners choose a slot.\n- Reschedule visits - by phone or online\n\n## Pharmacy\n\nWe **refill prescriptions** and **track medication stock**.\n',
    );
    writeFileSync(join(folder, 'notes.txt'), 'Grooming\nBaths, trims and nail care.\n');
    const { out } = await applySourceStage(contextTreeStage({ documents: [folder], domains: 0, subdomainsPerDomain: 2, functionalitiesPerSubdomain: 2 }), contextOf(new OfflineGateway(3)));
    expect(new Set(out.map((p) => p.path.domain))).toEqual(new Set(['Pet Clinic']));
    const paths = out.map((p) => `${p.path.subdomain} / ${p.path.functionality}`);
    expect(paths).toContain('Appointments / Book a vaccination');
    expect(paths).toContain('Appointments / Reschedule visits');
    expect(paths).toContain('Pharmacy / refill prescriptions');
    expect(out.every((p) => p.origin === 'document' && p.documents.length === 2)).toBe(true);
    expect(documentSections('Grooming\nBaths, trims and nail care.\n').map((s) => s.heading)).toEqual(['Grooming']);

    // With an LLM the documents are quoted in the prompt.
    const llm = scripted(() => ({ items: ['Something'] }));
    await applySourceStage(contextTreeStage({ documents: [folder], domains: 0, subdomainsPerDomain: 1, functionalitiesPerSubdomain: 1, rounds: 1 }), contextOf(llm));
    expect(llm.sent[0].messages.at(-1)!.content).toContain('Book a vaccination: owners choose a slot.');
  });

  it('refuses missing, empty, binary and non-UTF-8 documents, naming the file', () => {
    const root = tempDir();
    const folder = join(root, 'shop');
    mkdirSync(folder);
    const write = (name: string, content: string | Buffer) => {
      writeFileSync(join(folder, name), content);
      return join(folder, name);
    };
    expect(() => loadDocumentDomains([join(root, 'nowhere.md')])).toThrow(/document .*nowhere\.md does not exist/);
    expect(() => loadDocumentDomains([write('empty.md', ' \n\n')])).toThrow(/document .*empty\.md is empty/);
    expect(() => loadDocumentDomains([write('image.md', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]))])).toThrow(/document .*image\.md is binary/);
    expect(() => loadDocumentDomains([write('latin1.txt', Buffer.from('caf\xe9 menu', 'latin1'))])).toThrow(/document .*latin1\.txt is not UTF-8/);
    // Inside a folder, the bad file is named too (and nothing of the folder is taken).
    expect(() => loadDocumentDomains([folder])).toThrow(/document .*shop\/empty\.md is empty/);
    const emptyFolder = join(root, 'void');
    mkdirSync(emptyFolder);
    expect(() => loadDocumentDomains([emptyFolder])).toThrow(/folder .*void holds no/);
  });
});

describe('API synthesis and checks', () => {
  let leaves: ContextPath[];
  let apis: ApiRecord[];
  beforeAll(async () => {
    leaves = (await applySourceStage(contextTreeStage({ fieldsFile: FIELDS, sealFieldsFile: SEAL_FIELDS, domains: 8, subdomainsPerDomain: 3, functionalitiesPerSubdomain: 3 }), contextOf(new OfflineGateway(5)))).out;
    apis = await synthesise(leaves, new OfflineGateway(5));
  });

  it('composes valid functions in the released shape, in both languages, covering every atom kind', async () => {
    expect(apis.length).toBe(leaves.length * 2 * 2);
    for (const api of apis) {
      expect(checkFunctionDefinition(api.function), api.name).toEqual([]);
      expect(Object.keys(api.function)).toEqual(['name', 'description', 'parameters']);
      expect(Object.keys(api.function.parameters as object)).toEqual(['type', 'properties', 'required']);
      expect(api.name).toMatch(/^[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)+$/);
      expect(api.origin).toBe('template');
      if (api.language === 'zh') expect(api.function.description).toMatch(/\p{Script=Han}/u);
      else expect(api.function.description).not.toMatch(/\p{Script=Han}/u);
    }
    // Each atom kind is offered by at least a fifth of the APIs.
    for (const kind of ATOM_KINDS) expect(apis.filter((api) => functionAtomKinds(api.function).has(kind)).length, kind).toBeGreaterThan(apis.length / 5);
    // Realistic detail: formats, patterns, defaults and bounds all occur.
    const text = JSON.stringify(apis.map((a) => a.function));
    for (const needle of ['"format":"date"', '"format":"date-time"', '"format":"time"', '"pattern"', '"default"', '"minimum"', '"maximum"']) expect(text).toContain(needle);
    const { out, rejects } = await applyScanStage(checkApisStage(), apis, contextOf(new OfflineGateway(5)));
    expect(out.length + rejects.length).toBe(apis.length);
    expect(rejects.filter((r) => r.reason === 'invalid_api')).toEqual([]);
    expect(out.length).toBeGreaterThan(apis.length * 0.9);
  });

  it('rejects an invalid LLM answer with the API, its path and the path of the problem', async () => {
    const llm = scripted(() => ({
      apis: [
        { name: 'Clinic_bookVisit', description: 'Books a visit.', parameters: { type: 'object', properties: { date: { type: 'string', description: 'Day.' } }, required: ['date', 'petId'] }, returns: { type: 'object', properties: { visitId: { type: 'string', description: 'Id.' } } } },
        { name: 'Clinic_listVisits', description: 'Lists visits.', parameters: { type: 'array', items: { type: 'string' } }, returns: { type: 'object', properties: {} } },
        { name: 'Clinic_cancelVisit', description: 'Cancels a visit.', parameters: { type: 'object', properties: { visitId: { type: 'string', description: 'Visit.' } }, required: ['visitId'] }, returns: { type: 'object', properties: { cancelled: { type: 'boolean', description: 'Done.' } } } },
      ],
    }));
    const leaf: ContextPath = { id: 'x', path: { domain: 'Pets', subdomain: 'Clinic', functionality: 'book visits' }, origin: 'llm', documents: [] };
    const drafts = await synthesise([leaf], llm, { languages: ['en'] });
    expect(drafts.every((d) => d.origin === 'llm')).toBe(true);
    const { out, rejects } = await applyScanStage(checkApisStage(), drafts, contextOf(llm));
    expect(out.map((a) => a.name)).toEqual(['Clinic_cancelVisit']);
    expect(rejects.map((r) => r.reason)).toEqual(['invalid_api', 'invalid_api']);
    expect(rejects[0].detail).toContain('Clinic_bookVisit (Pets > Clinic > book visits)');
    expect(rejects[0].detail).toContain('parameters.required[1]: "petId" is not among the properties (date)');
    expect(rejects[1].detail).toContain('Clinic_listVisits');
    expect(rejects[1].detail).toContain('parameters.type: must be "object"');
  });

  it('drops a near-duplicate API and a repeated name, naming the API kept', async () => {
    const base = apis.find((a) => a.language === 'en')!;
    const near: ApiRecord = { ...base, name: `${base.name}s`, function: { ...base.function, name: `${base.name}s` } };
    const sameName: ApiRecord = { ...base, path: { ...base.path, functionality: 'other work' }, function: { ...base.function, description: 'Something else entirely, about other work.' } };
    const zhTwin: ApiRecord = { ...base, language: 'zh' };
    const { out, rejects } = await applyScanStage(checkApisStage(), [base, sameName, near, zhTwin], contextOf(new OfflineGateway(1)));
    expect(out).toEqual([base, zhTwin]);
    expect(rejects[0]).toMatchObject({ reason: 'duplicate_name', recordId: base.name });
    expect(rejects[0].detail).toContain(`the name is taken by the API of ${base.path.domain} > `);
    expect(rejects[1]).toMatchObject({ reason: 'near_duplicate', recordId: `${base.name}s`, duplicateOf: base.name });
    expect(rejects[1].detail).toContain(`API ${base.name}s repeats ${base.name}`);
  });

  it('composes the same APIs for the same seed and key', async () => {
    const again = await synthesise(leaves.slice(0, 3), new OfflineGateway(5));
    expect(again).toEqual(apis.slice(0, again.length));
  });
});
