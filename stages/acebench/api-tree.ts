import { z } from 'zod';
import { UserError } from '../../core/errors.ts';
import { hashOf } from '../../core/hash.ts';
import { readJsonlValues } from '../../core/source-files.ts';
import { reject, sourceStage, type SourceReject, type SourceStage, type StageContext } from '../../core/stage.ts';
import contextTreePrompt, { levelText, type TreeLevel } from '../../prompts/acebench-context-tree.ts';
import { loadDomainFields } from '../sources/nestools.ts';
import { documentExcerpt, documentSections, loadDocumentDomains, type DocumentDomain } from './api-documents.ts';

/**
 * ACEBench §3.1.1 (1), the hierarchical API context tree: domain → subdomain → functionality,
 * grown step by step (self-evolution). Each step shows the model a node and the children it has so
 * far and asks for new ones; documents the user gives steer the proposals. Offline, the prompt's
 * renderer proposes the shipped domain lists' subdomains (NesTools `fields.json`, Seal-Tools
 * `field.jsonl`) and the documents' headings and key phrases, then template phrases.
 */

export const TreePath = z.object({ domain: z.string().min(1), subdomain: z.string().min(1), functionality: z.string().min(1) });
export type TreePath = z.infer<typeof TreePath>;

/** One leaf of the tree: a functionality with the path to it. */
export const ContextPath = z.object({
  id: z.string(),
  path: TreePath,
  /** `list`: the shipped domain lists (offline); `document`: the user's documents; `llm`: proposed by the model. */
  origin: z.enum(['list', 'document', 'llm']),
  /** The documents of its domain, as named in the config. */
  documents: z.array(z.string()),
});
export type ContextPath = z.infer<typeof ContextPath>;

export interface ContextTreeOptions {
  /** NesTools `Domain/Subdomain` list; '' skips it. */
  fieldsFile?: string;
  /** Seal-Tools `{"Domain": [subdomains]}` JSONL; '' skips it. */
  sealFieldsFile?: string;
  /** Text / Markdown files or folders: each folder is a domain named after it. */
  documents?: string[];
  /** Domains taken from the lists (seeded); the documents' domains come on top. */
  domains: number;
  subdomainsPerDomain: number;
  functionalitiesPerSubdomain: number;
  /** Proposal steps per node: each asks for part of what is still missing, given what exists. */
  rounds?: number;
  temperature?: number;
  /** Characters of the documents quoted in a prompt. */
  documentChars?: number;
}

/** Domain → listed subdomains from both lists (first-seen order, each subdomain once). */
export function loadDomainLists(fieldsFile: string | undefined, sealFieldsFile: string | undefined): Map<string, string[]> {
  const domains = new Map<string, string[]>();
  const add = (domain: string, subdomain: string) => {
    const list = domains.get(domain) ?? [];
    if (subdomain && !list.some((s) => s.toLowerCase() === subdomain.toLowerCase())) list.push(subdomain);
    domains.set(domain, list);
  };
  if (fieldsFile) {
    for (const field of loadDomainFields(fieldsFile)) {
      const [domain, ...rest] = field.split('/');
      if (domain.trim()) add(domain.trim(), rest.join('/').trim());
    }
  }
  if (sealFieldsFile) {
    for (const { line, value } of readJsonlValues(sealFieldsFile, { expected: '{"Domain": ["Subdomain", ...]} per line' })) {
      const entries = value && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value) : [];
      if (!entries.length || entries.some(([, subs]) => !Array.isArray(subs) || subs.some((s) => typeof s !== 'string'))) {
        throw new UserError(`${sealFieldsFile}:${line}: expected {"Domain": ["Subdomain", ...]}; fix or remove that line`);
      }
      for (const [domain, subs] of entries) for (const sub of subs as string[]) add(domain.trim(), sub.trim());
    }
  }
  return domains;
}

interface DomainSeed {
  domain: string;
  listed: string[];
  docs?: DocumentDomain;
}

export function contextTreeStage(options: ContextTreeOptions): SourceStage<ContextPath> {
  const rounds = Math.max(1, options.rounds ?? 2);
  return sourceStage({
    name: 'context-tree',
    version: 1,
    output: ContextPath,
    prompts: [contextTreePrompt],
    load: async (ctx) => {
      const listed = loadDomainLists(options.fieldsFile && ctx.resolvePath(options.fieldsFile), options.sealFieldsFile && ctx.resolvePath(options.sealFieldsFile));
      const docs = loadDocumentDomains(options.documents ?? [], ctx.resolvePath);
      const seeds: DomainSeed[] = ctx
        .rng('domains')
        .sample([...listed.keys()], options.domains)
        .map((domain) => ({ domain, listed: ctx.rng('subdomains', domain).shuffle(listed.get(domain)!) }));
      for (const doc of docs) {
        const seed = seeds.find((s) => s.domain.toLowerCase() === doc.domain.toLowerCase());
        if (seed) seed.docs = doc;
        else seeds.push({ domain: doc.domain, listed: [], docs: doc });
      }
      const rejects: SourceReject[] = [];
      const grown = await Promise.all(seeds.map((seed) => growDomain(seed, options, rounds, ctx, rejects)));
      const out = grown.flat();
      ctx.report('acebench.tree', {
        domains: seeds.length,
        documentDomains: docs.length,
        subdomains: new Set(out.map((p) => `${p.path.domain}\u0000${p.path.subdomain}`)).size,
        functionalities: out.length,
      });
      ctx.log(`context tree: ${seeds.length} domains, ${out.length} functionalities`);
      return [...out, ...rejects];
    },
  });
}

async function growDomain(seed: DomainSeed, options: ContextTreeOptions, rounds: number, ctx: StageContext, rejects: SourceReject[]): Promise<ContextPath[]> {
  const sections = (seed.docs?.files ?? []).flatMap((file) => documentSections(file.text));
  const excerpt = seed.docs ? documentExcerpt(seed.docs.files, options.documentChars ?? 4000) : '';
  const origin: ContextPath['origin'] = seed.docs ? 'document' : ctx.llm.backend === 'offline' ? 'list' : 'llm';
  const documents = seed.docs?.files.map((f) => f.name) ?? [];
  const expand = (level: TreeLevel, path: string[], count: number, choices: string[]) => expandNode({ level, path, count, choices, excerpt, rounds, temperature: options.temperature }, ctx, rejects);

  const subdomains = await expand('subdomain', [seed.domain], options.subdomainsPerDomain, [...sections.map((s) => s.heading), ...seed.listed]);
  const leaves = await Promise.all(
    subdomains.map(async (subdomain) => {
      const phrases = sections.filter((s) => s.heading === subdomain).flatMap((s) => s.phrases);
      const functionalities = await expand('functionality', [seed.domain, subdomain], options.functionalitiesPerSubdomain, phrases);
      return functionalities.map((functionality): ContextPath => {
        const path = { domain: seed.domain, subdomain, functionality };
        return { id: hashOf(path, 16), path, origin, documents };
      });
    }),
  );
  return leaves.flat();
}

interface NodeRequest {
  level: TreeLevel;
  path: string[];
  count: number;
  choices: string[];
  excerpt: string;
  rounds: number;
  temperature?: number;
}

/** The node's children, proposed over `rounds` steps, each seeing what the steps before found. */
async function expandNode(request: NodeRequest, ctx: StageContext, rejects: SourceReject[]): Promise<string[]> {
  const children: string[] = [];
  const pathText = request.path.join(' > ');
  for (let round = 0; round < request.rounds && children.length < request.count; round++) {
    const want = Math.ceil((request.count - children.length) / (request.rounds - round));
    const result = await ctx.tryAsk(
      contextTreePrompt,
      { ...levelText(request.level, request.excerpt), path: pathText, count: want, existing: children.join('\n') || '(none yet)', choices: request.choices },
      { key: `${pathText}#${round}`, temperature: request.temperature },
    );
    if (!result.ok) {
      rejects.push({ ...reject(result.reason, `${request.level}s of ${pathText}, step ${round + 1}: ${result.detail}`, { recordId: pathText }), record: { path: request.path, level: request.level, round } });
      break;
    }
    const known = new Set(children.map((c) => c.toLowerCase()));
    const fresh = result.value.items.filter((item) => !known.has(item.toLowerCase()) && (known.add(item.toLowerCase()), true)).slice(0, want);
    if (!fresh.length) break;
    children.push(...fresh);
  }
  return children;
}
