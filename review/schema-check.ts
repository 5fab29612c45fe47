import { describeFinding, SampleInvariants } from '../core/invariants.ts';
import type { PipelineDefinition } from '../core/pipeline.ts';
import { isRef, parseRef, type ArgValue, type Check, type PropertySchema, type Sample, type ToolSpec } from '../core/records.ts';
import { applyCorrection, callGroups, goldCalls, type Correction, type GoldCalls } from './calls.ts';

export const GENERIC_CHECK = 'review:calls-valid';

/**
 * What is wrong with calls against the tools offered: unknown tool, unknown or missing required
 * argument, a value outside the enum or of the wrong JSON type, a reference to no earlier call.
 * References (`{"$ref"}`) are not type-checked: their value exists only when the tools run.
 */
export function callProblems(calls: GoldCalls, tools: ToolSpec[]): string[] {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const problems: string[] = [];
  const earlier = new Set<string>();
  for (const { label, calls: list } of callGroups(calls)) {
    for (const call of list) {
      const where = `${label}${call.id}`;
      const tool = byName.get(call.tool);
      if (!tool) {
        problems.push(`${where}: tool "${call.tool}" is not offered by this sample (offered: ${[...byName.keys()].join(', ') || 'none'})`);
      } else {
        const { properties, required } = tool.parameters;
        const open = (tool.parameters as { additionalProperties?: unknown }).additionalProperties;
        for (const [name, value] of Object.entries(call.arguments)) {
          const schema = Object.hasOwn(properties, name) ? properties[name] : undefined;
          if (!schema) {
            if (open !== true && !(open && typeof open === 'object')) problems.push(`${where}: ${call.tool} has no parameter "${name}" (parameters: ${Object.keys(properties).join(', ') || 'none'})`);
            continue;
          }
          problems.push(...valueProblems(value, schema, `${where}: ${call.tool}.${name}`, earlier));
        }
        for (const name of required) if (!(name in call.arguments)) problems.push(`${where}: ${call.tool} needs the required parameter "${name}"`);
      }
      earlier.add(call.id);
    }
  }
  return problems;
}

function valueProblems(value: ArgValue, schema: PropertySchema, where: string, earlier: Set<string>): string[] {
  if (isRef(value)) {
    const { callId } = parseRef(value);
    return earlier.has(callId) ? [] : [`${where}: ${value.$ref} refers to no earlier call "${callId}"`];
  }
  if (schema.enum && !schema.enum.some((option) => JSON.stringify(option) === JSON.stringify(value))) {
    return [`${where}: ${JSON.stringify(value)} is not one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`];
  }
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  const known = types.filter((t) => t in TYPE_TESTS);
  if (known.length && !known.some((t) => TYPE_TESTS[t](value))) return [`${where}: ${JSON.stringify(value)} is not of type ${known.join(' or ')}`];
  const items = schema.items as PropertySchema | undefined;
  if (Array.isArray(value) && items && typeof items === 'object') return value.flatMap((v, i) => valueProblems(v, items, `${where}[${i}]`, earlier));
  return [];
}

/** JSON-Schema type names; other names (`datetime`, `any`, …) are not checked. */
const TYPE_TESTS: Record<string, (value: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number',
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
  array: (v) => Array.isArray(v),
  object: (v) => !!v && typeof v === 'object' && !Array.isArray(v),
  null: (v) => v === null,
};

/** The check an edited sample goes through when its recipe defines no `recheck`: a hard one. */
export function genericRecheck(sample: Sample): Check[] {
  const calls = goldCalls(sample);
  const problems = calls ? callProblems(calls, sample.tools) : [];
  return [{ name: GENERIC_CHECK, pass: problems.length === 0, ...(problems.length ? { reason: problems.join('; ') } : {}), soft: false }];
}

/** The recipe's checks for an edited sample, or the generic one. */
export function recheckSample(pipeline: Pick<PipelineDefinition, 'recheck'> | undefined, sample: Sample, library: ToolSpec[]): Check[] {
  return pipeline?.recheck ? pipeline.recheck(sample, library) : genericRecheck(sample);
}

/** Checks after an edit: re-run checks replace the ones of the same name, others stay. */
export function mergeChecks(before: Check[], after: Check[]): Check[] {
  const rerun = new Set(after.map((c) => c.name));
  return [...before.filter((c) => !rerun.has(c.name)), ...after];
}

/**
 * A sample with a reviewer's corrections applied and the recipe's checks re-run on it: `failed`
 * lists the hard checks it fails (then the edit cannot be applied).
 */
export function editedSample(sample: Sample, correction: Correction, pipeline: Pick<PipelineDefinition, 'recheck'> | undefined, library: ToolSpec[]): { sample: Sample; failed: Check[] } {
  const candidate = applyCorrection(sample, correction);
  const checks = recheckSample(pipeline, candidate, library);
  const invariants = invariantsCheck(candidate, library);
  return {
    sample: { ...candidate, meta: { ...candidate.meta, checks: mergeChecks(candidate.meta.checks, checks) } },
    failed: [...checks.filter((c) => !c.pass && !c.soft), ...(invariants.pass ? [] : [invariants])],
  };
}

export const INVARIANTS_CHECK = 'invariants';

/**
 * The shared invariants (core/invariants.ts) an edit must keep, as the publish gate holds a run's
 * samples to them: a reviewer's range that ends before it starts, or a call to a tool the version
 * lacks, is refused like a failed recipe check. The id check is left out (an edit keeps its id).
 */
function invariantsCheck(sample: Sample, library: ToolSpec[]): Check {
  const findings = new SampleInvariants(library).check(sample).filter((f) => f.check !== 'sample-id-unique');
  return { name: INVARIANTS_CHECK, pass: findings.length === 0, ...(findings.length ? { reason: findings.map(describeFinding).join('; ') } : {}), soft: false };
}
