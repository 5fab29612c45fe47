import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDocstring } from '../prompts/nestools-docstring.ts';
import { checkProgram } from '../stages/nestools/check-program.ts';
import { programToChain } from '../stages/nestools/convert.ts';
import { extractCode, parseProgram, type CallStatement } from '../stages/nestools/parse-program.ts';

const fixtures = new URL('./fixtures/nestools/', import.meta.url);

function chainOf(answer: string) {
  const program = parseProgram(answer);
  const check = checkProgram(program, { strict: true });
  expect(check.errors).toEqual([]);
  return programToChain(program, check);
}

const STUB = `def plan(city: str, days: int, budget: float = -1.5, tags: list = None, flags: dict = None, urgent: bool = False, *, note: str = "a \\"quoted\\" note"):
    """Plan a trip.

    required parameters:
    city (str): where to go
    days (int): how long

    optional parameters:
    budget (float): most to spend
    tags (list): labels
    flags (dict): switches
    urgent (bool): hurry
    note (str): free text

    Returns:
    plan_id (str): the plan
    cost (float): what it costs
    """
    ...
`;

describe('program parser', () => {
  it('reads defaults, keyword-only parameters, and the docstring sections', () => {
    const program = parseProgram(`${STUB}\ndef main():\n    a, b = plan("Rome", 3)\n    # Plan 3 days in Rome.\n`);
    const stub = program.functions[0];
    expect(stub.params.map((p) => [p.name, p.hasDefault, p.default, p.keywordOnly])).toEqual([
      ['city', false, undefined, false],
      ['days', false, undefined, false],
      ['budget', true, -1.5, false],
      ['tags', true, undefined, false],
      ['flags', true, undefined, false],
      ['urgent', true, false, false],
      ['note', true, 'a "quoted" note', true],
    ]);
    expect(stub.docstring?.params.map((p) => [p.name, p.type, p.section])).toEqual([
      ['city', 'str', 'required'],
      ['days', 'int', 'required'],
      ['budget', 'float', 'optional'],
      ['tags', 'list', 'optional'],
      ['flags', 'dict', 'optional'],
      ['urgent', 'bool', 'optional'],
      ['note', 'str', 'optional'],
    ]);
    const chain = chainOf(`${STUB}\ndef main():\n    a, b = plan("Rome", 3)\n    # Plan 3 days in Rome.\n`);
    expect(chain.tools[0].parameters.properties.budget).toMatchObject({ type: 'number', default: -1.5 });
    expect(chain.tools[0].parameters.required).toEqual(['city', 'days']);
  });

  it('reads keyword arguments, negative numbers, nested lists and dicts, comments and blank lines', () => {
    const main = [
      'def main():',
      '',
      '    # first a plan',
      '    a, b = plan(',
      '        "Oslo",  # the city',
      '        -2,',
      '        budget=-1e3,',
      '        tags=["x", ["y", -0.5], ("t", True)],',
      '        flags={"a": [1, {"b": None}], 2: "two", "c": {"d": -3}},',
      '        note=\'it\\\'s \' "joined",',
      '    )',
      '',
      '    c, d = plan("Bergen", 1, tags=[a, "fixed"], flags={"from": b})',
      '    # Plan a trip to Oslo, then one to Bergen',
      '    # with the first plan attached.',
    ].join('\n');
    const chain = chainOf(`${STUB}\n${main}\n\nif __name__ == '__main__':\n    main()\n`);
    expect(chain.calls[0].arguments).toEqual({
      city: 'Oslo',
      days: -2,
      budget: -1000,
      tags: ['x', ['y', -0.5], ['t', true]],
      flags: { a: [1, { b: null }], '2': 'two', c: { d: -3 } },
      note: "it's joined",
    });
    expect(chain.calls[1].arguments).toEqual({ city: 'Bergen', days: 1, tags: [{ $ref: 'call_0.plan_id' }, 'fixed'], flags: { from: { $ref: 'call_0.cost' } } });
    expect(chain.task).toBe('Plan a trip to Oslo, then one to Bergen with the first plan attached.');
  });

  it('cuts the code out of an answer with text before and after the block', () => {
    const answer = readFileSync(new URL('llm-answer.md', fixtures), 'utf8');
    const { code, firstLine } = extractCode(answer);
    expect(code.startsWith('from typing import List')).toBe(true);
    expect(answer.split('\n')[firstLine - 1]).toBe('from typing import List');
    const chain = chainOf(answer);
    expect(chain.calls.map((c) => c.tool)).toEqual(['search_catalogue', 'reserve_items']);
    expect(chain.calls[1].arguments).toEqual({ record_ids: { $ref: 'call_0.record_ids' }, reader_card: 'LC-55012' });
    expect(chain.tools[1].parameters.properties.record_ids).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(chain.task).toBe('Find up to 5 catalogue records about medieval maps and reserve them on library card LC-55012.');
  });

  it('takes the block holding main() when an answer has several', () => {
    const answer = 'Example:\n```\nprint("hi")\n```\nThe program:\n```python\ndef main():\n    pass\n```\n';
    expect(extractCode(answer).code).toBe('def main():\n    pass');
  });

  it('reads an answer without a fence from its first line of code', () => {
    const program = parseProgram(`Answer:\n${readFileSync(new URL('wine-chain.py', fixtures), 'utf8')}`);
    expect(program.syntaxErrors).toEqual([]);
    expect(program.functions.map((f) => f.name)).toEqual(['get_top_selling_wine', 'get_product_origin', 'get_export_quantity']);
  });

  it('records what main() holds besides calls', () => {
    const program = parseProgram(`${STUB}\ndef main():\n    a, b = plan("Rome", 3)\n    for x in [1, 2]:\n        plan("Rome", x)\n    c = 1 + 2\n    return a\n    # t\n`);
    const kinds = program.main!.statements.map((s) => (s.kind === 'call' ? `call ${(s as CallStatement).targets.join(',')}` : s.kind));
    expect(kinds).toEqual(['call a,b', 'other', 'other']);
    expect(checkProgram(program).errors.map((e) => e.code)).toEqual(['unsupported_syntax', 'unsupported_syntax']);
  });
});

describe('docstring', () => {
  it('reads Google-style Args with wrapped descriptions', () => {
    const doc = parseDocstring(`Send a parcel.\n    Longer text.\n\n    Args:\n        address (str): where it goes,\n            including the postcode\n        weight (Dict[str, float], optional): grams\n\n    Returns:\n        tracking (str): the code\n    `);
    expect(doc.description).toBe('Send a parcel. Longer text.');
    expect(doc.params).toEqual([
      { name: 'address', type: 'str', description: 'where it goes, including the postcode', section: 'unsectioned' },
      { name: 'weight', type: 'Dict[str, float]', description: 'grams', section: 'unsectioned' },
    ]);
    expect(doc.returns).toEqual([{ name: 'tracking', type: 'str', description: 'the code' }]);
    expect(doc.problems).toEqual([]);
  });
});

describe('argument order', () => {
  it('refuses a positional argument after a keyword argument, as Python does', () => {
    const code = readFileSync(new URL('wine-chain.py', fixtures), 'utf8').replace('get_export_quantity(data2, "2023-10-08", data0)', 'get_export_quantity(data2, date="2023-10-08", data0)');
    const errors = checkProgram(parseProgram(code)).errors;
    expect(errors.map((e) => e.code)).toContain('unsupported_syntax');
    expect(errors.find((e) => e.code === 'unsupported_syntax')?.message).toContain('positional argument data0 after a keyword argument');
  });
});
