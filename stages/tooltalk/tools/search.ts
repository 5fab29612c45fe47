import { PyException, pyTruthy, requireString, strptime } from '../python.ts';
import { copyJson, type Args, type JsonObject, type ToolContext } from '../tool.ts';

const DATETIME = '%Y-%m-%d %H:%M:%S';

/** Where a searchable record keeps its date and its text. */
export interface SearchFields {
  date: string;
  text: readonly string[];
}

/** The five search parameters SearchInbox and SearchMessages share, documented alike. */
export function searchParameters(senderDescription: string) {
  return {
    query: { type: 'string', description: 'Query containing keywords to search for.', required: false },
    match_type: { type: 'string', enum: ['any', 'all'], description: 'Whether to match any or all keywords. Defaults to any.', required: false },
    sender: { type: 'string', description: senderDescription, required: false },
    start_date: { type: 'string', description: 'Starting time to search for, in the pattern of %Y-%m-%d %H:%M:%S.', required: false },
    end_date: { type: 'string', description: 'End time to search for, in the pattern of %Y-%m-%d %H:%M:%S.', required: false },
  };
}

/**
 * SearchInbox's and SearchMessages' filter: records dated no later than now, from `sender`, within
 * [start_date, end_date], holding any / all of the query's words (lower-cased substrings), newest
 * first (stable for equal dates), at most five, copied.
 */
export function searchRecords(ctx: ToolContext, records: Iterable<JsonObject>, args: Args, fields: SearchFields): JsonObject[] {
  const { query, match_type, sender, start_date, end_date } = args;
  if (query === null && sender === null && start_date === null && end_date === null) {
    throw new PyException('At least one of query, sender, start_date, end_date must be provided.');
  }
  if (match_type !== 'any' && match_type !== 'all') throw new PyException('match_type must be either "any" or "all".');
  const start = start_date === null ? null : strptime(start_date, DATETIME).ms;
  const end = end_date === null ? null : strptime(end_date, DATETIME).ms;
  if (start !== null && end !== null && start > end) throw new PyException('Start date must be earlier than end date.');
  const keywords = pyTruthy(query) ? splitWords(requireString(query, 'lower').toLowerCase()) : null;

  const found: { record: JsonObject; ms: number }[] = [];
  for (const record of records) {
    const ms = strptime(record[fields.date], DATETIME).ms;
    if (ctx.now.ms < ms) continue; // a "future" record
    if (sender !== null && sender !== record.sender) continue;
    if (start !== null && start > ms) continue;
    if (end !== null && end < ms) continue;
    if (keywords) {
      const texts = fields.text.map((field) => requireString(record[field], 'lower').toLowerCase());
      const hits = keywords.map((keyword) => texts.some((text) => text.includes(keyword)));
      if (!(match_type === 'any' ? hits.some(Boolean) : hits.every(Boolean))) continue;
    }
    found.push({ record, ms });
  }
  found.sort((a, b) => b.ms - a.ms);
  return found.slice(0, 5).map(({ record }) => copyJson(record));
}

/** `str.split()`: runs of whitespace, no empty words. */
function splitWords(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== '');
}
