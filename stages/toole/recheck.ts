import type { Check, Sample, ToolSpec } from '../../core/records.ts';
import { filterContext, filterQuery, filterToolOf, queryOfSample, type FilterOptions } from './filters.ts';

/**
 * ToolE's checks on a sample a reviewer edited (`toolkiln review import`): labels that exist in the
 * version's tool library, and for ToolE queries the filters of Appendix A.3 (empty, overlong,
 * naming its tool; simple arithmetic as a soft check). A failing hard check refuses the edit.
 */
export function recheckToolESample(sample: Sample, tools: ToolSpec[], options: FilterOptions): Check[] {
  const labels = sample.expected.labels ?? [];
  const library = new Set(tools.map((t) => t.name));
  const task = sample.category.startsWith('toole/task/');
  // Task samples carry labels of other kinds (yes / no, or none); the query filters concern ToolE queries.
  const unknown = task ? labels.filter((l) => !library.has(l) && l !== 'yes' && l !== 'no') : labels.filter((l) => !library.has(l));
  const checks: Check[] = [unknown.length ? { name: 'known_labels', pass: false, reason: `label(s) ${unknown.join(', ')} not in the tool library` } : { name: 'known_labels', pass: true }];
  if (task || !labels.length) return checks;
  const query = queryOfSample(sample);
  const outcome = filterQuery({ ...query, checks: [], tags: [] }, filterContext(tools.map(filterToolOf), options));
  if ('reject' in outcome) checks.push({ name: outcome.reject.reason, pass: false, reason: outcome.reject.detail });
  else checks.push({ name: 'query_filters', pass: true }, ...outcome.query.checks);
  return checks;
}
