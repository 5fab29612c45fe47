import { readFileSync } from 'node:fs';
import { Bool, DataType, Field, Float64, List, Null, Struct, Utf8, vectorFromArray } from 'apache-arrow';

/**
 * Whether a JSONL file loads as one Arrow table the way columnar loaders (Hugging Face `datasets`,
 * pyarrow) need it, checked in two steps:
 *
 * 1. One schema is inferred for the whole file by pyarrow's JSON rules, stricter where `datasets`
 *    is: null (and an empty list's items) takes any type, numbers are one type, and every object of
 *    one column, across records and across the elements of a list, must have the same keys (a key
 *    missing from a later record, as `isAction` was, is a problem) and every value the same type (a
 *    string in one record and an object in another is a problem).
 * 2. The records are built into an apache-arrow table of that schema and read back: they must come
 *    back as they were (nothing dropped or coerced by the schema).
 *
 * apache-arrow's own `tableFromJSON` is not the inference here: it leaves out keys whose values are
 * null and refuses a list that is empty in one record and holds objects in another, both of which
 * pyarrow reads. Returns the problems found, empty when the file is loadable.
 */
export function arrowShapeProblems(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  if (!text.trim()) return [`${path}: empty file (a loader finds no records to infer a schema from)`];
  const records = text.split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line) as unknown);
  const problems: string[] = [];
  let shape = { kind: 'null' } as Shape;
  records.forEach((record, i) => {
    const report = (problem: string) => problems.length < 5 && problems.push(`${path}: record ${i + 1}: ${problem}`);
    shape = merge(shape, shapeOf(record, '', report), '', report);
  });
  if (problems.length) return problems;
  shape = shape as Shape;
  if (shape.kind !== 'struct') return [`${path}: records are not JSON objects`];
  const vector = vectorFromArray(records, arrowType(shape));
  for (let i = 0; i < records.length; i++) {
    const back = JSON.parse(JSON.stringify(vector.get(i)));
    if (JSON.stringify(back) !== JSON.stringify(records[i])) return [`${path}: record ${i + 1} reads back from its Arrow table as ${JSON.stringify(back).slice(0, 200)}`];
  }
  return [];
}

type Shape = { kind: 'null' | 'bool' | 'number' | 'string' } | { kind: 'list'; item: Shape } | { kind: 'struct'; fields: Map<string, Shape> };

/** A value's shape; the elements of a list must share one (`problem` is told where they do not). */
function shapeOf(value: unknown, path: string, problem: (message: string) => void): Shape {
  if (value === null) return { kind: 'null' };
  if (Array.isArray(value)) return { kind: 'list', item: value.reduce<Shape>((item, element, i) => merge(item, shapeOf(element, `${path}[${i}]`, problem), `${path}[${i}]`, problem), { kind: 'null' }) };
  if (typeof value === 'object') return { kind: 'struct', fields: new Map(Object.entries(value).map(([key, v]) => [key, shapeOf(v, `${path}${path ? '.' : ''}${key}`, problem)])) };
  if (typeof value === 'boolean') return { kind: 'bool' };
  if (typeof value === 'number') return { kind: 'number' };
  return { kind: 'string' };
}

function merge(a: Shape, b: Shape, path: string, problem: (message: string) => void): Shape {
  if (a.kind === 'null') return b;
  if (b.kind === 'null') return a;
  if (a.kind !== b.kind) {
    problem(`${path || '(root)'} is ${b.kind} where earlier records have ${a.kind}`);
    return a;
  }
  if (a.kind === 'list' && b.kind === 'list') return { kind: 'list', item: merge(a.item, b.item, `${path}[]`, problem) };
  if (a.kind === 'struct' && b.kind === 'struct') {
    const fields = new Map<string, Shape>();
    for (const key of a.fields.keys()) if (!b.fields.has(key)) problem(`${path}${path ? '.' : ''}${key} is missing (earlier records have it)`);
    for (const key of b.fields.keys()) if (!a.fields.has(key)) problem(`${path}${path ? '.' : ''}${key} appears (earlier records lack it)`);
    for (const [key, shape] of a.fields) fields.set(key, b.fields.has(key) ? merge(shape, b.fields.get(key)!, `${path}${path ? '.' : ''}${key}`, problem) : shape);
    for (const [key, shape] of b.fields) if (!fields.has(key)) fields.set(key, shape);
    return { kind: 'struct', fields };
  }
  return a;
}

function arrowType(shape: Shape): DataType {
  switch (shape.kind) {
    case 'null':
      return new Null();
    case 'bool':
      return new Bool();
    case 'number':
      return new Float64();
    case 'string':
      return new Utf8();
    case 'list':
      return new List(new Field('item', arrowType(shape.item), true));
    case 'struct':
      return new Struct([...shape.fields].map(([name, child]) => new Field(name, arrowType(child), true)));
  }
}
