import type { ToolSpec } from '../../core/records.ts';
import type { SampleSource } from '../../core/sample-source.ts';
import { apiOfToolSpec, type ApiSpec } from './api-spec.ts';

/**
 * NesTools numbers every API of the benchmark once (its `api_dic.json`): `make_test_prompt.py` shows
 * each listed API with that number as `api_id`, `test_api_ids.jsonl` names each record's `api`
 * entries by it, and `eval.py` takes a gold call's id from there and matches predicted calls by
 * `api_id`. So the ids a prompt shows are the ids the export writes: one id per distinct API
 * definition of a version, numbered from 0 in the order first met going over its splits by name,
 * sample by sample, API by API.
 */
export class ApiIds {
  private readonly ids = new Map<string, number>();

  /** The API's id, numbering it next when it is new. */
  idOf(api: ApiSpec): number {
    const key = JSON.stringify(api);
    let id = this.ids.get(key);
    if (id === undefined) this.ids.set(key, (id = this.ids.size));
    return id;
  }

  /** The ids of a sample's tools, in their order. */
  idsOfTools(tools: readonly ToolSpec[]): number[] {
    return tools.map((tool) => this.idOf(apiOfToolSpec(tool)));
  }
}

/** The splits in the order the numbering (and the export) goes over them. */
export const numberedSplits = (samples: SampleSource): string[] => [...samples.splits].sort();

/** Every API of the version numbered, in one pass over its samples. */
export function apiIdsOf(samples: SampleSource): ApiIds {
  const ids = new ApiIds();
  for (const split of numberedSplits(samples)) for (const sample of samples.inSplit(split)) ids.idsOfTools(sample.tools);
  return ids;
}
