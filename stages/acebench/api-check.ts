import { checkFunctionDefinition, describeProblems, type SchemaProblem } from '../../core/json-schema.ts';
import type { Json } from '../../core/records.ts';
import { reject, type RejectReason, type ScanStage } from '../../core/stage.ts';
import { findRepeats, type DedupEntry } from '../dedup-near.ts';
import { ApiRecord, pathText } from './api-pool.ts';

/**
 * The pool's gate: every synthesised API must be a usable definition (`checkFunctionDefinition`),
 * return an object schema of described fields, and carry a name no other API of its language has.
 * Then near-duplicates — the same name and description said almost the same way — are dropped
 * through the shared near-duplicate search, the first in input order kept. Every rejected API
 * says which it is, where it sits in the tree, and what is wrong (or which API it repeats).
 */

export interface CheckApisOptions {
  /** Levenshtein ratio of `name: description` at or above which two APIs are near-duplicates. */
  ratio?: number;
}

/** Problems of what an API returns: an object schema whose fields are typed and described. */
export function checkReturns(returns: Json): SchemaProblem[] {
  if (!returns || typeof returns !== 'object' || Array.isArray(returns)) return [{ path: 'returns', message: 'must be an object schema {type: "object", properties}' }];
  return checkFunctionDefinition({ name: 'returns', description: 'returns', parameters: returns }).map((p) => ({ path: p.path.replace(/^parameters/, 'returns'), message: p.message }));
}

/** Problems of one API record: its definition, its returns, and its name matching its function's. */
export function apiProblems(api: ApiRecord): SchemaProblem[] {
  const problems = [...checkFunctionDefinition(api.function), ...checkReturns(api.returns)];
  if (api.function.name !== api.name) problems.push({ path: 'name', message: `the record says ${JSON.stringify(api.name)}, its function ${JSON.stringify(api.function.name)}` });
  return problems;
}

interface CheckState {
  count: number;
  rejects: Map<number, RejectReason>;
  next: number;
}

export function checkApisStage(options: CheckApisOptions = {}): ScanStage<ApiRecord, ApiRecord, CheckState> {
  const ratio = options.ratio ?? 0.9;
  return {
    kind: 'scan',
    name: 'check-apis',
    version: 1,
    input: ApiRecord,
    output: ApiRecord,
    keyOf: (api) => `${api.language}:${api.name}`,
    collect: (apis) => {
      const rejects = new Map<number, RejectReason>();
      const firstOfName = new Map<string, { index: number; path: string }>();
      const entries: (DedupEntry & { index: number })[] = [];
      let count = 0;
      for (const api of apis) {
        const index = count++;
        const where = `${api.language} API ${api.name} (${pathText(api.path)})`;
        const problems = apiProblems(api);
        if (problems.length) {
          rejects.set(index, { reason: 'invalid_api', detail: `${where}: ${describeProblems(problems)}`, recordId: api.name });
          continue;
        }
        const nameKey = `${api.language}\u0000${api.name}`;
        const first = firstOfName.get(nameKey);
        if (first) {
          rejects.set(index, { reason: 'duplicate_name', detail: `${where}: the name is taken by the API of ${first.path}`, recordId: api.name, duplicateOf: api.name });
          continue;
        }
        firstOfName.set(nameKey, { index, path: pathText(api.path) });
        entries.push({ index, id: api.name, text: `${api.name}: ${api.function.description}`, group: api.language });
      }
      const repeats = findRepeats(entries, { ratio, text: 'query', scope: 'all' });
      for (const [position, why] of repeats.rejects) rejects.set(entries[position].index, { ...why, detail: `API ${entries[position].id} repeats ${why.duplicateOf}: ${why.detail}` });
      return { count, rejects, next: 0 };
    },
    run: (api, ctx) => {
      const why = ctx.state.rejects.get(ctx.state.next++);
      return why ? reject(why.reason, why.detail, { recordId: why.recordId, duplicateOf: why.duplicateOf }) : api;
    },
    finish: (state, ctx) => {
      const reasons = [...state.rejects.values()].map((r) => r.reason);
      const count = (reason: string) => reasons.filter((r) => r === reason).length;
      ctx.report('acebench.apiCheck', { in: state.count, kept: state.count - reasons.length, invalid: count('invalid_api'), duplicateNames: count('duplicate_name'), nearDuplicates: count('near_duplicate') + count('exact_duplicate') });
    },
  };
}
