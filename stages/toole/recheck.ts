import type { Check, Sample, ToolSpec } from '../../core/records.ts';
import { calculationTools, filterQuery, identifyingNames, type FilterOptions } from './filters.ts';
import type { TooleQuery, TooleTool } from './records.ts';

/**
 * ToolE's checks on a sample a reviewer edited (`toolkiln review import`): the query filters of
 * Appendix A.3 (empty, overlong, naming its tool; simple arithmetic as a soft check) and labels
 * that exist in the version's tool library. A failing hard check refuses the edit.
 */
export function recheckToolESample(sample: Sample, tools: ToolSpec[], options: FilterOptions): Check[] {
  const user = sample.dialogue.find((t) => t.role === 'user');
  const labels = sample.expected.labels ?? [];
  const checks: Check[] = [];
  const library = new Set(tools.map((t) => t.name));
  const unknown = labels.filter((l) => !library.has(l) && !['yes', 'no'].includes(l));
  checks.push(unknown.length ? { name: 'known_labels', pass: false, reason: `label(s) ${unknown.join(', ')} not in the tool library` } : { name: 'known_labels', pass: true });
  // Task samples carry labels of other kinds (yes/no, none); the query filters concern ToolE queries.
  if (!user || !String(sample.category).startsWith('toole/') || sample.category.startsWith('toole/task/') || !labels.length) return checks;

  const asTools: TooleTool[] = tools.map((t) => ({
    name: t.name,
    nameForHuman: t.plugin ?? t.name,
    description: t.description,
    descriptionForModel: t.description,
    members: [t.name],
    origin: 'plugin',
    provenance: { source: 'library' },
    checks: [],
    tags: [],
  }));
  const { names } = identifyingNames(asTools);
  const query: TooleQuery = { text: user.content, tool: labels[0], ...(labels.length > 1 && { tools: labels }), method: 'direct', generatedFor: labels[0], checks: [], tags: [], lineage: [] };
  const outcome = filterQuery(query, { options, names, calculation: calculationTools(asTools, options) });
  if ('reject' in outcome) checks.push({ name: outcome.reject.reason, pass: false, reason: outcome.reject.detail });
  else {
    checks.push({ name: 'query_filters', pass: true });
    checks.push(...outcome.query.checks);
  }
  return checks;
}
