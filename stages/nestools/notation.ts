import { UserError } from '../../core/errors.ts';
import { isRef, type ArgValue, type Call, type Json, type ToolSpec } from '../../core/records.ts';
import { returnFields } from '../../prompts/nestools-render-program.ts';
import { placeholder, placeholderNumber } from './placeholders.ts';

export { placeholder, placeholderNumber };

/**
 * NesTools notation of a call chain: every declared return value of every call gets a placeholder
 * `API_call_k`, numbered 0, 1, 2, … globally in call and response order; a nested argument is that
 * placeholder string (or a list holding it). Canonical calls hold `{ "$ref": "<callId>.<field>" }`.
 */

export interface NotationCall {
  api_name: string;
  parameters: Record<string, Json>;
  responses: string[];
}

/** Applies `fn` to every leaf of an argument value (inside lists and dicts), keeping structure. */
export function mapLeaves(value: ArgValue, fn: (leaf: ArgValue) => ArgValue): ArgValue {
  if (isRef(value)) return fn(value);
  if (Array.isArray(value)) return value.map((item) => mapLeaves(item, fn));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapLeaves(item as ArgValue, fn)]));
  return fn(value);
}

/** Every leaf of an argument value, in order. */
export function leaves(value: ArgValue): ArgValue[] {
  const out: ArgValue[] = [];
  mapLeaves(value, (leaf) => (out.push(leaf), leaf));
  return out;
}

function toolIndex(tools: ToolSpec[]): Map<string, ToolSpec> {
  return new Map(tools.map((tool) => [tool.name, tool]));
}

/** Canonical calls → NesTools calls; a reference to a field no earlier call returns is an error. */
export function toNotation(calls: Call[], tools: ToolSpec[], where: string): NotationCall[] {
  const byName = toolIndex(tools);
  const placeholders = new Map<string, string>();
  let next = 0;
  return calls.map((call) => {
    const tool = byName.get(call.tool);
    if (!tool) throw new UserError(`${where}: call ${call.id} uses ${call.tool}, which is not among the sample's tools`);
    const parameters = Object.fromEntries(
      Object.entries(call.arguments).map(([name, value]) => [
        name,
        mapLeaves(value, (leaf) => {
          if (!isRef(leaf)) return leaf;
          const text = placeholders.get(leaf.$ref);
          if (!text) throw new UserError(`${where}: call ${call.id} argument "${name}" refers to ${leaf.$ref}, which no earlier call returns`);
          return text;
        }) as Json,
      ]),
    );
    const responses = returnFields(tool).map((field) => {
      const text = placeholder(next++);
      placeholders.set(`${call.id}.${field}`, text);
      return text;
    });
    return { api_name: call.tool, parameters, responses };
  });
}

/**
 * NesTools calls → canonical calls with ids `call_0`, `call_1`, …. Placeholders are bound to the
 * return fields by position; one no earlier call produced is an error (run the checker first).
 */
export function fromNotation(calls: NotationCall[], tools: ToolSpec[], where: string): Call[] {
  const byName = toolIndex(tools);
  const refs = new Map<string, string>();
  return calls.map((call, index) => {
    const id = `call_${index}`;
    const tool = byName.get(call.api_name);
    if (!tool) throw new UserError(`${where}: call ${index + 1} uses ${call.api_name}, which is not in its api list`);
    const args = Object.fromEntries(
      Object.entries(call.parameters).map(([name, value]) => [
        name,
        mapLeaves(value, (leaf) => {
          if (placeholderNumber(leaf) === undefined) return leaf;
          const ref = refs.get(leaf as string);
          if (!ref) throw new UserError(`${where}: call ${index + 1} argument "${name}" is ${leaf}, which no earlier call returns`);
          return { $ref: ref };
        }),
      ]),
    );
    const fields = returnFields(tool);
    if (fields.length !== call.responses.length) {
      throw new UserError(`${where}: call ${index + 1} (${call.api_name}) lists ${call.responses.length} responses but the tool declares ${fields.length}`);
    }
    call.responses.forEach((text, i) => refs.set(text, `${id}.${fields[i]}`));
    return { id, tool: call.api_name, arguments: args };
  });
}
