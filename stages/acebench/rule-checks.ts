import { isJsonObject } from '../../core/records.ts';
import { ArgumentValidator, checkFunctionDefinition, describeProblems } from '../../core/json-schema.ts';
import type { Check, Json } from '../../core/records.ts';
import { groundCall } from '../grounding.ts';
import { replayRecord } from './sandbox/replay.ts';
import { rangeProblems, saysOvernight } from '../../core/value-ranges.ts';
import { ACE_AGENT_CATEGORIES, atomKindOfCategory, atomKindsOf, functionParameters, propertiesOf, IRRELEVANT_ANSWER, type AceCategory, type AceFunction, type AceRecord, type AtomKind } from './record.ts';

/**
 * ACEBench §3.1.2, the rule stage of the multi-stage verification: are the API definitions clear
 * and valid, is the gold answer valid against them, is every argument value grounded in what the
 * model is told (the dialogue, the profile, the time line), and is the record consistent with its
 * category. Hard checks fail a record outright (a gold answer no model could be scored against);
 * soft ones send it to the review queue.
 */

type Args = Record<string, Json>;
type GoldCall = { name: string; fn: AceFunction | undefined; args: Args };


/** A function's properties (none when the function is unknown). */
function functionProperties(fn: AceFunction | undefined): Record<string, Json> {
  return fn ? propertiesOf(functionParameters(fn)) : {};
}

/**
 * The gold calls of a normal record's answer: `{Func: {args}}`, several keys for parallel calls
 * (a repeated function as `Func_1`, `Func_2`), or a list of such objects, each an accepted alternative.
 */
export function goldCallsOf(record: AceRecord): GoldCall[][] {
  const truth = record.answer?.ground_truth;
  const alternatives = Array.isArray(truth) ? truth : [truth];
  const byName = new Map(record.data.function.map((fn) => [fn.name, fn]));
  return alternatives.filter(isJsonObject).map((answer) =>
    Object.entries(answer).map(([name, args]) => {
      const fn = byName.get(name) ?? byName.get(name.replace(/_\d+$/, ''));
      return { name: fn?.name ?? name, fn, args: isJsonObject(args) ? args : {} };
    }),
  );
}

export interface RuleCheckOptions {
  validator: ArgumentValidator;
}

/** Every rule check of one record, passed and failed, in a fixed order. */
export function ruleChecks(record: AceRecord, options: RuleCheckOptions): Check[] {
  const checks: Check[] = [];
  const add = (name: string, problems: string[], soft = false) =>
    checks.push({ name: `acebench/${name}`, pass: problems.length === 0, ...(problems.length ? { reason: problems.join('; ') } : {}), ...(soft ? { soft: true } : {}) });

  const functions = record.data.function;
  const agent = (ACE_AGENT_CATEGORIES as readonly string[]).includes(record.category);
  // Agent records offer the sandboxes' functions as ACEBench released them (flaws included, so its
  // harness reads them unchanged): a flaw there is for review, not a reason to drop the task.
  add(
    'api-definitions',
    functions.flatMap((fn) => {
      const problems = checkFunctionDefinition({ ...fn, parameters: functionParameters(fn) });
      return problems.length ? [`function ${JSON.stringify(fn?.name)}: ${describeProblems(problems)}`] : [];
    }),
    agent,
  );
  const names = functions.map((fn) => fn.name);
  add(
    'api-names-unique',
    names.filter((name, i) => names.indexOf(name) !== i).map((name) => `function "${name}" is offered twice`),
  );
  add('question-form', questionProblems(record));

  const category = record.category;
  if (agent) {
    add('agent-replay', record.answer ? agentReplayProblems(record) : [`record ${record.data.id} has no line in possible_answer/`]);
    return checks;
  }
  if (!record.answer) {
    add('answer-present', [`record ${record.data.id} has no line in possible_answer/`]);
    return checks;
  }
  if (category === 'special_irrelevant') add('consistency', record.answer.ground_truth === IRRELEVANT_ANSWER ? [] : [`the answer must be the sentence "${IRRELEVANT_ANSWER}"`]);
  else if (category === 'special_incomplete') add('consistency', incompleteProblems(record));
  else if (category === 'special_error_param') add('consistency', errorParamProblems(record, options.validator));
  else {
    const alternatives = goldCallsOf(record);
    add('gold-call', goldCallProblems(alternatives, options.validator));
    add('consistency', normalConsistency(category, alternatives, record));
    add('grounding', groundingProblems(alternatives, record), true);
    const kind = atomKindOfCategory(category);
    if (kind) add('atom-kind', alternatives.some((calls) => fillsKind(calls, kind)) ? [] : [`no gold argument fills a parameter of kind ${kind}`], true);
    if (category === 'normal_preference') add('profile-used', profileUsed(alternatives, record) ? [] : ['no gold argument draws on the profile (every value is in the question)'], true);
    add('range-order', rangeOrderProblems(alternatives, String(record.data.question ?? '')), true);
  }
  return checks;
}

/**
 * Ranges of the gold arguments (`start`/`end`, `minX`/`maxX`, … at any depth) that end before they
 * start: for review, kept only where the question says so (an overnight time range).
 */
function rangeOrderProblems(alternatives: GoldCall[][], question: string): string[] {
  const text = { overnight: saysOvernight(question) };
  const where = (call: GoldCall, path: string) => `${call.name}${path ? `.${path}` : ''}`;
  return alternatives.flatMap((calls) =>
    calls.flatMap((call) => rangeProblems(call.args, text).problems.map(({ path, pair, start, end }) => `${where(call, path)}: ${pair.end} ${JSON.stringify(end)} is before ${pair.start} ${JSON.stringify(start)}`)),
  );
}

/** The gold path, executed in the sandboxes from the initial_config, reaches the ground_truth. */
export function agentReplayProblems(record: AceRecord): string[] {
  const outcome = replayRecord(record, `record ${record.data.id} initial_config`);
  if (outcome.reproduced) return [];
  const path = outcome.paths[0];
  if (!path) return ['the answer has no mile_stone'];
  const rejected = path.rejected.map((call) => `call ${call.call} was refused: ${call.error}`);
  const differences = path.differences.map((d) => `${d.className}${d.path ? `.${d.path}` : ''} is ${JSON.stringify(d.actual)} after the mile_stone, ${JSON.stringify(d.expected)} in the ground_truth`);
  return [...rejected, ...differences];
}

function questionProblems(record: AceRecord): string[] {
  const question = record.data.question;
  if (!question.trim()) return ['the question is empty'];
  if ((ACE_AGENT_CATEGORIES as readonly string[]).includes(record.category)) return [];
  if (!question.startsWith('user: ')) return ['the question must start with "user: "'];
  const lines = question.replace(/\n$/, '').split('\n');
  const speakers = lines.filter((line) => /^(user|system): /.test(line)).map((line) => line.slice(0, line.indexOf(':')));
  const problems: string[] = [];
  // `system:` lines may follow each other (a call, then its result); two user turns may not.
  speakers.forEach((who, i) => {
    if (i > 0 && who === 'user' && speakers[i - 1] === 'user') problems.push(`turn ${i + 1} is a second "user:" in a row`);
  });
  if (record.category.startsWith('normal_multi_turn') && speakers.filter((who) => who === 'user').length < 2) problems.push('a multi-turn record needs at least two user turns');
  return problems;
}

function goldCallProblems(alternatives: GoldCall[][], validator: ArgumentValidator): string[] {
  if (alternatives.length === 0) return ['the answer holds no call'];
  const problems: string[] = [];
  for (const calls of alternatives) {
    if (calls.length === 0) problems.push('an answer holds no call');
    for (const call of calls) {
      if (!call.fn) {
        problems.push(`gold call ${call.name} names no offered function`);
        continue;
      }
      const found = validator.validate(functionParameters(call.fn), call.args);
      if (found.length) problems.push(`gold call ${call.name}: ${describeProblems(found)}`);
    }
  }
  return problems;
}

function normalConsistency(category: AceCategory, alternatives: GoldCall[][], record: AceRecord): string[] {
  const problems: string[] = [];
  const counts = alternatives.map((calls) => calls.length);
  if (category === 'normal_single_turn_parallel_function' && counts.some((n) => n < 2)) problems.push('a parallel record needs at least two gold calls');
  if (category === 'normal_preference' && !record.data.profile) problems.push('a preference record needs a profile');
  if (category === 'normal_similar_api' && record.data.function.length < 2) problems.push('a similar-API record offers at least two functions to choose from');
  return problems;
}

/** `{Func: [params]}`: the function is offered and each param is one of its parameters (at any depth). */
function incompleteProblems(record: AceRecord): string[] {
  const truth = record.answer?.ground_truth;
  if (!isJsonObject(truth)) return ['the answer must be {function: [missing parameters]}'];
  const problems: string[] = [];
  for (const [name, missing] of Object.entries(truth)) {
    const fn = record.data.function.find((f) => f.name === name);
    if (!fn) problems.push(`function ${name} of the answer is not offered`);
    else if (!Array.isArray(missing) || missing.length === 0) problems.push(`the missing parameters of ${name} must be a non-empty list`);
    else {
      // The released answers name nested parameters too (`latitude` of a `location` object).
      for (const param of missing) if (typeof param !== 'string' || !findProperty(functionParameters(fn), param)) problems.push(`${JSON.stringify(param)} is not a parameter of ${name}`);
    }
  }
  return problems;
}

/** `{param: [bad values]}`: each value is in the question and breaks the parameter's schema. */
function errorParamProblems(record: AceRecord, validator: ArgumentValidator): string[] {
  const truth = record.answer?.ground_truth;
  if (!isJsonObject(truth)) return ['the answer must be {parameter: [wrong values]}'];
  const problems: string[] = [];
  for (const [param, values] of Object.entries(truth)) {
    const schemas = record.data.function.map((fn) => findProperty(functionParameters(fn), param)).filter((s): s is Record<string, Json> => !!s);
    if (schemas.length === 0) {
      problems.push(`"${param}" is not a parameter of any offered function`);
      continue;
    }
    if (!Array.isArray(values) || values.length === 0) {
      problems.push(`the wrong values of ${param} must be a non-empty list`);
      continue;
    }
    for (const value of values) {
      if (!record.data.question.includes(String(value))) problems.push(`wrong value ${JSON.stringify(value)} of ${param} is not in the question`);
      const breaks = schemas.some((schema) => validator.validate({ type: 'object', properties: { [param]: schema }, required: [param] }, { [param]: value }).length > 0);
      if (!breaks) problems.push(`wrong value ${JSON.stringify(value)} of ${param} satisfies its schema`);
    }
  }
  return problems;
}

/** The schema of a parameter named `param` at any depth of a parameters schema. */
function findProperty(schema: Json | undefined, param: string): Record<string, Json> | undefined {
  if (!isJsonObject(schema)) return undefined;
  const properties = schema.properties;
  if (isJsonObject(properties)) {
    if (isJsonObject(properties[param])) return properties[param] as Record<string, Json>;
    for (const child of Object.values(properties)) {
      const found = findProperty(child, param);
      if (found) return found;
    }
  }
  return isJsonObject(schema.items) ? findProperty(schema.items, param) : undefined;
}

/** What the model is told: the dialogue, the time line and the profile. */
function contextOf(record: AceRecord): string {
  return [record.data.question, record.data.time, record.data.profile].filter((part) => typeof part === 'string').join('\n');
}

function enumParameters(fn: AceFunction | undefined): Set<string> {
  return new Set(Object.entries(functionProperties(fn)).filter(([, schema]) => isJsonObject(schema) && Array.isArray(schema.enum)).map(([name]) => name));
}

function groundingProblems(alternatives: GoldCall[][], record: AceRecord): string[] {
  const context = contextOf(record);
  const best = alternatives
    .map((calls) => calls.flatMap((call) => groundCall(call.args, context, enumParameters(call.fn)).filter((g) => g.how === 'missing').map((g) => `${call.name}.${g.param} = ${JSON.stringify(g.value)} is not stated`)))
    .sort((a, b) => a.length - b.length)[0];
  return best ?? [];
}

function fillsKind(calls: GoldCall[], kind: AtomKind): boolean {
  return calls.some((call) => {
    const properties = functionProperties(call.fn);
    return Object.keys(call.args).some((name) => atomKindsOf(properties[name]).has(kind));
  });
}

/** Some gold value is stated in the profile and not in the question. */
function profileUsed(alternatives: GoldCall[][], record: AceRecord): boolean {
  const profile = typeof record.data.profile === 'string' ? record.data.profile : '';
  if (!profile) return false;
  return alternatives.some((calls) =>
    calls.some((call) => {
      const fromProfile = groundCall(call.args, profile, enumParameters(call.fn)).filter((g) => g.how !== 'missing');
      const fromQuestion = new Set(groundCall(call.args, record.data.question, enumParameters(call.fn)).filter((g) => g.how !== 'missing').map((g) => `${g.param}=${JSON.stringify(g.value)}`));
      return fromProfile.some((g) => !fromQuestion.has(`${g.param}=${JSON.stringify(g.value)}`));
    }),
  );
}
