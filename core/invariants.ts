import { HashedStringSet } from './collections.ts';
import { ArgumentValidator, describeProblems, type SchemaProblem } from './json-schema.ts';
import { isJsonObject, isRef, type ArgValue, type Call, type Json, type Sample, type ToolSpec } from './records.ts';
import { rangeProblems, saysOvernight } from './value-ranges.ts';

/**
 * What every sample of every version must hold, whatever benchmark it comes from: its id is its
 * own; the tools it offers are the version's, one tool to a name (case aside); every call names a
 * tool the sample offers, with arguments that tool's parameters schema accepts (type, enum,
 * format, pattern, range, required, no unknown names); and a range given as two arguments
 * (`start_date` / `end_date`, `from` / `to`, `min` / `max`, …) does not end before it starts.
 * Each broken rule is a finding: the check, the sample, where in it, what is wrong. Of the
 * samples it has seen the checker keeps only their ids, so a version streams through it.
 */

export const INVARIANT_CHECKS = ['sample-id-unique', 'tool-names-unique', 'tool-exists', 'argument-schema', 'range-order'] as const;
export type InvariantCheck = (typeof INVARIANT_CHECKS)[number];

export interface Finding {
  check: string;
  /** The sample's id; empty for a finding about the version's tool library. */
  sampleId: string;
  /** `expected.calls[0] BookHotel`, `tools[2] GetWeather`, `tools.jsonl` … */
  where: string;
  problem: string;
}

/** One line: `check at where: problem`. */
export function describeFinding(finding: Finding): string {
  return `${finding.check} at ${finding.where}: ${finding.problem}`;
}

export interface InvariantOptions {
  validator?: ArgumentValidator;
  /**
   * Names a sample may offer that its recipe leaves out of the version's tool library on purpose
   * (MTU's hard set renames a tool to a meaningless name in one sample): not a `tool-exists` finding.
   */
  offeredOutsideLibrary?: (sample: Sample) => readonly string[];
}

/** What the version's library makes of an offered tool. */
interface LibraryVerdict {
  problems: [InvariantCheck, string][];
  /** The library's tool of that name, when the offered one has its parameters. */
  known: ToolSpec | undefined;
}

/** A call and where it is in its sample. */
export interface LocatedCall {
  call: Call;
  where: string;
}

export class SampleInvariants {
  /** What each check looked at so far (samples, tools offered, calls, ranges compared), to read findings against. */
  readonly checked: Record<InvariantCheck, number> = { 'sample-id-unique': 0, 'tool-names-unique': 0, 'tool-exists': 0, 'argument-schema': 0, 'range-order': 0 };
  private readonly byName = new Map<string, ToolSpec>();
  private readonly byFolded = new Map<string, ToolSpec[]>();
  /** Checkers of parameter schemas by object: a tool of the library or of samples made alike (never edited) is compiled once. */
  private readonly checkers = new WeakMap<object, (args: unknown) => SchemaProblem[]>();
  /**
   * Without the library (`null`): the tools offered, by name, one of each shape (and the parameter
   * objects already seen under a name), to check against the library once it is known.
   */
  private readonly deferred: { byParameters: WeakMap<object, Set<string>>; byName: Map<string, ToolSpec[]>; callsNotOffered: boolean } | null;
  /** Every sample id met (a whole version's worth, so kept as hashes). */
  private readonly ids = new HashedStringSet();
  private readonly validator: ArgumentValidator;
  /** By tool object: its name in lower case, and what the library makes of it (records are never edited in place). */
  private readonly folded = new WeakMap<ToolSpec, string>();
  private readonly verdicts = new WeakMap<ToolSpec, LibraryVerdict>();

  /** `library`: the version's tool library; null: not known yet, the checks that need it are made by `holdsWith`. */
  constructor(
    library: readonly ToolSpec[] | null,
    private readonly options: InvariantOptions = {},
  ) {
    // A version may hold thousands of distinct tools: the compiled schemas kept are bounded.
    this.validator = options.validator ?? new ArgumentValidator({ maxCompiled: 1000 });
    this.deferred = library ? null : { byParameters: new WeakMap(), byName: new Map(), callsNotOffered: false };
    for (const tool of library ?? []) {
      if (!this.byName.has(tool.name)) this.byName.set(tool.name, tool);
      const folded = tool.name.toLowerCase();
      this.byFolded.set(folded, [...(this.byFolded.get(folded) ?? []), tool]);
    }
  }

  /** Tools of the library that share one name, exactly or case aside (`GetWeather`, `getweather`). */
  libraryFindings(): Finding[] {
    const findings: Finding[] = [];
    for (const tools of this.byFolded.values()) {
      if (tools.length < 2) continue;
      const names = [...new Set(tools.map((t) => t.name))];
      const problem = names.length === 1 ? `${tools.length} tools are named ${JSON.stringify(names[0])}` : `${names.map((n) => JSON.stringify(n)).join(', ')} are one name, case aside`;
      findings.push({ check: 'tool-names-unique', sampleId: '', where: `tools.jsonl ${names[0]}`, problem });
    }
    return findings;
  }

  /** Every rule `sample` breaks. Remembers its id, so a later sample with the same id is a finding. */
  check(sample: Sample): Finding[] {
    const findings: Finding[] = [];
    const add = (check: InvariantCheck, where: string, problem: string) => findings.push({ check, sampleId: sample.id, where, problem });

    this.checked['sample-id-unique']++;
    if (!this.ids.add(sample.id)) add('sample-id-unique', 'id', `another sample of the version has the id ${JSON.stringify(sample.id)}`);

    const offered = this.checkOffered(sample, add);
    // Whether the sample's words say a range runs overnight: read only when two times of day are compared.
    let overnight: boolean | undefined;
    const text = {
      get overnight() {
        return (overnight ??= saysOvernightIn(sample));
      },
    };
    const judged: Call[] = [];
    for (const { call, where: at } of callsOf(sample)) {
      // A call the sample holds twice (in its turn and among the expected calls) is judged once, where first met.
      if (judged.some((other) => other === call || (other.tool === call.tool && sameJson(other.arguments ?? null, call.arguments ?? null)))) continue;
      judged.push(call);
      const where = `${at} ${call.tool}`;
      this.checked['tool-exists']++;
      const tool = offered.get(call.tool);
      if (!tool) {
        const alike = [...offered.keys()].find((name) => name.toLowerCase() === call.tool.toLowerCase());
        // The words say whether the library has the tool: without it, known only at the end.
        if (this.deferred && !alike) this.deferred.callsNotOffered = true;
        const known = alike ? ` (it offers ${JSON.stringify(alike)}, one name case aside)` : this.byName.has(call.tool) ? ' (the version has a tool of that name, but the sample does not offer it)' : '';
        add('tool-exists', where, `calls ${JSON.stringify(call.tool)}, which the sample's candidate list does not offer${known}`);
        continue;
      }
      const { literal, refPaths } = withoutRefs(call.arguments);
      this.checked['argument-schema']++;
      const problems = this.checkerOf(tool)(literal).filter((p) => !refPaths.some((ref) => p.path === ref || p.path.startsWith(`${ref}.`) || p.path.startsWith(`${ref}[`)) && !givenByReference(p, refPaths));
      // One finding per call: its problems together.
      if (problems.length) add('argument-schema', where, describeProblems(problems));
      const ranges = rangeProblems(literal, text);
      this.checked['range-order'] += ranges.judged;
      for (const range of ranges.problems) add('range-order', range.path ? `${where}: ${range.path}` : where, range.problem);
    }
    return findings;
  }

  /** The sample's candidate tools by name, after checking them against each other and the library (`outside`: the names the recipe leaves out of it). */
  private checkOffered(sample: Sample, add: (check: InvariantCheck, where: string, problem: string) => void, outsideNames = this.options.offeredOutsideLibrary?.(sample) ?? []): Map<string, ToolSpec> {
    const offered = new Map<string, ToolSpec>();
    const offeredFolded = new Map<string, string>();
    const outside = new Set(outsideNames);
    sample.tools.forEach((tool, i) => {
      const where = () => `tools[${i}] ${tool.name}`;
      const folded = this.foldedName(tool);
      this.checked['tool-names-unique']++;
      this.checked['tool-exists']++;
      const earlier = offeredFolded.get(folded);
      if (earlier === undefined) offeredFolded.set(folded, tool.name);
      else add('tool-names-unique', where(), earlier === tool.name ? `the candidate list offers ${JSON.stringify(tool.name)} twice` : `the candidate list offers ${JSON.stringify(earlier)} and ${JSON.stringify(tool.name)}, one name case aside`);
      if (!offered.has(tool.name)) offered.set(tool.name, tool);
      if (outside.has(tool.name)) return;
      if (this.deferred) return this.defer(tool);
      const verdict = this.libraryVerdict(tool, folded);
      for (const [check, problem] of verdict.problems) add(check, where(), problem);
      // The same parameters as the library's tool: its calls are checked against that tool's schema, compiled once.
      if (verdict.known && offered.get(tool.name) === tool) offered.set(tool.name, verdict.known);
    });
    return offered;
  }

  /** A tool's name in lower case, made once per tool object. */
  private foldedName(tool: ToolSpec): string {
    if (typeof tool !== 'object' || tool === null) return String((tool as { name?: unknown } | null)?.name).toLowerCase();
    let folded = this.folded.get(tool);
    if (folded === undefined) this.folded.set(tool, (folded = tool.name.toLowerCase()));
    return folded;
  }

  /**
   * What the library makes of an offered tool: the findings (without where) and, when the tool is
   * the library's or has its parameters, the library's tool. It depends on the tool alone, so it is
   * made once per tool object (the samples of a version offer the objects of one library).
   */
  private libraryVerdict(tool: ToolSpec, folded: string): LibraryVerdict {
    const kept = this.verdicts.get(tool);
    if (kept) return kept;
    const problems: [InvariantCheck, string][] = [];
    const alike = (this.byFolded.get(folded) ?? []).filter((t) => t.name !== tool.name).map((t) => JSON.stringify(t.name));
    if (alike.length) problems.push(['tool-names-unique', `the version's tool library also has ${[...new Set(alike)].join(', ')}, one name case aside`]);
    const known = this.byName.get(tool.name);
    let same: ToolSpec | undefined;
    if (!known) {
      if (!alike.length) problems.push(['tool-exists', `the candidate ${JSON.stringify(tool.name)} is not in the version's tool library`]);
    } else if (known !== tool && !sameShape(known.parameters, tool.parameters)) {
      problems.push(['tool-names-unique', `offers ${JSON.stringify(tool.name)} with parameters other than the version's tool of that name (two tools share one name)`]);
    } else same = known;
    const verdict = { problems, known: same };
    if (typeof tool === 'object' && tool !== null) this.verdicts.set(tool, verdict);
    return verdict;
  }

  /** The checker of a tool's parameters, compiled once per parameters object. */
  private checkerOf(tool: ToolSpec): (args: unknown) => SchemaProblem[] {
    const parameters = tool.parameters as object;
    let checker = this.checkers.get(parameters);
    if (!checker) this.checkers.set(parameters, (checker = this.validator.checker(parameters)));
    return checker;
  }

  /** Keeps an offered tool for the checks against the library (one of each name and shape). */
  private defer(tool: ToolSpec): void {
    const { byParameters, byName } = this.deferred!;
    const parameters = tool.parameters as object;
    const names = byParameters.get(parameters);
    if (names?.has(tool.name)) return;
    if (names) names.add(tool.name);
    else byParameters.set(parameters, new Set([tool.name]));
    const kept = byName.get(tool.name);
    if (!kept) byName.set(tool.name, [tool]);
    else if (!kept.some((other) => sameShape(other.parameters, parameters))) kept.push(tool);
  }

  /**
   * Without the library at first: whether the checks that need it find nothing, now that it is
   * known (the library's own names, and every tool offered against it). When they would, the
   * findings already made are not those the samples have: check them again with the library.
   */
  holdsWith(library: readonly ToolSpec[]): boolean {
    if (!this.deferred) throw new Error('holdsWith is for a check made without the library');
    if (this.deferred.callsNotOffered) return false;
    const withLibrary = new SampleInvariants(library, { ...this.options, validator: this.validator });
    if (withLibrary.libraryFindings().length) return false;
    for (const tools of this.deferred.byName.values()) {
      for (const tool of tools) {
        const findings: string[] = [];
        withLibrary.checkOffered({ tools: [tool] } as Sample, (check) => findings.push(check), []);
        if (findings.length) return false;
      }
    }
    return true;
  }
}

/** Keys of a parameter schema that document it without changing what a call must give. */
const DOCUMENTING = new Set(['description', 'default', 'examples', 'title']);

/**
 * Whether two parameter schemas ask the same of a call (names, types, enums, formats, required …):
 * equal as JSON, key order aside and the documenting keys of each schema left out (under
 * `properties` the keys are parameter names and all count). Compared in place, nothing built.
 */
export function sameShape(a: unknown, b: unknown): boolean {
  return sameJsonWith(a, b, sameShapeObjects);
}

const sameShapeObjects = (a: Record<string, unknown>, b: Record<string, unknown>): boolean =>
  sameEntries(a, b, DOCUMENTING, (key, x, y) => (key === 'properties' && isJsonObject(x) && isJsonObject(y) ? sameEntries(x, y, NONE, (_name, p, q) => sameShape(p, q)) : sameShape(x, y)));

/**
 * Whether two values are equal as JSON, objects compared by `sameObjects`: lists item by item (JSON
 * writes a missing item as null), primitives as JSON writes them.
 */
function sameJsonWith(a: unknown, b: unknown, sameObjects: (a: Record<string, unknown>, b: Record<string, unknown>) => boolean): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJsonWith(a[i] ?? null, b[i] ?? null, sameObjects)) return false;
    return true;
  }
  if (isJsonObject(a) && isJsonObject(b)) return sameObjects(a, b);
  if ((a !== null && typeof a === 'object') || (b !== null && typeof b === 'object')) return false;
  return jsonPrimitive(a) === jsonPrimitive(b);
}

const NONE: ReadonlySet<string> = new Set();

/** The entries of two objects, those set to undefined (which JSON leaves out) and the `skipped` keys aside, pairwise `same`. */
function sameEntries(a: Record<string, unknown>, b: Record<string, unknown>, skipped: ReadonlySet<string>, same: (key: string, x: unknown, y: unknown) => boolean): boolean {
  let count = 0;
  for (const key in a) {
    const x = a[key];
    if (x === undefined || skipped.has(key) || !Object.prototype.hasOwnProperty.call(a, key)) continue;
    const y = Object.prototype.hasOwnProperty.call(b, key) ? b[key] : undefined;
    if (y === undefined || !same(key, x, y)) return false;
    count++;
  }
  for (const key in b) if (b[key] !== undefined && !skipped.has(key) && Object.prototype.hasOwnProperty.call(b, key)) count--;
  return count === 0;
}

/** A primitive as JSON writes it: a number that is not finite as null. */
function jsonPrimitive(value: unknown): unknown {
  return typeof value === 'number' && !Number.isFinite(value) ? null : value;
}

/** A required argument the validator misses because a reference gives it. */
function givenByReference(problem: { path: string; message: string }, refPaths: readonly string[]): boolean {
  const missing = /^required argument "(.+)" is missing$/.exec(problem.message);
  return !!missing && refPaths.includes(problem.path ? `${problem.path}.${missing[1]}` : missing[1]);
}

/**
 * Whether the sample's words (every turn's content, thought and response) say a range runs
 * overnight: each text read on its own, as no wording of it spans a line break.
 */
function saysOvernightIn(sample: Sample): boolean {
  return sample.dialogue.some((turn) => saysOvernight(textOrEmpty(turn.content)) || saysOvernight(textOrEmpty(turn.thought)) || saysOvernight(textOrEmpty(turn.response)));
}

/** A text as a list's `join` writes it: nothing for a missing one. */
function textOrEmpty(value: unknown): string {
  return value === undefined || value === null ? '' : String(value);
}

/**
 * Whether two values have the same JSON text once object keys are sorted (`stableStringify`):
 * equal key order aside, keys set to undefined left out, undefined in a list and numbers that
 * are not finite as null. Compared in place, nothing built.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  return sameJsonWith(a, b, sameJsonObjects);
}

const sameJsonObjects = (a: Record<string, unknown>, b: Record<string, unknown>): boolean => sameEntries(a, b, NONE, (_key, x, y) => sameJson(x, y));

/**
 * Every call the sample holds, with where: the dialogue's turns, then the expected calls (`calls`,
 * `turns`, and any other list of calls a benchmark keeps there, such as accepted alternatives).
 */
export function callsOf(sample: Sample): LocatedCall[] {
  const found: LocatedCall[] = [];
  sample.dialogue.forEach((turn, t) => turn.calls?.forEach((call, c) => found.push({ call, where: `dialogue[${t}].calls[${c}]` })));
  const visit = (value: unknown, where: string, depth: number) => {
    if (depth > 3) return;
    if (isCall(value)) return void found.push({ call: value, where });
    if (Array.isArray(value)) value.forEach((item, i) => visit(item, `${where}[${i}]`, depth + 1));
    else if (isJsonObject(value)) for (const [key, inner] of Object.entries(value)) visit(inner, `${where}.${key}`, depth + 1);
  };
  visit(sample.expected, 'expected', 0);
  return found;
}

const NO_REFS: readonly string[] = Object.freeze([]);

/** Whether `withoutRefs` changes a value: a reference, or a list holding one (or a missing item, written as null). */
function needsStripping(value: ArgValue | undefined): boolean {
  if (value === undefined || isRef(value)) return true;
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) if (needsStripping(value[i])) return true;
  return false;
}

function isCall(value: unknown): value is Call {
  return isJsonObject(value) && typeof value.id === 'string' && typeof value.tool === 'string' && isJsonObject(value.arguments);
}

/** The arguments with every reference left out, and the paths where references were (`city`, `ids[1]`). */
function withoutRefs(args: Record<string, ArgValue>): { literal: Record<string, Json>; refPaths: readonly string[] } {
  // The common case: nothing to leave out, the arguments are checked as they are.
  if (!Object.values(args).some(needsStripping)) return { literal: args as Record<string, Json>, refPaths: NO_REFS };
  const refPaths: string[] = [];
  const strip = (value: ArgValue, path: string): Json | undefined => {
    if (isRef(value)) {
      refPaths.push(path);
      return undefined;
    }
    if (Array.isArray(value)) return value.map((item, i) => strip(item, `${path}[${i}]`) ?? null);
    return value as Json;
  };
  const literal: Record<string, Json> = {};
  for (const [name, value] of Object.entries(args)) {
    const stripped = strip(value, name);
    if (stripped !== undefined) literal[name] = stripped;
  }
  return { literal, refPaths };
}
