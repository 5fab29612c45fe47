import { isJsonObject } from '../../core/records.ts';
import { stableStringify } from '../../core/hash.ts';
import type { Json } from '../../core/records.ts';
import { type AceLanguage, type AceRecord } from './record.ts';

/**
 * What a translation may change in a record and what it must keep. The natural-language text is the
 * dialogue (`question`), the `profile`, the `time` line and every `description` in the functions;
 * names, parameter names, types, enums, defaults, the gold answer and every argument value stay.
 */


/** Every `description` string in the functions, depth first, in key order. */
function descriptionsOf(value: Json, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((item) => descriptionsOf(item, out));
  else if (isJsonObject(value)) for (const [key, inner] of Object.entries(value)) key === 'description' && typeof inner === 'string' ? out.push(inner) : descriptionsOf(inner, out);
  return out;
}

/** The same value with its `description` strings replaced, in the order `descriptionsOf` lists them. */
function withDescriptions(value: Json, texts: string[], cursor = { at: 0 }): Json {
  if (Array.isArray(value)) return value.map((item) => withDescriptions(item, texts, cursor));
  if (!isJsonObject(value)) return value;
  const out: Record<string, Json> = {};
  for (const [key, inner] of Object.entries(value)) out[key] = key === 'description' && typeof inner === 'string' ? texts[cursor.at++]! : withDescriptions(inner, texts, cursor);
  return out;
}

const TEXT_FIELDS = ['question', 'profile', 'time'] as const;

/** The texts of a record to translate, in a fixed order: question, profile, time (when non-empty), then the descriptions. */
export function translatableTexts(record: AceRecord): string[] {
  const fields = TEXT_FIELDS.flatMap((field) => (typeof record.data[field] === 'string' && record.data[field] ? [record.data[field] as string] : []));
  return [...fields, ...descriptionsOf(record.data.function as unknown as Json)];
}

/** The record in `language` with its texts replaced by `texts` (as `translatableTexts` ordered them). */
export function withTranslatedTexts(record: AceRecord, language: AceLanguage, texts: readonly string[]): AceRecord {
  const expected = translatableTexts(record).length;
  if (texts.length !== expected) throw new Error(`a translation of record ${record.data.id} gave ${texts.length} texts for ${expected}`);
  const rest = [...texts];
  const data: AceRecord['data'] = { ...record.data };
  for (const field of TEXT_FIELDS) if (typeof data[field] === 'string' && data[field]) data[field] = rest.shift()!;
  data.function = withDescriptions(record.data.function as unknown as Json, rest) as unknown as AceRecord['data']['function'];
  return { ...record, language, data, answer: record.answer && { ...record.answer } };
}

/** Leaf values of a JSON value (strings and numbers, as text). */
function leaves(value: Json | undefined, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((item) => leaves(item, out));
  else if (isJsonObject(value)) Object.values(value).forEach((item) => leaves(item, out));
  else if (typeof value === 'string' || typeof value === 'number') out.push(String(value));
  return out;
}

/** Names and values a translation must leave as they are: function and parameter names, and the answer's values the dialogue states. */
export function keptStrings(record: AceRecord): string[] {
  const names = new Set<string>();
  const collectNames = (value: Json) => {
    if (Array.isArray(value)) value.forEach(collectNames);
    else if (isJsonObject(value)) {
      if (typeof value.name === 'string') names.add(value.name);
      if (isJsonObject(value.properties)) Object.keys(value.properties).forEach((name) => names.add(name));
      Object.values(value).forEach(collectNames);
    }
  };
  collectNames(record.data.function as unknown as Json);
  const question = record.data.question;
  const values = leaves(record.answer?.ground_truth).filter((value) => value.length > 0 && question.includes(value));
  return [...new Set([...names, ...values])].sort((a, b) => b.length - a.length);
}

const CJK = /[\u3400-\u9fff]/;

/**
 * Why `target` is not a faithful translation of `source`: anything but text changed (ids, names,
 * parameters, types, enums, the answer, the agent fields), a stated value of the answer no longer
 * in the dialogue, or the dialogue not in the target language. Empty when it is faithful.
 */
export function translationProblems(source: AceRecord, target: AceRecord): string[] {
  const problems: string[] = [];
  const withoutText = (record: AceRecord) => {
    const data = { ...record.data } as Record<string, Json>;
    for (const field of TEXT_FIELDS) if (typeof data[field] === 'string') data[field] = '';
    data.function = withDescriptions(record.data.function as unknown as Json, descriptionsOf(record.data.function as unknown as Json).map(() => ''));
    return data;
  };
  const before = withoutText(source);
  const after = withoutText(target);
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (stableStringify(before[key]) !== stableStringify(after[key])) problems.push(key === 'function' ? describeFunctionChange(before.function, after.function) : `field "${key}" changed`);
  }
  if (stableStringify(source.answer) !== stableStringify(target.answer)) problems.push('the answer changed');
  for (const kept of keptStrings(source)) {
    if (source.data.question.includes(kept) && !target.data.question.includes(kept)) problems.push(`"${kept}" is no longer in the dialogue`);
  }
  // The language is judged on the text around the kept names and values and the calls.
  let prose = target.data.question.replace(/\[[^\]]*\]/g, '');
  for (const kept of keptStrings(source)) prose = prose.split(kept).join(' ');
  const hasChinese = CJK.test(prose);
  if (target.language === 'zh' && !hasChinese) problems.push('the dialogue is not in Chinese');
  if (target.language === 'en' && hasChinese) problems.push(`the dialogue still holds Chinese text ("${prose.match(/[\u3400-\u9fff]+/)![0]}")`);
  return problems;
}

function describeFunctionChange(before: Json | undefined, after: Json | undefined): string {
  const a = Array.isArray(before) ? before : [];
  const b = Array.isArray(after) ? after : [];
  if (a.length !== b.length) return `the record offers ${b.length} functions instead of ${a.length}`;
  for (let i = 0; i < a.length; i++) {
    if (stableStringify(a[i]) === stableStringify(b[i])) continue;
    const name = isJsonObject(a[i]) ? (a[i] as Record<string, Json>).name : i;
    const renamed = isJsonObject(b[i]) && (b[i] as Record<string, Json>).name !== name ? ` (now "${String((b[i] as Record<string, Json>).name)}")` : '';
    return `function "${String(name)}" changed beyond its descriptions${renamed}`;
  }
  return 'the functions changed';
}
