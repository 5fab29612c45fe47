import { isRef, Sample, type ArgValue, type Call, type Json, type PropertySchema, type ToolSpec } from '../../core/records.ts';
import { reject, scanStage, type LineageEntry, type RejectReason, type ScanStage } from '../../core/stage.ts';
import { mtuToolDocPrompt, type ToolDocAnswer } from '../../prompts/mtu-tool-doc.ts';
import type { MtuConfig } from './config.ts';
import { inferProperty, typedValue } from './infer.ts';
import { ToolLibrary, toolReference } from './library.ts';
import { assistantIndexes, literalText, toolKey, turnCalls } from './sample.ts';

/**
 * Step 4 of the paper, tool documentation: one entry per tool (by plugin and name) with its
 * description, required and optional parameters, their types, formats, enums and defaults, and
 * its result parameters. The structure comes from the data — a schema when the source has one
 * (SGD, MultiWOZ: names, required / optional / result slots, categorical values, defaults), else
 * the calls and observations seen for the tool; the LLM only writes missing prose and, for a tool
 * whose data shows no results, proposes its result fields. The library goes to the run folder;
 * samples leave with references to their tools (see library.ts).
 */

interface Observed {
  tool: ToolSpec;
  schema: boolean;
  calls: number;
  filled: Map<string, number>;
  values: Map<string, ObservedValues>;
  results: Map<string, ObservedValues>;
}

/** The values seen for one field: each distinct value once with its count (in the order first seen), so memory follows the distinct values, not the calls. */
class ObservedValues {
  private readonly counts = new Map<string, { value: Json; n: number }>();

  add(value: Json): void {
    const key = JSON.stringify(value);
    const known = this.counts.get(key);
    if (known) known.n++;
    else this.counts.set(key, { value, n: 1 });
  }

  /** Every observation, for inference (the same value objects repeated, so it costs a reference each). */
  all(): Json[] {
    const out: Json[] = [];
    for (const { value, n } of this.counts.values()) for (let i = 0; i < n; i++) out.push(value);
    return out;
  }

  /** The first `k` distinct values, in the order seen. */
  examples(k: number): Json[] {
    const out: Json[] = [];
    for (const { value } of this.counts.values()) {
      if (out.length === k) break;
      out.push(value);
    }
    return out;
  }
}

const TYPE_NAMES: Record<string, string> = { str: 'string', int: 'integer', float: 'number', bool: 'boolean', list: 'array', dict: 'object' };

function observe(map: Map<string, ObservedValues>, key: string, value: Json): void {
  let values = map.get(key);
  if (!values) map.set(key, (values = new ObservedValues()));
  values.add(value);
}

/** Every tool of every sample with what its calls and observations show. */
export function observeTools(samples: Iterable<Sample>): Map<string, Observed> {
  const observed = new Map<string, Observed>();
  for (const sample of samples) {
    for (const tool of sample.tools) {
      const key = toolKey(tool);
      const entry = observed.get(key);
      if (!entry) {
        observed.set(key, { tool: structuredClone(tool), schema: tool.provenance?.schema === true, calls: 0, filled: new Map(), values: new Map(), results: new Map() });
        continue;
      }
      // Tools made per sample (grammar, LLM) each show the parameters of their own call: union them.
      const known = entry.tool.parameters.properties;
      const properties = tool.parameters.properties;
      for (const name of Object.keys(properties)) known[name] ??= properties[name];
      if (!entry.tool.description && tool.description) entry.tool.description = tool.description;
    }
    for (const index of assistantIndexes(sample)) {
      for (const call of turnCalls(sample, index)) {
        const tool = sample.tools.find((t) => t.name === call.tool);
        const entry = tool && observed.get(toolKey(tool));
        if (!entry) continue; // an undefined tool: the quality filter rejects it
        entry.calls++;
        for (const [name, value] of Object.entries(call.arguments)) {
          entry.filled.set(name, (entry.filled.get(name) ?? 0) + 1);
          if (literalText(value) !== undefined || value === null || (Array.isArray(value) && value.every((v) => literalText(v) !== undefined))) observe(entry.values, name, value as Json);
          entry.tool.parameters.properties[name] ??= { type: 'string' };
        }
        const result = sample.dialogue[index].observations?.[call.id];
        if (result && typeof result === 'object' && !Array.isArray(result)) for (const [field, value] of Object.entries(result)) observe(entry.results, field, value);
      }
    }
  }
  return observed;
}

function examples(values: ObservedValues | undefined): Json[] {
  return values?.examples(3) ?? [];
}

/** The documented structure of one tool, before prose. */
export function documentStructure(entry: Observed, options: MtuConfig['documentation']): ToolSpec {
  const { tool, schema } = entry;
  const infer = { ...options, ...(schema ? { enumMaxValues: 0 } : {}) };
  const properties: Record<string, PropertySchema> = {};
  for (const [name, base] of Object.entries(tool.parameters.properties)) {
    const inferred = inferProperty(entry.values.get(name)?.all() ?? [], infer);
    const property: PropertySchema = { ...base, type: inferred.type };
    for (const key of ['format', 'pattern', 'items'] as const) {
      if (inferred[key]) Object.assign(property, { [key]: inferred[key] });
      else delete property[key];
    }
    // A schema's closed set stands; otherwise a closed set seen in the data. Both in the documented type.
    const closed = base.enum?.length ? base.enum : inferred.enum;
    if (closed && inferred.type !== 'array') property.enum = [...new Set(closed.map((v) => typedValue(v, property)))];
    else delete property.enum;
    if (property.default !== undefined && inferred.type !== 'array') property.default = typedValue(property.default, property);
    properties[name] = property;
  }
  const required = schema
    ? tool.parameters.required
    : Object.keys(properties).filter((name) => entry.calls > 0 && (entry.filled.get(name) ?? 0) / entry.calls >= options.requiredShare);
  const resultNames = schema ? Object.keys(tool.returns.properties) : [...entry.results.keys()];
  const returns: Record<string, PropertySchema> = {};
  for (const name of resultNames) {
    const inferred = inferProperty(entry.results.get(name)?.all() ?? [], { ...options, enumMaxValues: 0 });
    returns[name] = { ...(tool.returns.properties[name] ?? {}), type: inferred.type, ...(inferred.format ? { format: inferred.format } : {}) };
  }
  return {
    ...tool,
    parameters: { type: 'object', properties, required },
    returns: { type: 'object', properties: returns, required: [] },
  };
}

function needsProse(tool: ToolSpec, schema: boolean): boolean {
  const undescribed = (props: Record<string, PropertySchema>) => Object.values(props).some((p) => !p.description);
  return !tool.description || undescribed(tool.parameters.properties) || undescribed(tool.returns.properties) || (!schema && !Object.keys(tool.returns.properties).length);
}

/** Fills the prose the structure lacks; proposed result fields only where the data shows none. */
export function applyProse(tool: ToolSpec, prose: ToolDocAnswer, schema: boolean): ToolSpec {
  const out = structuredClone(tool);
  if (!out.description) out.description = prose.description;
  for (const [name, property] of Object.entries(out.parameters.properties)) if (!property.description && prose.parameters[name]) property.description = prose.parameters[name];
  const returns = out.returns.properties;
  if (!schema && !Object.keys(returns).length) {
    for (const field of prose.returns) returns[field.name] = { type: TYPE_NAMES[field.type] ?? field.type, description: field.description };
  } else {
    for (const field of prose.returns) if (returns[field.name] && !returns[field.name].description) returns[field.name].description = field.description;
  }
  return out;
}

interface Documentation {
  documented: Map<string, ToolSpec>;
  /** The reference samples carry for each documented tool (by the same key), made once, shared by the samples. */
  references: Map<string, ToolSpec>;
  failed: Map<string, RejectReason>;
  /**
   * What every sample's lineage names: the documentation answers (the prompt, the model) when the
   * LLM wrote prose for the library, whose entries the samples reference; else the stage alone.
   */
  entry?: LineageEntry;
  report: Record<string, number>;
}

export function documentToolsStage(options: MtuConfig['documentation']): ScanStage<Sample, Sample, Documentation> {
  return scanStage<Sample, Sample, Documentation>({
    name: 'document-tools',
    version: 3,
    input: Sample,
    output: Sample,
    prompts: [mtuToolDocPrompt],
    collect: async (samples, ctx) => {
      const observed = observeTools(samples);
      const documented = new Map<string, ToolSpec>();
      const failed = new Map<string, RejectReason>();
      let prosed = 0;
      let answered: LineageEntry | undefined;
      await Promise.all(
        [...observed].map(async ([key, entry]) => {
          const structure = documentStructure(entry, options);
          if (!needsProse(structure, entry.schema)) return void documented.set(key, structure);
          const proposeReturns = !entry.schema && !Object.keys(structure.returns.properties).length;
          const result = await ctx.tryAsk(
            mtuToolDocPrompt,
            {
              name: structure.name,
              known: structure.description,
              parameters: Object.entries(structure.parameters.properties).map(([p, prop]) => ({ name: p, type: prop.type, format: prop.format, enum: prop.enum, examples: examples(entry.values.get(p)) })),
              returns: Object.keys(structure.returns.properties).map((r) => ({ name: r, examples: examples(entry.results.get(r)) })),
              proposeReturns,
            },
            { key: `tool/${key}` },
          );
          if (!result.ok) return void failed.set(key, { reason: result.reason, detail: `documenting ${key}: ${result.detail}` });
          prosed++;
          answered ??= result.lineage;
          documented.set(key, applyProse(structure, result.value, entry.schema));
        }),
      );
      const report = { tools: documented.size, fromSchema: [...observed.values()].filter((e) => e.schema).length, proseWrittenByLlm: prosed, failed: failed.size };
      const references = new Map([...documented].map(([key, tool]) => [key, toolReference(tool)]));
      return { documented, references, failed, entry: answered, report };
    },
    run: (sample, ctx) => {
      const { documented, references, failed, entry } = ctx.state;
      const failure = sample.tools.map((t) => failed.get(toolKey(t))).find(Boolean);
      if (failure) return reject(failure.reason, failure.detail, { recordId: sample.id });
      // Arguments take the types their parameters are documented with; a call (a turn) none of whose values change is kept as it is.
      const typed = (call: Call): Call => {
        const tool = sample.tools.find((t) => t.name === call.tool);
        const properties = tool && documented.get(toolKey(tool))?.parameters.properties;
        if (!properties) return call;
        const args = call.arguments;
        let changed = false;
        for (const k of Object.keys(args)) {
          const v = args[k];
          if (!isRef(v) && typedValue(v as Json, properties[k]) !== v) {
            changed = true;
            break;
          }
        }
        return changed ? { ...call, arguments: Object.fromEntries(Object.entries(args).map(([k, v]) => [k, isRef(v) ? v : (typedValue(v as Json, properties[k]) as ArgValue)])) } : call;
      };
      const typedAll = (calls: Call[]): Call[] => {
        const out = calls.map(typed);
        return out.every((call, i) => call === calls[i]) ? calls : out;
      };
      return {
        ...sample,
        dialogue: sample.dialogue.map((turn) => {
          if (!turn.calls) return turn;
          const calls = typedAll(turn.calls);
          return calls === turn.calls ? turn : { ...turn, calls };
        }),
        expected: {
          ...sample.expected,
          ...(sample.expected.calls ? { calls: typedAll(sample.expected.calls) } : {}),
          ...(sample.expected.turns ? { turns: Object.fromEntries(Object.entries(sample.expected.turns).map(([turn, calls]) => [turn, typedAll(calls)])) } : {}),
        },
        tools: sample.tools.map((t) => references.get(toolKey(t))!),
        meta: { ...sample.meta, lineage: [...sample.meta.lineage, entry ?? ctx.lineage()] },
      };
    },
    finish: (state, ctx) => {
      ToolLibrary.of(state.documented.values()).save(ctx.runDir);
      ctx.report('toolDocumentation', state.report);
    },
  });
}
