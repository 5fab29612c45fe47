import { elementPythonType, basePythonType, literalFits, pythonTypeOfValue, typesCompatible } from '../../prompts/nestools-python-types.ts';
import { IssueList, type CheckOutcome } from './issues.ts';
import type { ArgExpr, CallStatement, Callee, FunctionStub, ParsedProgram } from './parse-program.ts';
import { signatureOf, type ToolSignature } from './signature.ts';

/**
 * The paper's automatic check of a generated program (§3.3: format check and AST consistency):
 * every call names a stub, passes what its signature accepts, fills every required parameter,
 * unpacks exactly the declared returns into plain variables, and reads only variables an earlier
 * call assigned. A producer's return type that does not fit the parameter it feeds is a warning.
 */

/** Names Python provides without an import: calling one in main() is not a tool call. */
const BUILTINS = new Set(
  (
    'abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex delattr dict dir divmod ' +
    'enumerate eval exec filter float format frozenset getattr globals hasattr hash help hex id input int isinstance issubclass iter len ' +
    'list locals map max memoryview min next object oct open ord pow print property range repr reversed round set setattr slice sorted ' +
    'staticmethod str sum super tuple type vars zip'
  ).split(' '),
);

export function isBuiltin(name: string): boolean {
  return BUILTINS.has(name);
}

/** What a variable holds: the return field of the call that assigned it. */
export interface Binding {
  callIndex: number;
  field: string;
  /** Python type of that field (empty when unknown). */
  type: string;
}

export interface ProgramCheck extends CheckOutcome {
  /** Signatures of the stubs, by name (the last definition wins, as in Python). */
  signatures: Map<string, ToolSignature>;
}

export interface CheckProgramOptions {
  strict?: boolean;
}

export function checkProgram(program: ParsedProgram, options: CheckProgramOptions = {}): ProgramCheck {
  const issues = new IssueList();
  const signatures = new Map<string, ToolSignature>();
  const done = () => ({ ...issues.outcome(options.strict), signatures });

  if (program.syntaxErrors.length) {
    for (const error of program.syntaxErrors.slice(0, 3)) issues.error('syntax_error', error.message, error.line);
    return done();
  }
  const stubs = new Map<string, FunctionStub>();
  for (const stub of program.functions) {
    if (stubs.has(stub.name)) issues.error('duplicate_function', `function ${stub.name} is defined twice (lines ${stubs.get(stub.name)!.line} and ${stub.line})`, stub.line);
    stubs.set(stub.name, stub);
    signatures.set(stub.name, signatureOf(stub));
  }
  for (const extra of program.extras) issues.warn('extra_code', `top-level code that is neither a function nor the __main__ guard: ${extra.text}`, extra.line);
  if (!program.main) {
    issues.error('no_main', 'there is no top-level "def main():" holding the call chain');
    return done();
  }

  const bindings = new Map<string, Binding>();
  const called = new Set<string>();
  let callCount = 0;
  for (const statement of program.main.statements) {
    if (statement.kind === 'other') {
      reportCallee(statement.callee, statement.line, issues, stubs, `main() may hold only calls; found ${statement.what}`);
      continue;
    }
    const index = callCount++;
    const signature = checkCallee(statement, issues, stubs, signatures);
    if (signature && !called.has(signature.name)) {
      called.add(signature.name);
      checkStub(stubs.get(signature.name)!, signature, issues);
    }
    checkArguments(statement, signature, bindings, issues);
    bindTargets(statement, signature, index, bindings, issues);
  }
  if (callCount === 0) issues.error('no_calls', 'main() calls no function', program.main.line);
  if (!program.task) issues.error('no_task', 'main() has no "# <task in natural language>" comment after its calls', program.main.lastLine);
  for (const stub of stubs.values()) if (!called.has(stub.name)) issues.warn('unused_function', `${stub.name} is defined but main() never calls it`, stub.line);
  return done();
}

function reportCallee(callee: Callee | undefined, line: number, issues: IssueList, stubs: Map<string, FunctionStub>, fallback: string): void {
  if (callee?.kind === 'name' && isBuiltin(callee.name) && !stubs.has(callee.name)) issues.error('builtin_call', `${fallback}; ${callee.name}() is a Python builtin, not a tool`, line);
  else if (callee?.kind === 'access') issues.error('subscript_or_attribute', `${fallback}; ${callee.text} reads an attribute or an index`, line);
  else issues.error('unsupported_syntax', fallback, line);
}

function checkCallee(statement: CallStatement, issues: IssueList, stubs: Map<string, FunctionStub>, signatures: Map<string, ToolSignature>): ToolSignature | undefined {
  const { callee, line } = statement;
  if (callee.kind === 'access') {
    issues.error('subscript_or_attribute', `${callee.text}(…) calls through an attribute or an index; call a tool function by its name`, line);
    return undefined;
  }
  if (callee.kind === 'other') {
    issues.error('unsupported_syntax', `${callee.text}(…) is not a call of a named function`, line);
    return undefined;
  }
  if (stubs.has(callee.name)) return signatures.get(callee.name);
  if (isBuiltin(callee.name)) issues.error('builtin_call', `${callee.name}() is a Python builtin, not a tool; main() may call only the functions defined above`, line);
  else issues.error('unknown_function', `${callee.name}() is not defined in the program`, line);
  return undefined;
}

function checkStub(stub: FunctionStub, signature: ToolSignature, issues: IssueList): void {
  for (const problem of signature.docProblems) issues.error('bad_docstring', `${stub.name}: ${problem}`, stub.line);
  for (const mismatch of signature.mismatches) issues.warn('docstring_mismatch', `${stub.name}: ${mismatch}`, stub.line);
  if (stub.variadic.length) issues.error('unsupported_syntax', `${stub.name} takes ${stub.variadic.join(', ')}; a tool needs named parameters`, stub.line);
}

function checkArguments(statement: CallStatement, signature: ToolSignature | undefined, bindings: Map<string, Binding>, issues: IssueList): void {
  const { line } = statement;
  for (const arg of statement.unsupportedArgs) issues.error('unsupported_syntax', `${arg} in the arguments of ${statement.text}; pass each argument by itself`, line);
  const name = signature?.name ?? (statement.callee.kind === 'name' ? statement.callee.name : 'the call');
  const filled = new Map<string, ArgExpr>();
  const positionalParams = signature?.params.filter((p) => !p.keywordOnly) ?? [];
  statement.positional.forEach((arg, i) => {
    if (signature && i >= positionalParams.length) {
      if (i === positionalParams.length) {
        issues.error('too_many_positional', `${name}() takes ${positionalParams.length} positional argument${positionalParams.length === 1 ? '' : 's'} but ${statement.positional.length} were given`, line);
      }
    } else if (signature) filled.set(positionalParams[i].name, arg);
  });
  for (const keyword of statement.keywords) {
    if (signature && !signature.params.some((p) => p.name === keyword.name)) {
      issues.error('unknown_parameter', `${name}() has no parameter "${keyword.name}" (it takes ${signature.params.map((p) => p.name).join(', ') || 'none'})`, line);
    } else if (filled.has(keyword.name)) {
      issues.error('duplicate_argument', `${name}() gets "${keyword.name}" twice`, line);
    } else filled.set(keyword.name, keyword.value);
  }
  for (const arg of [...statement.positional, ...statement.keywords.map((k) => k.value)]) checkExpr(arg, bindings, issues);
  if (!signature) return;
  for (const param of signature.params) {
    const arg = filled.get(param.name);
    if (!arg) {
      if (param.required) issues.error('missing_required', `${name}() needs its required parameter "${param.name}"`, line);
      continue;
    }
    checkTypes(arg, param.type, `${name}(${param.name}=…)`, bindings, issues, line);
  }
}

/** Variables must be assigned before use; calls, indexing and other expressions have no place. */
function checkExpr(arg: ArgExpr, bindings: Map<string, Binding>, issues: IssueList): void {
  switch (arg.kind) {
    case 'variable':
      if (!bindings.has(arg.name)) issues.error('undefined_variable', `"${arg.name}" is used before any call assigns it`, arg.line);
      break;
    case 'list':
      for (const item of arg.items) checkExpr(item, bindings, issues);
      break;
    case 'dict':
      for (const [, value] of arg.entries) checkExpr(value, bindings, issues);
      break;
    case 'access':
      issues.error('subscript_or_attribute', `${arg.text} reads an index or an attribute; pass the whole variable a call returned`, arg.line);
      break;
    case 'call':
      if (isBuiltin(arg.callee)) issues.error('builtin_call', `${arg.text} calls the Python builtin ${arg.callee}(); pass values and variables only`, arg.line);
      else issues.error('unsupported_syntax', `${arg.text} nests a call inside an argument; assign its result to a variable first`, arg.line);
      break;
    case 'unsupported':
      issues.error('unsupported_syntax', `${arg.what} cannot be an argument; pass a literal or a variable`, arg.line);
      break;
  }
}

function checkTypes(arg: ArgExpr, declared: string, where: string, bindings: Map<string, Binding>, issues: IssueList, line: number): void {
  if (arg.kind === 'literal') {
    if (!literalFits(arg.value, declared)) issues.warn('literal_type_mismatch', `${where} gets ${JSON.stringify(arg.value)} (${pythonTypeOfValue(arg.value)}) for a ${declared} parameter`, line);
  } else if (arg.kind === 'variable') {
    const binding = bindings.get(arg.name);
    if (binding && !typesCompatible(binding.type, declared)) {
      issues.warn('type_mismatch', `${where} gets ${arg.name}, the ${binding.type} "${binding.field}" of call ${binding.callIndex + 1}, for a ${declared} parameter`, line);
    }
  } else if (arg.kind === 'list' || arg.kind === 'dict') {
    const container = arg.kind === 'list' ? 'list' : 'dict';
    if (!typesCompatible(container, declared)) issues.warn('literal_type_mismatch', `${where} gets a ${container} for a ${declared} parameter`, line);
    const element = basePythonType(declared) === 'list' ? elementPythonType(declared) : undefined;
    if (arg.kind === 'list' && element) for (const item of arg.items) checkTypes(item, element, where, bindings, issues, line);
  }
}

function bindTargets(statement: CallStatement, signature: ToolSignature | undefined, callIndex: number, bindings: Map<string, Binding>, issues: IssueList): void {
  const { line, targets } = statement;
  if (statement.targetProblem) {
    const { code, text } = statement.targetProblem;
    issues.error(code, code === 'subscript_or_attribute' ? `the result goes into ${text}; unpack it into plain variables` : `cannot unpack into ${text}`, line);
  }
  if (signature && !statement.targetProblem && signature.docProblems.length === 0 && targets.length !== signature.returns.length) {
    const declared = signature.returns.length;
    issues.error(
      'arity_mismatch',
      `${signature.name}() declares ${declared} return value${declared === 1 ? '' : 's'} (${signature.returns.map((r) => r.name).join(', ') || 'none'}) but the call unpacks ${targets.length}`,
      line,
    );
  }
  targets.forEach((target, i) => {
    const field = signature?.returns[i];
    bindings.set(target, { callIndex, field: field?.name ?? `#${i}`, type: field?.type ?? '' });
  });
}
