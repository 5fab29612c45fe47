import type { Json } from '../../core/records.ts';
import type { DocField } from '../../prompts/nestools-docstring.ts';
import type { FunctionStub } from './parse-program.ts';

/**
 * A stub's signature and docstring read together: the parameters the function accepts (from the
 * signature: Python decides what a call may pass), with types, descriptions and required-ness from
 * the docstring, and the named return fields the unpack targets must match.
 */

export interface SignatureParam {
  name: string;
  /** Python type as written (docstring first, else the annotation); empty when neither gives one. */
  type: string;
  description: string;
  required: boolean;
  default?: Json;
  keywordOnly: boolean;
}

export interface ToolSignature {
  name: string;
  description: string;
  params: SignatureParam[];
  returns: DocField[];
  /** Disagreements between signature and docstring (warnings). */
  mismatches: string[];
  /** What makes the docstring unusable (errors). */
  docProblems: string[];
}

export function signatureOf(stub: FunctionStub): ToolSignature {
  const doc = stub.docstring;
  const mismatches: string[] = [];
  const docProblems = doc ? doc.problems.slice() : ['it has no docstring (description, parameters and Returns are read from it)'];
  if (doc && !doc.description) docProblems.push('its docstring has no description line');
  const docParams = new Map((doc?.params ?? []).map((p) => [p.name, p]));
  const params: SignatureParam[] = stub.params.map((param) => {
    const documented = docParams.get(param.name);
    if (doc && !documented) mismatches.push(`parameter "${param.name}" is not in the docstring`);
    let required = !param.hasDefault;
    if (documented?.section === 'required') {
      if (param.hasDefault) mismatches.push(`parameter "${param.name}" is listed as required but has a default`);
      required = true;
    } else if (documented?.section === 'optional') {
      if (!param.hasDefault) mismatches.push(`parameter "${param.name}" is listed as optional but has no default`);
      required = false;
    }
    const out: SignatureParam = {
      name: param.name,
      type: documented?.type || param.annotation || '',
      description: documented?.description ?? '',
      required,
      keywordOnly: param.keywordOnly,
    };
    if (param.default !== undefined) out.default = param.default;
    return out;
  });
  const inSignature = new Set(stub.params.map((p) => p.name));
  for (const name of docParams.keys()) if (!inSignature.has(name)) mismatches.push(`the docstring lists "${name}", which the signature does not take`);
  const returns = doc?.returns ?? [];
  const seen = new Set<string>();
  for (const field of returns) {
    if (seen.has(field.name)) docProblems.push(`return field "${field.name}" is listed twice`);
    seen.add(field.name);
  }
  return { name: stub.name, description: doc?.description ?? '', params, returns, mismatches, docProblems };
}
