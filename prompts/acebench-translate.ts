import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';

/**
 * ACEBench is bilingual: a record generated in one language is translated into the other. Only the
 * natural-language text changes (the dialogue, the profile, descriptions); function names,
 * parameter names and every argument value stay exactly as they are, which the stage checks.
 */
export interface TranslateVars extends Record<string, unknown> {
  from: 'en' | 'zh';
  to: 'en' | 'zh';
  /** The texts to translate, numbered; the answer keeps the numbering. */
  texts: string[];
  /** Strings that must appear unchanged wherever they occur (names, values). */
  keep: string[];
}

export const TranslateAnswer = z.object({ texts: z.array(z.string()) });
export type TranslateAnswer = z.infer<typeof TranslateAnswer>;

const LANGUAGE = { en: 'English', zh: 'Simplified Chinese' } as const;

export default definePrompt<TranslateVars, TranslateAnswer>({
  id: 'acebench/translate',
  system: 'You translate tool-use benchmark data. You answer with JSON only.',
  template: `Translate each text below from {{from}} into {{to}} ("en" is English, "zh" is Simplified Chinese). Keep the line prefixes "user: " and "system: " and the line breaks as they are. Copy every one of these strings unchanged wherever it occurs (they are function names, parameter names and argument values): {{keep}}. Text inside a call written as "[Name(arg=value)]" is copied unchanged.

Texts (a JSON list):
{{texts}}

Reply as JSON: {"texts": [the translations, in the same order, as many as given]}.`,
  schema: TranslateAnswer,
  temperature: 0,
  // Offline: a phrase-by-phrase gloss from a fixed table, leaving kept strings and calls alone.
  // It exercises the stage and its checks; real translation needs an endpoint.
  offline: (vars) => ({ texts: vars.texts.map((text) => glossText(text, vars.from, vars.to, vars.keep)) }),
});

/** [English, Chinese] phrase pairs, longest first when applied. */
const GLOSSARY: [string, string][] = [
  ['Can you help me', '你能帮我'],
  ['Could you please', '请你'],
  ['I would like to', '我想'],
  ['I want to', '我想'],
  ['I need to', '我需要'],
  ['Please provide', '请提供'],
  ['Please', '请'],
  ['the following', '以下'],
  ['Retrieves', '获取'],
  ['Retrieve', '获取'],
  ['Returns', '返回'],
  ['Creates', '创建'],
  ['Create', '创建'],
  ['Updates', '更新'],
  ['Update', '更新'],
  ['Analyzes', '分析'],
  ['Analyze', '分析'],
  ['Schedules', '安排'],
  ['Schedule', '安排'],
  ['Checks', '检查'],
  ['Check', '检查'],
  ['Books', '预订'],
  ['Book', '预订'],
  ['Sends', '发送'],
  ['Send', '发送'],
  ['Finds', '查找'],
  ['Find', '查找'],
  ['Calculates', '计算'],
  ['Calculate', '计算'],
  ['The name of', '名称：'],
  ['The date of', '日期：'],
  ['The type of', '类型：'],
  ['The number of', '数量：'],
  ['List of', '列表：'],
  ['Details of', '详情：'],
  ['The', ''],
  ['the', ''],
  ['a ', ''],
  ['an ', ''],
  ['for', '用于'],
  ['with', '带有'],
  ['and', '和'],
  ['or', '或'],
  ['of', '的'],
  ['in', '在'],
  ['on', '在'],
  ['to', '到'],
  ['from', '从'],
  ['my', '我的'],
  ['me', '我'],
  ['I', '我'],
  ['you', '你'],
  ['is', '是'],
  ['date', '日期'],
  ['time', '时间'],
  ['name', '名称'],
  ['user', '用户'],
  ['number', '数字'],
  ['list', '列表'],
  ['type', '类型'],
  ['value', '值'],
  ['options', '选项'],
  ['settings', '设置'],
  ['details', '详情'],
  ['information', '信息'],
  ['report', '报告'],
  ['schedule', '日程'],
  ['location', '位置'],
  ['city', '城市'],
  ['price', '价格'],
  ['order', '订单'],
  ['message', '消息'],
  ['account', '账户'],
  ['identifier', '标识符'],
  ['Unique', '唯一'],
  ['unique', '唯一'],
  ['please', '请'],
  ['thanks', '谢谢'],
  ['Thanks', '谢谢'],
  ['.', '。'],
  [',', '，'],
  ['?', '？'],
];

const PROTECTED = /\[[^\]\n]*\]|^(user|system): /gm;

/** The offline gloss of one text: table phrases replaced outside kept strings and calls. */
export function glossText(text: string, from: 'en' | 'zh', to: 'en' | 'zh', keep: readonly string[]): string {
  if (from === to) return text;
  const pairs = GLOSSARY.map(([en, zh]) => (from === 'en' ? [en, zh] : [zh, en]) as [string, string])
    .filter(([source]) => source.trim() !== '')
    .sort((a, b) => b[0].length - a[0].length);
  // Cut the text into pieces that must stay (calls, prefixes, kept strings) and pieces to gloss.
  const spans: [number, number][] = [];
  for (const match of text.matchAll(PROTECTED)) spans.push([match.index!, match.index! + match[0].length]);
  for (const kept of keep) {
    if (!kept) continue;
    for (let at = text.indexOf(kept); at >= 0; at = text.indexOf(kept, at + kept.length)) spans.push([at, at + kept.length]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  let out = '';
  let cursor = 0;
  for (const [start, end] of spans) {
    if (end <= cursor) continue;
    if (start > cursor) out += gloss(text.slice(cursor, start), pairs, from);
    out += text.slice(Math.max(start, cursor), end);
    cursor = end;
  }
  return out + gloss(text.slice(cursor), pairs, from);
}

function gloss(piece: string, pairs: [string, string][], from: 'en' | 'zh'): string {
  let out = piece;
  for (const [source, target] of pairs) {
    // English words match whole; Chinese has no spaces to match against.
    const pattern = from === 'en' && /^\w/.test(source) ? new RegExp(`\\b${escape(source.trim())}\\b${source.endsWith(' ') ? '\\s*' : ''}`, 'g') : new RegExp(escape(source), 'g');
    out = out.replace(pattern, target);
  }
  return from === 'en' ? out.replace(/ +(?=[\u4e00-\u9fff。，？])|(?<=[\u4e00-\u9fff。，？]) +/g, '') : out;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
