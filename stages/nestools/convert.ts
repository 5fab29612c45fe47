import { ToolSpec, type ArgValue, type Call, type PropertySchema } from '../../core/records.ts';
import { basePythonType, elementPythonType, jsonTypeOfPython } from '../../prompts/nestools-python-types.ts';
import type { ProgramCheck } from './check-program.ts';
import type { ArgExpr, CallStatement, ParsedProgram } from './parse-program.ts';
import type { ToolSignature } from './signature.ts';

/**
 * A checked program → the canonical chain: the called stubs as ToolSpecs (in order of first call),
 * the calls with `$ref` arguments (`data0` → `{ "$ref": "call_0.wine_name" }`) and the task.
 */

export interface ProgramChain {
  tools: ToolSpec[];
  calls: Call[];
  task: string;
}

export interface ConvertOptions {
  /** Set as each tool's domain. */
  domain?: string;
  provenance?: ToolSpec['provenance'];
}

/** Only for programs `checkProgram` passed: anything it would reject throws here. */
export function programToChain(program: ParsedProgram, check: ProgramCheck, options: ConvertOptions = {}): ProgramChain {
  if (!check.ok) throw new Error(`programToChain: the program has errors (${check.errors.map((e) => e.code).join(', ')})`);
  const statements = (program.main?.statements ?? []).filter((s): s is CallStatement => s.kind === 'call');
  const refs = new Map<string, string>();
  const tools: ToolSpec[] = [];
  const calls = statements.map((statement, index) => {
    const name = (statement.callee as { name: string }).name;
    const signature = check.signatures.get(name)!;
    if (!tools.some((tool) => tool.name === name)) tools.push(toolSpecOf(signature, options.provenance, options.domain));
    const positional = signature.params.filter((p) => !p.keywordOnly);
    const args: Record<string, ArgValue> = {};
    statement.positional.forEach((arg, i) => (args[positional[i].name] = argValue(arg, refs)));
    for (const keyword of statement.keywords) args[keyword.name] = argValue(keyword.value, refs);
    const id = `call_${index}`;
    statement.targets.forEach((target, i) => refs.set(target, `${id}.${signature.returns[i].name}`));
    return { id, tool: name, arguments: args };
  });
  return { tools, calls, task: program.task };
}

function argValue(arg: ArgExpr, refs: Map<string, string>): ArgValue {
  switch (arg.kind) {
    case 'literal':
      return arg.value;
    case 'variable':
      return { $ref: refs.get(arg.name)! };
    case 'list':
      return arg.items.map((item) => argValue(item, refs));
    case 'dict':
      return Object.fromEntries(arg.entries.map(([key, value]) => [key, argValue(value, refs)])) as ArgValue;
    default:
      throw new Error(`programToChain: unexpected ${arg.kind} argument in a checked program`);
  }
}

function propertyOf(type: string, description: string, extra: Partial<PropertySchema> = {}): PropertySchema {
  const property: PropertySchema = { type: jsonTypeOfPython(type || 'any'), description, ...extra };
  const element = type ? elementPythonType(type) : undefined;
  if (basePythonType(type) === 'list' && element) property.items = { type: jsonTypeOfPython(element) };
  return property;
}

/** The canonical ToolSpec of a checked stub. */
export function toolSpecOf(signature: ToolSignature, provenance?: ToolSpec['provenance'], domain?: string): ToolSpec {
  return ToolSpec.parse({
    name: signature.name,
    description: signature.description,
    parameters: {
      type: 'object',
      properties: Object.fromEntries(
        signature.params.map((p) => [p.name, propertyOf(p.type, p.description, p.default !== undefined ? { default: p.default } : {})]),
      ),
      required: signature.params.filter((p) => p.required).map((p) => p.name),
    },
    returns: {
      type: 'object',
      properties: Object.fromEntries(signature.returns.map((r) => [r.name, propertyOf(r.type, r.description)])),
      required: [],
    },
    ...(domain ? { domain } : {}),
    ...(provenance ? { provenance } : {}),
  });
}
