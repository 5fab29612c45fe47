import type { ArgValue, Call, Json, PropertySchema, ToolSpec } from '../../core/records.ts';
import type { Rng } from '../../core/rng.ts';
import { nameTokens } from '../../prompts/nestools-names.ts';
import { basePythonType, pythonTypeOfJson } from '../../prompts/nestools-python-types.ts';
import { isPythonIdentifier, returnFields, type SampledChain } from '../../prompts/nestools-render-program.ts';
import { preparedMatch, prepareField, type PreparedField } from './edge-match.ts';

/**
 * Nested call chains sampled over a real tool library (Seal-Tools) for the offline generator. Two
 * tools are linked where a return field of one can feed a parameter of the other: the same type,
 * and a matching name or description. Edges stay inside a top-level domain, so a
 * chain reads as one scenario.
 */

export interface ChainEdge {
  from: string;
  field: string;
  to: string;
  param: string;
  score: number;
}

export interface ChainShapeOptions {
  /** Relative weights of chain lengths (index = number of calls). Default: like the released set. */
  lengthWeights?: Record<number, number>;
  /** Share of chains built without nesting. */
  nonNestedShare?: number;
  /** Share of nested chains of three or more calls that start with two producers feeding one call. */
  fanInShare?: number;
}

const DEFAULT_LENGTHS: Record<number, number> = { 2: 9, 3: 80, 4: 6, 5: 5 };
const MIN_SCORE = 0.5;

function topDomain(tool: ToolSpec): string {
  return (tool.domain ?? '').split('/')[0];
}

function pythonType(property: PropertySchema | undefined): string {
  const type = Array.isArray(property?.type) ? property?.type[0] : property?.type;
  return pythonTypeOfJson(type ?? 'any');
}

export class ChainGraph {
  readonly tools: ToolSpec[];
  private readonly byName = new Map<string, ToolSpec>();
  private readonly outgoing = new Map<string, ChainEdge[]>();
  private readonly incoming = new Map<string, ChainEdge[]>();
  private readonly byField = new Map<string, ToolSpec[]>();
  private readonly byDomain = new Map<string, ToolSpec[]>();
  edgeCount = 0;

  /** Tools whose names cannot be Python identifiers are left out: a stub must be able to name them. */
  constructor(library: ToolSpec[]) {
    this.tools = library.filter(
      (tool) => isPythonIdentifier(tool.name) && [...Object.keys(tool.parameters.properties), ...returnFields(tool)].every(isPythonIdentifier) && returnFields(tool).length > 0,
    );
    for (const tool of this.tools) {
      this.byName.set(tool.name, tool);
      push(this.byField, tool.domain ?? '', tool);
      push(this.byDomain, topDomain(tool), tool);
    }
    for (const group of this.byDomain.values()) this.linkWithin(group);
  }

  private linkWithin(group: ToolSpec[]): void {
    const prepared = (properties: Record<string, PropertySchema>) =>
      Object.entries(properties).map(([name, property]) => ({ name, type: basePythonType(pythonType(property)), text: prepareField({ name, description: property.description ?? '' }) }));
    // Parameters by type, so each return field meets only the parameters it could feed.
    const inputsByType = new Map<string, { tool: string; name: string; text: PreparedField }[]>();
    for (const consumer of group) for (const input of prepared(consumer.parameters.properties)) push(inputsByType, input.type, { tool: consumer.name, ...input });
    for (const producer of group) {
      const edges: ChainEdge[] = [];
      for (const output of prepared(producer.returns.properties)) {
        // Same type only (the paper's generation prompt asks for identical types along an edge).
        for (const input of inputsByType.get(output.type) ?? []) {
          if (input.tool === producer.name) continue;
          const score = preparedMatch(output.text, input.text);
          if (score >= MIN_SCORE) edges.push({ from: producer.name, field: output.name, to: input.tool, param: input.name, score });
        }
      }
      this.outgoing.set(producer.name, edges);
      for (const edge of edges) push(this.incoming, edge.to, edge);
      this.edgeCount += edges.length;
    }
  }

  edgesFrom(tool: string): ChainEdge[] {
    return this.outgoing.get(tool) ?? [];
  }

  /** Tools of the field (`Domain/Subdomain`), else of its domain, else all; producers preferred. */
  private startCandidates(field: string): ToolSpec[] {
    // Tools two links deep come first: a chain can start there and still nest twice.
    const twoDeep = (tool: ToolSpec) => this.edgesFrom(tool.name).some((e) => this.edgesFrom(e.to).some((next) => next.to !== tool.name));
    for (const pool of [this.byField.get(field), this.byDomain.get(field.split('/')[0]), this.tools]) {
      for (const test of [twoDeep, (tool: ToolSpec) => this.edgesFrom(tool.name).length > 0]) {
        const producers = (pool ?? []).filter(test);
        if (producers.length) return producers;
      }
    }
    return this.tools;
  }

  /** A chain for the field; deterministic for the same rng state. */
  sample(field: string, rng: Rng, options: ChainShapeOptions = {}): SampledChain {
    const weights = options.lengthWeights ?? DEFAULT_LENGTHS;
    const length = weightedPick(weights, rng);
    const nested = !rng.chance(options.nonNestedShare ?? 0.17);
    const fanIn = nested && length >= 3 && rng.chance(options.fanInShare ?? 0.12) ? this.fanInStart(field, rng) : undefined;
    const start = fanIn?.[0].tool ?? rng.pick(this.startCandidates(field));
    const chain: { tool: ToolSpec; args: Record<string, ArgValue> }[] = fanIn ?? [{ tool: start, args: {} }];
    const used = new Set(chain.map((link) => link.tool.name));
    while (chain.length < length) {
      // Extending from the newest call deepens the chain; from an earlier one it fans out.
      const fromLast = nested ? this.extensions([chain[chain.length - 1].tool], used) : [];
      const options = nested ? (fromLast.length && rng.chance(0.6) ? fromLast : this.extensions(chain.map((c) => c.tool), used)) : [];
      if (options.length) {
        // Prefer a tool that can itself feed another, so chains can grow deeper than one link.
        const onward = options.filter((e) => this.edgesFrom(e.to).some((next) => !used.has(next.to) && next.to !== e.to));
        const edge = rng.pick(onward.length && rng.chance(0.7) ? onward : options);
        const tool = this.byName.get(edge.to)!;
        const args: Record<string, ArgValue> = { [edge.param]: { $ref: `call_${chain.findIndex((c) => c.tool.name === edge.from)}.${edge.field}` } };
        // Sometimes a second earlier call feeds another parameter too (fan-in).
        for (const [i, link] of chain.entries()) {
          const extra = this.edgesFrom(link.tool.name).find((e) => e.to === tool.name && !(e.param in args));
          if (extra && link.tool.name !== edge.from && rng.chance(0.8)) args[extra.param] = { $ref: `call_${i}.${extra.field}` };
        }
        chain.push({ tool, args });
        used.add(tool.name);
        continue;
      }
      const pool = (this.byField.get(start.domain ?? '') ?? []).concat(this.byDomain.get(topDomain(start)) ?? []).filter((tool) => !used.has(tool.name));
      if (!pool.length) break;
      const tool = rng.pick(pool);
      chain.push({ tool, args: {} });
      used.add(tool.name);
    }
    const calls: Call[] = chain.map((link, i) => ({ id: `call_${i}`, tool: link.tool.name, arguments: fillArguments(link.tool, link.args, rng) }));
    return { tools: chain.map((link) => link.tool), calls };
  }

  /**
   * Two producers feeding two parameters of one consumer (1→3, 2→3), from the field's domain when
   * it has such a consumer.
   */
  private fanInStart(field: string, rng: Rng): { tool: ToolSpec; args: Record<string, ArgValue> }[] | undefined {
    const domain = field.split('/')[0];
    const consumers = [...this.incoming.entries()].filter(
      ([name, edges]) => topDomain(this.byName.get(name)!) === domain && new Set(edges.map((e) => e.from)).size >= 2 && new Set(edges.map((e) => e.param)).size >= 2,
    );
    if (!consumers.length) return undefined;
    const [name, edges] = rng.pick(consumers);
    const first = rng.pick(edges);
    const partners = edges.filter((e) => e.from !== first.from && e.param !== first.param && e.from !== name);
    // The first edge drawn may have no partner (every other edge shares its producer or parameter).
    if (!partners.length) return undefined;
    const second = rng.pick(partners);
    return [
      { tool: this.byName.get(first.from)!, args: {} },
      { tool: this.byName.get(second.from)!, args: {} },
      { tool: this.byName.get(name)!, args: { [first.param]: { $ref: `call_0.${first.field}` }, [second.param]: { $ref: `call_1.${second.field}` } } },
    ];
  }

  private extensions(tools: ToolSpec[], used: Set<string>): ChainEdge[] {
    return tools.flatMap((tool) => this.edgesFrom(tool.name)).filter((edge) => !used.has(edge.to));
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function weightedPick(weights: Record<number, number>, rng: Rng): number {
  const entries = Object.entries(weights).map(([k, w]) => [Number(k), w] as const);
  let roll = rng.next() * entries.reduce((sum, [, w]) => sum + w, 0);
  for (const [value, weight] of entries) if ((roll -= weight) < 0) return value;
  return entries[entries.length - 1][0];
}

/** Required parameters get a value; optional ones now and then. Nested arguments stay as given. */
function fillArguments(tool: ToolSpec, nested: Record<string, ArgValue>, rng: Rng): Record<string, ArgValue> {
  const args: Record<string, ArgValue> = {};
  for (const [name, property] of Object.entries(tool.parameters.properties)) {
    if (name in nested) args[name] = nested[name];
    else if (tool.parameters.required.includes(name) || rng.chance(0.25)) args[name] = templateValue(name, property, rng);
  }
  return args;
}

const NAMES = ['Alice Chen', 'Marco Rossi', 'Priya Nair', 'John Smith', 'Sofia Garcia', 'Liam Novak'];
const PLACES = ['Berlin', 'Toronto', 'Nairobi', 'Lisbon', 'Osaka', 'Denver', 'Melbourne'];

/**
 * A plainly made-up value for a parameter: the first example its description gives (`(e.g., DNA,
 * fingerprints)`), else one shaped by its type and name.
 */
export function templateValue(name: string, property: PropertySchema, rng: Rng): Json {
  const type = pythonType(property);
  const words = nameTokens(name);
  if (type === 'int') return words.includes('year') ? rng.int(2015, 2025) : rng.int(1, 120);
  if (type === 'float') return rng.int(10, 9990) / 10;
  if (type === 'bool') return rng.chance(0.5);
  if (type === 'list') return [`${words.join(' ')} one`, `${words.join(' ')} two`];
  if (type === 'dict') return { [words[0] ?? 'key']: 'value' };
  const example = exampleIn(property.description ?? '');
  if (example) return example;
  if (words.includes('date') || words.includes('day')) return `2024-${String(rng.int(1, 12)).padStart(2, '0')}-${String(rng.int(1, 28)).padStart(2, '0')}`;
  if (words.includes('time')) return `${String(rng.int(8, 18)).padStart(2, '0')}:${rng.pick(['00', '15', '30', '45'])}`;
  if (words.includes('email')) return `${rng.pick(NAMES).split(' ')[0].toLowerCase()}@example.com`;
  if (words.includes('id') || words.includes('code') || words.includes('number')) return `${(words[0] ?? 'x').slice(0, 3).toUpperCase()}-${rng.int(100, 999)}`;
  if (words.some((w) => ['name', 'author', 'user', 'patient', 'customer', 'person', 'owner'].includes(w)) && !words.includes('file')) return rng.pick(NAMES);
  if (words.some((w) => ['location', 'city', 'place', 'region', 'country', 'destination', 'origin', 'address'].includes(w))) return rng.pick(PLACES);
  return `${words.join(' ')} ${String.fromCharCode(65 + rng.int(0, 5))}`;
}

/** `"... (e.g., DNA, fingerprints)"` → `DNA`. */
function exampleIn(description: string): string | undefined {
  const at = description.search(/\(e\.g\.,?\s/i);
  if (at === -1) return undefined;
  const inside = description.slice(at).replace(/^\(e\.g\.,?\s*/i, '').split(')')[0];
  const first = inside.split(/,|\bor\b/)[0].trim().replace(/^['"]|['"]$/g, '');
  return first && first.length <= 40 ? first : undefined;
}
