import type { Sample } from '../core/records.ts';
import { TYPED_FORMULA } from './csv.ts';

/**
 * Rules for text a reviewer typed, before it reaches data: it may not start with what a spreadsheet
 * runs as a formula (a dataset's CSV, opened later, would run it), and a name in corrected calls may
 * not be one JavaScript gives meaning to on every object.
 */

/** Names that, as keys, reach an object's prototype or constructor instead of holding a value. */
export const RESERVED_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** The formula character `text` starts with, as a message names it; null when it starts with none. */
export function formulaLead(text: string): string | null {
  const lead = TYPED_FORMULA.exec(text)?.[0];
  if (lead === undefined) return null;
  return lead === '\t' ? 'a tab' : lead === '\r' ? 'a carriage return' : `"${lead}"`;
}

export const RUNS_AS_FORMULA = 'which a spreadsheet runs as a formula';

/**
 * What in a reviewer's corrected-calls JSON may not reach data, one message per place (`at <path>: …`):
 * a reserved name as a key at any depth, and a key or string value that starts with a formula
 * character unless the sample already holds that text (`known`: copied from the version, not typed).
 */
export function jsonTextProblems(json: unknown, known: (text: string) => boolean): string[] {
  const problems: string[] = [];
  const formula = (path: string, what: string, text: string) => {
    const lead = formulaLead(text);
    if (lead && !known(text)) problems.push(`at ${path}: the ${what} ${JSON.stringify(text)} starts with ${lead}, ${RUNS_AS_FORMULA}; remove that character (text the sample already holds is fine)`);
  };
  const walk = (value: unknown, path: string) => {
    if (typeof value === 'string') formula(path, 'value', value);
    else if (Array.isArray(value)) value.forEach((item, i) => walk(item, `${path}[${i}]`));
    else if (value && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        const at = `${path}${/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`;
        if (RESERVED_NAMES.has(key)) problems.push(`at ${at}: the name "${key}" is not allowed (it names a part of every JavaScript object, not a value); rename it`);
        else formula(at, 'name', key);
        walk(item, at);
      }
    }
  };
  walk(json, '$');
  return problems;
}

/**
 * Text the version already has, so a reviewer copied rather than typed it: a string of the gold
 * calls (name or value) or a gold label, a tool name, or part of a dialogue turn's text.
 */
export function sampleHolds(sample: Sample, text: string): boolean {
  const gold = JSON.stringify([sample.expected.calls ?? [], sample.expected.turns ?? {}, sample.expected.labels ?? []]);
  return gold.includes(JSON.stringify(text)) || sample.tools.some((t) => t.name === text) || sample.dialogue.some((turn) => turn.content?.includes(text));
}
