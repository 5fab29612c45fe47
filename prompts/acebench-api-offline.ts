import type { Json } from '../core/records.ts';
import type { Rng } from '../core/rng.ts';

/**
 * The offline composer of ACEBench APIs: functions in the released JSON-Schema shape built from
 * templates over a context-tree path. Plainly template text, but with the parameter kinds the
 * released functions use — nested objects, lists of objects, enums, bounded numbers, booleans,
 * dates, times and ids with formats and patterns, defaults — so that every atom category finds
 * targets. An API of a functionality takes the id its sibling that creates or finds things returns
 * (`session_id`), which links them for multi-call instances.
 */

export interface ComposeRequest {
  domain: string;
  subdomain: string;
  functionality: string;
  language: 'en' | 'zh';
  count: number;
  /** Names already used in the subdomain: a composed name never repeats one. */
  taken: readonly string[];
}

export interface ComposedApi {
  name: string;
  description: string;
  parameters: { type: 'object'; properties: Record<string, Json>; required: string[] };
  returns: { type: 'object'; properties: Record<string, Json> };
}

type Kind = 'create' | 'read' | 'update' | 'analyze' | 'track' | 'report' | 'recommend';
type Style = 'snake' | 'camel';
type Lang = 'en' | 'zh';

const VERBS: Record<string, Kind> = {
  create: 'create', register: 'create', book: 'create', schedule: 'create', submit: 'create', add: 'create', plan: 'create', manage: 'update',
  search: 'read', get: 'read', list: 'read', find: 'read', retrieve: 'read', fetch: 'read', query: 'read', compare: 'analyze',
  update: 'update', adjust: 'update', configure: 'update', modify: 'update', optimize: 'update',
  analyze: 'analyze', evaluate: 'analyze', assess: 'analyze', estimate: 'analyze', calculate: 'analyze', forecast: 'analyze', predict: 'analyze',
  track: 'track', monitor: 'track', check: 'track',
  generate: 'report', export: 'report', summarize: 'report',
  recommend: 'recommend', suggest: 'recommend', match: 'recommend',
};
const VERBS_OF_KIND: Record<Kind, string[]> = { create: [], read: [], update: [], analyze: [], track: [], report: [], recommend: [] };
for (const [verb, kind] of Object.entries(VERBS)) VERBS_OF_KIND[kind].push(verb);
const KINDS = Object.keys(VERBS_OF_KIND) as Kind[];

const ZH_VERB: Record<Kind, string> = { create: '创建', read: '查询', update: '更新', analyze: '分析', track: '跟踪', report: '生成', recommend: '推荐' };

const SUFFIXES = ['Manager', 'Service', 'Tool', 'Assistant', 'Planner', 'Tracker', 'Hub', 'API', ''];

// ------------------------------------------------------------------ words

function asciiWords(text: string): string[] {
  return (text.normalize('NFKD').replace(/[^\x00-\x7f]/g, ' ').match(/[A-Za-z][A-Za-z0-9]*/g) ?? []).map((w) => w.toLowerCase());
}

const STOP = new Set(['a', 'an', 'the', 'of', 'for', 'and', 'to', 'in', 'on', 'with', 'by', 'or', 'at', 'from', 'its', 'their']);

function singular(word: string): string {
  if (/ies$/.test(word) && word.length > 4) return word.slice(0, -3) + 'y';
  if (/(ss|us|is)$/.test(word)) return word;
  if (/(xes|ches|shes|sses)$/.test(word)) return word.slice(0, -2);
  if (/s$/.test(word) && word.length > 3) return word.slice(0, -1);
  return word;
}

const pascal = (words: string[]) => words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
const camel = (words: string[]) => (words.length ? words[0] + pascal(words.slice(1)) : '');
const snake = (words: string[]) => words.join('_');
const key = (style: Style, words: string[]) => (style === 'snake' ? snake(words) : camel(words));

// ------------------------------------------------------------------ schema pieces

interface Ctx {
  style: Style;
  lang: Lang;
  /** The thing the functionality is about, singular (`session`), in words. */
  entity: string[];
  /** English text of the entity for descriptions. */
  entityText: string;
  subdomain: string;
  rng: Rng;
}

/** A property schema with its keys in one of the two orders the released files use. */
function prop(c: Ctx, type: string, description: string, extra: Record<string, Json> = {}): Json {
  return c.style === 'snake' ? { type, description, ...extra } : { description, type, ...extra };
}

/** Plain nested schema (below the top level the released files often leave descriptions out). */
function inner(type: string, description: string, extra: Record<string, Json> = {}): Json {
  return { type, description, ...extra };
}

const t = (c: Ctx, en: string, zh: string) => (c.lang === 'en' ? en : zh);

interface Param {
  words: string[];
  schema: Json;
  required: boolean;
}

type Archetype = (c: Ctx) => Param;

const idPattern = (c: Ctx) => `^${(c.entity[0] ?? 'id').slice(0, 3).toUpperCase().padEnd(3, 'X')}-[0-9]{4,8}$`;

function idParam(c: Ctx): Param {
  return {
    words: [...c.entity, 'id'],
    schema: prop(c, 'string', t(c, `Unique identifier of the ${c.entityText}, e.g. '${idExample(c)}'.`, `「${c.entityText}」的唯一标识，例如'${idExample(c)}'。`), { pattern: idPattern(c) }),
    required: true,
  };
}

function idExample(c: Ctx): string {
  return `${(c.entity[0] ?? 'id').slice(0, 3).toUpperCase().padEnd(3, 'X')}-${1000 + ((c.entity.join('').length * 7919) % 9000)}`;
}

function nameParam(c: Ctx): Param {
  return { words: [...c.entity, 'name'], schema: prop(c, 'string', t(c, `Name of the ${c.entityText}.`, `「${c.entityText}」的名称。`), { minLength: 1, maxLength: 100 }), required: true };
}

const ENUMS: { words: string[]; en: string; zh: string; values: { en: string[]; zh: string[] }; fallback: number }[] = [
  { words: ['priority'], en: 'Priority level', zh: '优先级', values: { en: ['low', 'medium', 'high', 'urgent'], zh: ['低', '中', '高', '紧急'] }, fallback: 1 },
  { words: ['frequency'], en: 'How often it recurs', zh: '重复频率', values: { en: ['daily', 'weekly', 'monthly', 'quarterly'], zh: ['每天', '每周', '每月', '每季度'] }, fallback: 1 },
  { words: ['output', 'format'], en: 'Format of the result', zh: '结果格式', values: { en: ['json', 'csv', 'pdf'], zh: ['json', 'csv', 'pdf'] }, fallback: 0 },
  { words: ['sort', 'order'], en: 'Order of the results', zh: '结果排序方式', values: { en: ['ascending', 'descending'], zh: ['升序', '降序'] }, fallback: 1 },
  { words: ['level'], en: 'Experience level', zh: '经验水平', values: { en: ['beginner', 'intermediate', 'advanced'], zh: ['初级', '中级', '高级'] }, fallback: 0 },
  { words: ['time', 'of', 'day'], en: 'Preferred time of day', zh: '偏好的时段', values: { en: ['morning', 'afternoon', 'evening', 'night'], zh: ['上午', '下午', '晚上', '夜间'] }, fallback: 0 },
  { words: ['status'], en: 'Status to filter by', zh: '筛选的状态', values: { en: ['active', 'pending', 'completed', 'cancelled'], zh: ['进行中', '待处理', '已完成', '已取消'] }, fallback: 0 },
  { words: ['region'], en: 'Region it applies to', zh: '适用地区', values: { en: ['North America', 'Europe', 'Asia', 'Africa', 'Oceania', 'South America'], zh: ['北美', '欧洲', '亚洲', '非洲', '大洋洲', '南美'] }, fallback: 2 },
];

const enumParam = (c: Ctx): Param => {
  const e = c.rng.pick(ENUMS);
  const values = e.values[c.lang];
  const withDefault = c.rng.chance(0.4);
  return {
    words: e.words,
    schema: prop(c, 'string', t(c, `${e.en} of the ${c.entityText}.`, `「${c.entityText}」的${e.zh}。`), { enum: values, ...(withDefault ? { default: values[e.fallback] } : {}) }),
    required: !withDefault,
  };
};

const NUMBERS: { words: string[]; type: 'integer' | 'number'; en: string; zh: string; min: number; max: number; fallback?: number }[] = [
  { words: ['max', 'results'], type: 'integer', en: 'Maximum number of results to return', zh: '返回结果的最大数量', min: 1, max: 100, fallback: 10 },
  { words: ['budget'], type: 'number', en: 'Budget in US dollars', zh: '预算（美元）', min: 0, max: 1000000 },
  { words: ['rating'], type: 'integer', en: 'Minimum rating, from 1 to 5', zh: '最低评分，1 到 5', min: 1, max: 5, fallback: 3 },
  { words: ['duration', 'minutes'], type: 'integer', en: 'Duration in minutes', zh: '时长（分钟）', min: 15, max: 480, fallback: 60 },
  { words: ['threshold'], type: 'number', en: 'Alert threshold as a percentage', zh: '提醒阈值（百分比）', min: 0, max: 100, fallback: 80 },
  { words: ['participants'], type: 'integer', en: 'Number of participants', zh: '参与人数', min: 1, max: 500 },
  { words: ['radius', 'km'], type: 'number', en: 'Search radius in kilometres', zh: '搜索半径（公里）', min: 0.5, max: 200, fallback: 10 },
];

const numberParam = (c: Ctx): Param => {
  const n = c.rng.pick(NUMBERS);
  const withDefault = n.fallback !== undefined && c.rng.chance(0.6);
  return {
    words: n.words,
    schema: prop(c, n.type, t(c, `${n.en}.`, `${n.zh}。`), { minimum: n.min, maximum: n.max, ...(withDefault ? { default: n.fallback! } : {}) }),
    required: !withDefault,
  };
};

const BOOLS: { words: string[]; en: string; zh: string }[] = [
  { words: ['include', 'history'], en: 'Whether to include past records', zh: '是否包含历史记录' },
  { words: ['notify'], en: 'Whether to send a notification when done', zh: '完成后是否发送通知' },
  { words: ['include', 'details'], en: 'Whether to return full details', zh: '是否返回完整详情' },
  { words: ['is', 'urgent'], en: 'Whether the request is urgent', zh: '是否为紧急请求' },
  { words: ['auto', 'renew'], en: 'Whether to renew automatically', zh: '是否自动续期' },
  { words: ['dry', 'run'], en: 'Whether to only simulate the change', zh: '是否仅模拟执行' },
];

const boolParam = (c: Ctx): Param => {
  const b = c.rng.pick(BOOLS);
  const withDefault = c.rng.chance(0.5);
  return { words: b.words, schema: prop(c, 'boolean', t(c, `${b.en}.`, `${b.zh}。`), withDefault ? { default: false } : {}), required: !withDefault };
};

const listParam = (c: Ctx): Param => {
  switch (c.rng.int(0, 2)) {
    case 0:
      return { words: ['tags'], schema: prop(c, 'array', t(c, `Keywords describing the ${c.entityText}.`, `描述「${c.entityText}」的关键词列表。`), { items: { type: 'string' } }), required: c.rng.chance(0.5) };
    case 1:
      return {
        words: [...c.entity, 'ids'],
        schema: prop(c, 'array', t(c, `Identifiers of the ${c.entityText} records.`, `「${c.entityText}」记录的标识列表。`), { items: { type: 'string', pattern: idPattern(c) }, minItems: 1 }),
        required: true,
      };
    default: {
      const days = c.lang === 'en' ? ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] : ['星期一', '星期二', '星期三', '星期四', '星期五', '星期六', '星期日'];
      return { words: ['days'], schema: prop(c, 'array', t(c, 'Days of the week it applies to.', '适用的星期。'), { items: { type: 'string', enum: days } }), required: c.rng.chance(0.5) };
    }
  }
};

const dateRange = (c: Ctx, format: 'date' | 'date-time'): Json => ({
  type: 'object',
  properties: {
    [key(c.style, ['start'])]: inner('string', t(c, 'Start, e.g. 2024-05-01.', '开始时间，例如 2024-05-01。'), { format }),
    [key(c.style, ['end'])]: inner('string', t(c, 'End, e.g. 2024-05-31.', '结束时间，例如 2024-05-31。'), { format }),
  },
  required: [key(c.style, ['start']), key(c.style, ['end'])],
});

const objectShortParam = (c: Ctx): Param => {
  switch (c.rng.int(0, 2)) {
    case 0:
      return { words: ['date', 'range'], schema: { ...(prop(c, 'object', t(c, 'Period covered.', '涵盖的时间范围。')) as object), ...(dateRange(c, 'date') as object) }, required: true };
    case 1:
      return {
        words: ['contact'],
        schema: prop(c, 'object', t(c, 'Who to contact about it.', '联系人信息。'), {
          properties: {
            name: inner('string', t(c, 'Full name.', '姓名。')),
            email: inner('string', t(c, 'Email address.', '电子邮箱。'), { format: 'email' }),
            phone: inner('string', t(c, 'Phone number in international form.', '国际格式的电话号码。'), { pattern: '^\\+[0-9]{7,15}$' }),
          },
          required: ['name', 'email'],
        }),
        required: c.rng.chance(0.6),
      };
    default:
      return {
        words: ['time', 'window'],
        schema: prop(c, 'object', t(c, 'Time of day it may happen in.', '可进行的时间段。'), {
          properties: {
            [key(c.style, ['start', 'time'])]: inner('string', t(c, 'Start time, HH:MM.', '开始时间，HH:MM。'), { format: 'time', pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$' }),
            [key(c.style, ['end', 'time'])]: inner('string', t(c, 'End time, HH:MM.', '结束时间，HH:MM。'), { format: 'time', pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$' }),
            [key(c.style, ['flexible'])]: inner('boolean', t(c, 'Whether the window may shift.', '时间段是否可调整。')),
          },
          required: [key(c.style, ['start', 'time']), key(c.style, ['end', 'time'])],
        }),
        required: true,
      };
  }
};

const objectDeepParam = (c: Ctx): Param => {
  switch (c.rng.int(0, 2)) {
    case 0:
      return {
        words: ['items'],
        schema: prop(c, 'array', t(c, `Entries of the ${c.entityText}.`, `「${c.entityText}」的条目列表。`), {
          items: {
            type: 'object',
            properties: {
              name: inner('string', t(c, 'Entry name.', '条目名称。')),
              quantity: inner('integer', t(c, 'How many.', '数量。'), { minimum: 1, maximum: 1000 }),
              unit: inner('string', t(c, 'Unit of the quantity.', '数量单位。'), { enum: c.lang === 'en' ? ['piece', 'kg', 'hour', 'set'] : ['件', '千克', '小时', '套'] }),
            },
            required: ['name', 'quantity'],
          },
          minItems: 1,
        }),
        required: true,
      };
    case 1:
      return {
        words: ['filters'],
        schema: prop(c, 'object', t(c, 'Conditions the results must meet.', '结果需要满足的筛选条件。'), {
          properties: {
            [key(c.style, ['period'])]: { ...(inner('object', t(c, 'Period of interest.', '关注的时间段。')) as object), ...(dateRange(c, 'date-time') as object) },
            [key(c.style, ['categories'])]: inner('array', t(c, 'Categories to include.', '包含的类别。'), { items: { type: 'string' } }),
            [key(c.style, ['location'])]: inner('object', t(c, 'Where.', '地点。'), {
              properties: { city: inner('string', t(c, 'City.', '城市。')), country: inner('string', t(c, 'Country code, ISO 3166-1 alpha-2.', '国家代码（ISO 3166-1 二位字母）。'), { pattern: '^[A-Z]{2}$' }) },
              required: ['city'],
            }),
          },
          required: [key(c.style, ['period'])],
        }),
        required: true,
      };
    default:
      return {
        words: ['schedule'],
        schema: prop(c, 'object', t(c, 'When it takes place and how it repeats.', '安排时间及重复方式。'), {
          properties: {
            [key(c.style, ['start', 'at'])]: inner('string', t(c, 'First occurrence, e.g. 2024-05-01T09:00:00.', '首次时间，例如 2024-05-01T09:00:00。'), { format: 'date-time' }),
            [key(c.style, ['recurrence'])]: inner('object', t(c, 'How it repeats.', '重复规则。'), {
              properties: {
                frequency: inner('string', t(c, 'Repeat unit.', '重复单位。'), { enum: ['daily', 'weekly', 'monthly'] }),
                interval: inner('integer', t(c, 'Units between occurrences.', '间隔的单位数。'), { minimum: 1, maximum: 12, default: 1 }),
              },
              required: ['frequency'],
            }),
          },
          required: [key(c.style, ['start', 'at'])],
        }),
        required: true,
      };
  }
};

const dateParam = (c: Ctx): Param =>
  c.rng.chance(0.5)
    ? { words: ['date'], schema: prop(c, 'string', t(c, 'Date, e.g. 2024-05-01.', '日期，例如 2024-05-01。'), { format: 'date' }), required: true }
    : { words: ['start', 'time'], schema: prop(c, 'string', t(c, 'Start time, e.g. 14:30.', '开始时间，例如 14:30。'), { format: 'time' }), required: c.rng.chance(0.5) };

const textParam = (c: Ctx): Param =>
  c.rng.chance(0.5)
    ? { words: ['location'], schema: prop(c, 'string', t(c, 'City or address, e.g. "Berlin".', '城市或地址，例如"北京"。')), required: c.rng.chance(0.5) }
    : { words: ['notes'], schema: prop(c, 'string', t(c, `Free-text notes about the ${c.entityText}.`, `关于「${c.entityText}」的备注。`), { maxLength: 500 }), required: false };

/** Archetypes by the atom kind they offer (`atomKindsOf` in stages/acebench/record.ts reads them so). */
const BY_KIND: Record<string, Archetype> = { bool: boolParam, enum: enumParam, list: listParam, number: numberParam, object_short: objectShortParam, object_deep: objectDeepParam };
const ATOM_ORDER = Object.keys(BY_KIND);
const OTHER: Archetype[] = [dateParam, textParam];

// ------------------------------------------------------------------ returns

function returnsOf(c: Ctx, kind: Kind, idWords: string[]): ComposedApi['returns'] {
  const id = { [key(c.style, idWords)]: inner('string', t(c, `Identifier of the ${c.entityText}.`, `「${c.entityText}」的标识。`)) };
  const status = { [key(c.style, ['status'])]: inner('string', t(c, 'Outcome of the call.', '调用结果。'), { enum: ['success', 'failed', 'pending'] }) };
  const props: Record<Kind, Record<string, Json>> = {
    create: { ...id, ...status, [key(c.style, ['created', 'at'])]: inner('string', t(c, 'When it was created.', '创建时间。'), { format: 'date-time' }) },
    read: {
      [key(c.style, ['results'])]: inner('array', t(c, 'Matching records.', '匹配的记录。'), { items: { type: 'object', properties: { ...id, name: inner('string', t(c, 'Name.', '名称。')) } } }),
      [key(c.style, ['total'])]: inner('integer', t(c, 'How many matched.', '匹配数量。')),
    },
    update: { ...id, ...status, [key(c.style, ['updated', 'fields'])]: inner('array', t(c, 'Fields that changed.', '已更改的字段。'), { items: { type: 'string' } }) },
    analyze: {
      ...id,
      [key(c.style, ['score'])]: inner('number', t(c, 'Score from 0 to 100.', '0 到 100 的评分。')),
      [key(c.style, ['summary'])]: inner('string', t(c, 'Findings in a few sentences.', '结论摘要。')),
    },
    track: { ...id, ...status, [key(c.style, ['last', 'updated'])]: inner('string', t(c, 'Time of the latest reading.', '最近一次更新的时间。'), { format: 'date-time' }) },
    report: { [key(c.style, ['report', 'id'])]: inner('string', t(c, 'Identifier of the report.', '报告标识。')), [key(c.style, ['download', 'url'])]: inner('string', t(c, 'Where to download it.', '下载地址。'), { format: 'uri' }) },
    recommend: {
      [key(c.style, ['recommendations'])]: inner('array', t(c, 'Suggestions, best first.', '推荐结果，按优先级排序。'), { items: { type: 'object', properties: { ...id, reason: inner('string', t(c, 'Why it is suggested.', '推荐理由。')) } } }),
    },
  };
  return { type: 'object', properties: props[kind] };
}

// ------------------------------------------------------------------ descriptions

const EN_DESCRIPTIONS: Record<Kind, string[]> = {
  create: ['Creates a new {e} for {s} and returns its identifier.', 'Registers a {e} in the {s} system with the given details.', 'Sets up a {e} for {s}, checking the details before saving.'],
  read: ['Searches {s} {e} records matching the given conditions.', 'Looks up {e} entries in {s} and lists the ones that match.', 'Retrieves {e} information for {s}, filtered as requested.'],
  update: ['Updates an existing {s} {e} with new settings.', 'Changes the details of a {e} in {s}; only the fields given are changed.', 'Adjusts a {s} {e} and reports which fields changed.'],
  analyze: ['Analyzes a {s} {e} and returns a score with a short summary.', 'Evaluates the {e} in {s} against the given criteria.', 'Assesses {s} {e} data and summarises what it shows.'],
  track: ['Tracks the current status of a {s} {e}.', 'Monitors a {e} in {s} and reports its latest state.', 'Checks on a {s} {e} and returns when it last changed.'],
  report: ['Generates a report on {s} {e} activity for download.', 'Produces a downloadable summary of {e} records in {s}.', 'Compiles {s} {e} figures into a report.'],
  recommend: ['Recommends {e} options in {s} that fit the given preferences.', 'Suggests suitable {s} {e} choices, best first.', 'Matches the request to {e} options in {s} and explains each suggestion.'],
};
const ZH_DESCRIPTIONS: Record<Kind, string[]> = {
  create: ['在「{s}」中创建新的「{e}」并返回其标识。', '按给定信息登记「{s}」的「{e}」。', '为「{s}」设置「{e}」，保存前检查信息。'],
  read: ['按条件查询「{s}」的「{e}」记录。', '查找「{s}」中符合条件的「{e}」条目。', '获取「{s}」的「{e}」信息，并按要求筛选。'],
  update: ['更新「{s}」中已有的「{e}」设置。', '修改「{s}」中「{e}」的信息，只更改给出的字段。', '调整「{s}」的「{e}」并返回更改的字段。'],
  analyze: ['分析「{s}」的「{e}」，返回评分和简要结论。', '按给定标准评估「{s}」中的「{e}」。', '评估「{s}」的「{e}」数据并总结结果。'],
  track: ['跟踪「{s}」中「{e}」的当前状态。', '监控「{s}」的「{e}」并报告最新状态。', '检查「{s}」的「{e}」并返回最近的变化时间。'],
  report: ['生成「{s}」中「{e}」活动的报告以供下载。', '汇总「{s}」的「{e}」记录，生成可下载的报告。', '将「{s}」的「{e}」数据整理成报告。'],
  recommend: ['根据偏好推荐「{s}」中合适的「{e}」。', '推荐「{s}」的「{e}」选项，按优先级排序。', '为请求匹配「{s}」的「{e}」选项并说明理由。'],
};

// ------------------------------------------------------------------ composing

/** `count` APIs for one functionality, each with a different action. */
export function composeApis(request: ComposeRequest, rng: Rng): ComposedApi[] {
  const words = asciiWords(request.functionality).filter((w) => !STOP.has(w));
  const lead = words[0] && VERBS[words[0]] ? words[0] : undefined;
  // The object of the action, without the subdomain's own words when something else is left.
  const subdomainWords = new Set(asciiWords(request.subdomain));
  const rest = lead ? words.slice(1) : words;
  let object = (rest.some((w) => !subdomainWords.has(w)) ? rest.filter((w) => !subdomainWords.has(w)) : rest).slice(-3);
  if (!object.length) object = asciiWords(request.subdomain).slice(-2);
  if (!object.length) object = asciiWords(request.domain).slice(-2);
  if (!object.length) object = ['item'];
  const entity = [...object.slice(0, -1), singular(object.at(-1)!)];
  const subject = asciiWords(request.subdomain).filter((w) => !STOP.has(w)).slice(0, 2);
  const taken = new Set(request.taken.map((n) => n.toLowerCase()));
  const kinds = [lead ? VERBS[lead] : rng.pick(KINDS), ...rng.shuffle(KINDS)].filter((k, i, all) => all.indexOf(k) === i);
  const out: ComposedApi[] = [];
  for (const kind of kinds) {
    if (out.length >= request.count) break;
    const verb = kind === kinds[0] && lead ? lead : rng.pick(VERBS_OF_KIND[kind]);
    const style: Style = rng.chance(0.5) ? 'snake' : 'camel';
    const name = apiName(style, subject.length ? subject : entity.slice(0, 1), verb, object, rng);
    if (taken.has(name.toLowerCase())) continue;
    taken.add(name.toLowerCase());
    const c: Ctx = { style, lang: request.language, entity, entityText: entity.join(' '), subdomain: request.subdomain, rng };
    out.push(composeOne(c, kind, name, request));
  }
  return out;
}

function apiName(style: Style, subject: string[], verb: string, object: string[], rng: Rng): string {
  if (style === 'snake') return snake([...subject, verb, ...object]);
  return `${pascal(subject)}${rng.pick(SUFFIXES)}_${camel([verb, ...object])}`;
}

function composeOne(c: Ctx, kind: Kind, name: string, request: ComposeRequest): ComposedApi {
  const params: Param[] = [kind === 'create' || kind === 'read' || kind === 'recommend' || kind === 'report' ? nameOrQuery(c, kind) : idParam(c)];
  // One parameter of a chosen atom kind (rotating over the six), then one to three others.
  const focus = ATOM_ORDER[c.rng.int(0, ATOM_ORDER.length - 1)];
  params.push(BY_KIND[focus](c));
  const extras = c.rng.int(1, 3);
  for (let i = 0; i < extras; i++) {
    const archetype = c.rng.chance(0.7) ? BY_KIND[c.rng.pick(ATOM_ORDER)] : c.rng.pick(OTHER);
    params.push(archetype(c));
  }
  const properties: Record<string, Json> = {};
  const required: string[] = [];
  for (const param of params) {
    const field = key(c.style, param.words);
    if (field in properties) continue;
    properties[field] = param.schema;
    if (param.required) required.push(field);
  }
  const templates = (c.lang === 'en' ? EN_DESCRIPTIONS : ZH_DESCRIPTIONS)[kind];
  const sentence = c.rng.pick(templates).replaceAll('{e}', c.entityText).replaceAll('{s}', request.subdomain);
  const purpose = c.lang === 'en' ? ` Used to ${request.functionality.toLowerCase()} in ${request.domain}.` : `用于${ZH_VERB[kind]}：${request.functionality}（${request.domain}）。`;
  return { name, description: sentence + purpose, parameters: { type: 'object', properties, required }, returns: returnsOf(c, kind, [...c.entity, 'id']) };
}

/** What a call that does not start from an existing record names: a new record's name, or a search text. */
function nameOrQuery(c: Ctx, kind: Kind): Param {
  if (kind === 'create') return nameParam(c);
  return { words: ['query'], schema: prop(c, 'string', t(c, `What to look for among ${c.entityText} records.`, `在「${c.entityText}」记录中查找的内容。`)), required: true };
}
