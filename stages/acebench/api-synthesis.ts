import type { Json } from '../../core/records.ts';
import { mapStage, reject, type MapStage, type StageContext } from '../../core/stage.ts';
import apiPrompt, { languageNote } from '../../prompts/acebench-api.ts';
import { documentExcerpt, loadDocumentDomains, type DocumentDomain } from './api-documents.ts';
import { ApiRecord, inReleasedOrder } from './api-pool.ts';
import { ContextPath } from './api-tree.ts';
import { ACE_LANGUAGES, type AceLanguage } from './record.ts';

/**
 * ACEBench §3.1.1 (1): the APIs of one functionality of the context tree, one request per
 * language. The answers are taken as drafts: `check-apis` decides whether each is a usable
 * definition, and rejects it with the path of its problem when it is not.
 */

export interface SynthesiseApisOptions {
  languages?: AceLanguage[];
  /** APIs asked for per functionality and language. */
  apisPerFunctionality?: number;
  /** The same documents the tree was grown from: quoted in the prompt for their domain. */
  documents?: string[];
  documentChars?: number;
  temperature?: number;
}

export function synthesiseApisStage(options: SynthesiseApisOptions = {}): MapStage<ContextPath, ApiRecord> {
  const languages = options.languages ?? [...ACE_LANGUAGES];
  const count = options.apisPerFunctionality ?? 2;
  let documents: DocumentDomain[] | undefined;
  const documentsFor = (domain: string, ctx: StageContext) => {
    documents ??= loadDocumentDomains(options.documents ?? [], ctx.resolvePath);
    const found = documents.find((d) => d.domain.toLowerCase() === domain.toLowerCase());
    return found ? documentExcerpt(found.files, options.documentChars ?? 4000) : '';
  };
  return mapStage({
    name: 'synthesise-apis',
    version: 1,
    fanOut: true,
    input: ContextPath,
    output: ApiRecord,
    prompts: [apiPrompt],
    keyOf: (leaf) => leaf.id,
    run: async (leaf, ctx) => {
      const excerpt = leaf.documents.length ? documentsFor(leaf.path.domain, ctx) : '';
      const out: ApiRecord[] = [];
      for (const language of languages) {
        const result = await ctx.tryAsk(
          apiPrompt,
          {
            ...leaf.path,
            language,
            count,
            existing: '(none yet)',
            languageNote: languageNote(language),
            documentsBlock: excerpt ? `\nThe user's documents for this domain (follow what they describe):\n${excerpt}\n` : '',
          },
          { key: `${ctx.key}:${language}`, temperature: options.temperature },
        );
        if (!result.ok) return reject(result.reason, `${language} APIs of ${leaf.path.domain} > ${leaf.path.subdomain} > ${leaf.path.functionality}: ${result.detail}`);
        const origin: ApiRecord['origin'] = leaf.origin === 'document' ? 'document' : ctx.llm.backend === 'offline' ? 'template' : 'llm';
        for (const draft of result.value.apis) {
          out.push({
            name: draft.name,
            language,
            path: leaf.path,
            // A missing part stays visible as null, so the check names it instead of the schema parser.
            function: inReleasedOrder({ name: draft.name, description: draft.description, parameters: (draft.parameters ?? null) as Json }),
            returns: (draft.returns ?? null) as Json,
            origin,
          });
        }
      }
      return out;
    },
  });
}
