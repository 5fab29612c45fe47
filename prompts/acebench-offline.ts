import type { Json } from '../core/records.ts';
import type { Rng } from '../core/rng.ts';

/**
 * Template text for the offline backend of the ACEBench dialogue prompts, in English and Chinese:
 * a request that states a call's values, a question for missing values, an answer giving them, a
 * change of one value, a tool result. Plainly template text, so a run without a model still yields
 * records of every category in the released shapes.
 */

export type OfflineLanguage = 'en' | 'zh';

/** A call the offline dialogue is built around, with its function's description. */
export interface OfflineCall {
  name: string;
  description: string;
  arguments: Record<string, Json>;
}

/** `dateRange` / `date_range` → "date range". */
export function parameterWords(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_.-]+/g, ' ')
    .trim()
    .toLowerCase();
}

/** A value as words: lists joined, objects as "key value" pairs, booleans as yes / no. */
export function valueWords(value: Json, language: OfflineLanguage): string {
  const zh = language === 'zh';
  if (value === null) return zh ? '无' : 'none';
  if (typeof value === 'boolean') return zh ? (value ? '是' : '否') : value ? 'yes' : 'no';
  if (typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return value.map((item) => valueWords(item, language)).join(zh ? '、' : ', ');
  const pairs = Object.entries(value).map(([key, item]) => (zh ? `${key}为${valueWords(item, language)}` : `${parameterWords(key)} ${valueWords(item, language)}`));
  return zh ? `（${pairs.join('，')}）` : `(${pairs.join(', ')})`;
}

/** "date range (start date 2023-01-01, …) and location …" or "date_range为…，location为…". */
export function argumentWords(args: Record<string, Json>, language: OfflineLanguage): string {
  const entries = Object.entries(args);
  if (language === 'zh') return entries.map(([key, value]) => `${key}为${valueWords(value, language)}`).join('，');
  const parts = entries.map(([key, value]) => `${parameterWords(key)} ${valueWords(value, language)}`);
  return parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}` : (parts[0] ?? '');
}

function clause(description: string): string {
  const text = description.trim().replace(/[.。\s]+$/, '');
  return text.charAt(0).toLowerCase() + text.slice(1);
}

const OPENERS_EN = ['Could you help me', 'I need to', 'Please help me', 'I would like to'];
const OPENERS_ZH = ['请帮我', '我想', '麻烦你帮我', '我需要'];

/** One request sentence for a call: what its function does and the values given (`omit` left out). */
export function requestSentence(call: OfflineCall, language: OfflineLanguage, rng: Rng, omit: readonly string[] = [], lead = ''): string {
  const given = Object.fromEntries(Object.entries(call.arguments).filter(([key]) => !omit.includes(key)));
  const words = argumentWords(given, language);
  if (language === 'zh') {
    const what = `${rng.pick(OPENERS_ZH)}调用${call.name}：${clause(call.description)}`;
    return `${lead}${what}${words ? `，${words}` : ''}。`;
  }
  const what = `${rng.pick(OPENERS_EN)} ${clause(call.description)} (${call.name})`;
  const sentence = `${what}${words ? ` with ${words}` : ''}.`;
  return lead && !sentence.startsWith('I ') ? `${lead}${sentence.charAt(0).toLowerCase()}${sentence.slice(1)}` : `${lead}${sentence}`;
}

/** The lead of a request after the first: "Also, " / "另外，". */
export function alsoLead(language: OfflineLanguage): string {
  return language === 'zh' ? '另外，' : 'Also, ';
}

/** A request for something no offered function does (the API named by `topic`). */
export function unservedRequest(topic: string, language: OfflineLanguage, rng: Rng): string {
  const words = parameterWords(topic);
  return language === 'zh' ? `${rng.pick(OPENERS_ZH)}完成这项任务：${words}，可以吗？` : `${rng.pick(OPENERS_EN)} with this task: ${words}?`;
}

/** The assistant asking for values the user has not given. */
export function askForValues(names: readonly string[], language: OfflineLanguage): string {
  return language === 'zh' ? `请提供以下信息：${names.join('、')}。` : `Could you please provide the ${names.map(parameterWords).join(', ')}?`;
}

/** The user giving the values asked for. */
export function giveValues(args: Record<string, Json>, language: OfflineLanguage): string {
  return language === 'zh' ? `好的，${argumentWords(args, language)}。` : `Sure, ${argumentWords(args, language)}.`;
}

/** The user changing values of the call just made. */
export function changeValues(args: Record<string, Json>, language: OfflineLanguage): string {
  return language === 'zh' ? `我想修改一下：把${argumentWords(args, language)}，其他不变。` : `Actually, please change it: ${argumentWords(args, language)}; keep the rest as before.`;
}

/** A tool's result for a call, as the next `system:` line. */
export function toolResult(call: OfflineCall, language: OfflineLanguage, rng: Rng): string {
  const reference = `R${rng.int(10000, 99999)}`;
  return language === 'zh' ? `${call.name}已执行成功，结果编号为${reference}。` : `${call.name} completed successfully; the result reference is ${reference}.`;
}

/** The preference sentence: the request leaves the profile's values to the assistant. */
export function profileLead(language: OfflineLanguage): string {
  return language === 'zh' ? '请根据我的个人资料和习惯填写其余信息。' : 'Please use my profile and history for the other details.';
}
