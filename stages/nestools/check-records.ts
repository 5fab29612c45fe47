import { literalFits, pythonTypeOfValue, typesCompatible } from '../../prompts/nestools-python-types.ts';
import type { ApiSpec } from './api-spec.ts';
import type { NesToolsRecord } from './import-export.ts';
import { IssueList, type CheckOutcome } from './issues.ts';
import { placeholder, placeholderNumber } from './placeholders.ts';

/**
 * Consistency check of NesTools-format records (`{test_id, api, task, call, field}`): every call
 * names a listed api, passes only its parameters and all required ones, lists one placeholder per
 * declared response, numbered 0, 1, 2, … globally in order, and every placeholder argument (alone or
 * inside a list) was produced by an earlier call. Producer/consumer type mismatches are warnings.
 */

export interface RecordCheck extends CheckOutcome {
  /** `test_id` as the record has it (number or text), or `line N` when the record has none. */
  id: string | number;
}

export interface CheckRecordOptions {
  strict?: boolean;
  /** Where the record is, for the id of a record without `test_id` (e.g. `line 12`). */
  where?: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);
const isStringList = (value: unknown): boolean => Array.isArray(value) && value.every((item) => typeof item === 'string');

function fieldsProblem(fields: unknown, where: string): string | undefined {
  if (!isObject(fields)) return `${where} is not an object`;
  for (const [name, field] of Object.entries(fields)) {
    if (!isObject(field) || typeof field.type !== 'string') return `${where}.${name} has no "type" string`;
    if (field.description !== undefined && typeof field.description !== 'string') return `${where}.${name}.description is not a string`;
  }
  return undefined;
}

/**
 * What keeps a value from having the NesTools record shape, in the words of the file format
 * (checked by hand, same shape as `NesToolsRecord` in import-export.ts, so the checker starts
 * without the schema library).
 */
function shapeProblem(raw: unknown): string | undefined {
  if (!isObject(raw)) return 'a record is a JSON object';
  if (typeof raw.test_id !== 'number' && typeof raw.test_id !== 'string') return 'test_id is missing or not a number or string';
  if (typeof raw.task !== 'string') return 'task is missing or not a string';
  if (raw.field !== undefined && typeof raw.field !== 'string') return 'field is not a string';
  if (!Array.isArray(raw.api)) return 'api is missing or not a list';
  for (const [i, api] of raw.api.entries()) {
    const where = `api.${i}`;
    if (!isObject(api)) return `${where} is not an object`;
    if (typeof api.api_name !== 'string' || !api.api_name) return `${where}.api_name is missing or empty`;
    if (typeof api.api_description !== 'string') return `${where}.api_description is missing or not a string`;
    if (!isStringList(api.required)) return `${where}.required is not a list of names`;
    const fields = fieldsProblem(api.parameters, `${where}.parameters`) ?? fieldsProblem(api.responses, `${where}.responses`);
    if (fields) return fields;
  }
  if (!Array.isArray(raw.call)) return 'call is missing or not a list';
  for (const [i, call] of raw.call.entries()) {
    const where = `call.${i}`;
    if (!isObject(call)) return `${where} is not an object`;
    if (typeof call.api_name !== 'string' || !call.api_name) return `${where}.api_name is missing or empty`;
    if (!isObject(call.parameters)) return `${where}.parameters is not an object`;
    if (!isStringList(call.responses)) return `${where}.responses is not a list of placeholder strings`;
  }
  return undefined;
}

interface Produced {
  callIndex: number;
  api: string;
  field: string;
  type: string;
}

export function checkNesToolsRecord(raw: unknown, options: CheckRecordOptions = {}): RecordCheck {
  const issues = new IssueList();
  const fallbackId = options.where ?? 'record';
  const problem = shapeProblem(raw);
  if (problem) {
    const testId = (raw as { test_id?: unknown } | null)?.test_id;
    issues.error('malformed_record', `not a NesTools record: ${problem}`);
    return { id: typeof testId === 'number' || typeof testId === 'string' ? testId : fallbackId, ...issues.outcome(options.strict) };
  }
  const record = raw as NesToolsRecord;
  const apis = new Map<string, ApiSpec>();
  for (const api of record.api) {
    if (apis.has(api.api_name)) issues.error('duplicate_api', `api ${api.api_name} is listed twice`);
    apis.set(api.api_name, api);
    for (const name of api.required) {
      if (!(name in api.parameters)) issues.error('bad_api_spec', `api ${api.api_name} requires "${name}", which is not among its parameters`);
    }
  }

  const produced = new Map<string, Produced>();
  const used = new Set<string>();
  let expected = 0;
  let numberingReported = false;
  record.call.forEach((call, index) => {
    const at = `call ${index + 1} (${call.api_name})`;
    const api = apis.get(call.api_name);
    if (!api) issues.error('unknown_api', `${at} is not in the api list (${[...apis.keys()].join(', ')})`);
    else used.add(api.api_name);

    for (const [name, value] of Object.entries(call.parameters)) {
      const declared = api?.parameters[name];
      if (api && !declared) issues.error('unknown_parameter', `${at} passes "${name}", which ${api.api_name} does not take (it takes ${Object.keys(api.parameters).join(', ') || 'none'})`);
      checkValue(value, name, declared?.type, at, produced, issues, false);
    }
    if (api) {
      for (const name of api.required) {
        if (!(name in call.parameters)) issues.error('missing_required', `${at} leaves out the required parameter "${name}"`);
      }
    }

    const fields = api ? Object.entries(api.responses) : [];
    if (api && call.responses.length !== fields.length) {
      issues.error('responses_mismatch', `${at} lists ${call.responses.length} response placeholder${call.responses.length === 1 ? '' : 's'} but ${api.api_name} declares ${fields.length} (${fields.map(([f]) => f).join(', ') || 'none'})`);
    }
    call.responses.forEach((text, i) => {
      if (placeholder(expected) !== text && !numberingReported) {
        issues.error('misnumbered_reference', `${at} names its response ${i + 1} "${text}" where ${placeholder(expected)} comes next (placeholders are numbered 0, 1, 2, … across the whole chain)`);
        numberingReported = true;
      }
      expected++;
      const [field, spec] = fields[i] ?? [`#${i}`, { type: '' }];
      produced.set(text, { callIndex: index, api: call.api_name, field, type: spec.type });
    });
  });
  for (const name of apis.keys()) if (!used.has(name)) issues.warn('unused_api', `api ${name} is listed but no call uses it`);
  return { id: record.test_id, ...issues.outcome(options.strict) };
}

/** Placeholders alone or inside lists / dicts must come from earlier calls; types should fit. */
function checkValue(value: unknown, name: string, declared: string | undefined, at: string, produced: Map<string, Produced>, issues: IssueList, inContainer: boolean): void {
  if (Array.isArray(value)) {
    if (!inContainer && declared && !typesCompatible('list', declared)) issues.warn('literal_type_mismatch', `${at} gives "${name}" a list for a ${declared} parameter`);
    for (const item of value) checkValue(item, name, undefined, at, produced, issues, true);
    return;
  }
  if (value && typeof value === 'object') {
    if (!inContainer && declared && !typesCompatible('dict', declared)) issues.warn('literal_type_mismatch', `${at} gives "${name}" a dict for a ${declared} parameter`);
    for (const item of Object.values(value)) checkValue(item, name, undefined, at, produced, issues, true);
    return;
  }
  if (placeholderNumber(value) !== undefined) {
    const source = produced.get(value as string);
    if (!source) {
      issues.error('bad_reference', `${at} passes ${value} as "${name}", but no earlier call produced ${value}`);
    } else if (!inContainer && !typesCompatible(source.type, declared)) {
      issues.warn('type_mismatch', `${at} feeds "${name}" (${declared}) with ${value}, the ${source.type} "${source.field}" of call ${source.callIndex + 1} (${source.api})`);
    }
    return;
  }
  if (!inContainer && declared && !literalFits(value, declared)) {
    issues.warn('literal_type_mismatch', `${at} gives "${name}" ${JSON.stringify(value)} (${pythonTypeOfValue(value)}) for a ${declared} parameter`);
  }
}
