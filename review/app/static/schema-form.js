// A form for a sample's calls, built from each tool's JSON Schema: one typed field per parameter
// (text, number, a choice for enums and booleans, JSON for arrays, objects and references), required
// ones marked. It only shapes what is sent; the server checks it as `review import` does and its
// problems come back by field id: `calls:<turn or "">:<index>[:<param>]`.
import { h } from './dom.js';

const NUMBER = /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function isRef(value) {
  return !!value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 1 && typeof value.$ref === 'string';
}

function typesOf(schema) {
  if (!schema || schema.type === undefined) return [];
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}

const FITS = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number',
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
};

/** How a parameter is edited: by its schema, unless the value it holds does not fit that (then as JSON). */
function modeOf(schema, value) {
  if (value !== undefined && isRef(value)) return 'json';
  if (schema?.enum) return value === undefined || schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value)) ? 'enum' : 'json';
  const types = typesOf(schema);
  if (types.length !== 1 || !FITS[types[0]]) return 'json';
  if (value !== undefined && !FITS[types[0]](value)) return 'json';
  return types[0] === 'integer' ? 'number' : types[0];
}

function rawOf(mode, value) {
  if (value === undefined) return '';
  if (mode === 'string') return value;
  if (mode === 'number' || mode === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** The value a field's text stands for; undefined leaves the argument out. Text that does not parse goes as text (the server says why it does not fit). */
function valueOf(mode, raw) {
  if (raw.trim() === '' && mode !== 'string') return undefined;
  if (mode === 'string') return raw === '' ? undefined : raw;
  if (mode === 'number') return NUMBER.test(raw.trim()) ? Number(raw.trim()) : raw;
  if (mode === 'boolean') return raw === 'true';
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function typeHint(schema, mode) {
  const types = typesOf(schema).join(' or ') || 'any';
  if (mode === 'enum') return `${types}, one of ${schema.enum.length}`;
  if (mode === 'json') return `${types} (JSON)`;
  return types;
}

/**
 * calls: the gold calls (a list, or {"<turn>": [calls]}); tools: the sample's candidate tools.
 * Returns { element, value(), showProblems(problems) → problems shown nowhere else, clearProblems() }.
 */
export function callsForm({ calls, tools }) {
  const perTurn = !Array.isArray(calls);
  const byName = new Map(tools.map((t) => [t.name, t]));
  // The model: per group, per call, the text of each field (and the argument order the call had).
  const groups = (perTurn ? Object.entries(calls ?? {}) : [['', calls]]).map(([turn, list]) => ({
    turn,
    calls: list.map((call) => modelOf(call)),
  }));

  function modelOf(call) {
    const schema = byName.get(call.tool)?.parameters?.properties ?? {};
    const fields = {};
    for (const [name, value] of Object.entries(call.arguments ?? {})) {
      const mode = modeOf(Object.hasOwn(schema, name) ? schema[name] : undefined, value);
      fields[name] = { mode, raw: rawOf(mode, value) };
    }
    return { id: call.id, tool: call.tool, order: Object.keys(call.arguments ?? {}), fields };
  }

  const element = h('div', { class: 'calls-form' });
  const render = () => {
    element.replaceChildren(
      h('div', { class: 'field-error', dataset: { error: 'calls' } }),
      ...groups.map((group) => renderGroup(group)),
    );
  };

  function renderGroup(group) {
    const legend = perTurn ? `Calls of turn ${group.turn} (assistant)` : 'Calls';
    return h(
      'fieldset',
      { class: 'call-group' },
      h('legend', { text: legend }),
      group.calls.map((call, index) => renderCall(group, call, index)),
      h('button', { type: 'button', class: 'small', onclick: () => addCall(group), text: '+ Add call' }),
    );
  }

  function addCall(group) {
    const used = new Set(groups.flatMap((g) => g.calls.map((c) => c.id)));
    let n = 0;
    while (used.has(`call_${n}`)) n++;
    group.calls.push({ id: `call_${n}`, tool: tools[0]?.name ?? '', order: [], fields: {} });
    render();
  }

  function renderCall(group, call, index) {
    const key = `calls:${group.turn}:${index}`;
    const tool = byName.get(call.tool);
    const properties = tool?.parameters?.properties ?? {};
    const required = new Set(tool?.parameters?.required ?? []);
    const toolSelect = h(
      'select',
      {
        dataset: { field: `${key}:tool` },
        'aria-label': 'tool',
        onchange: (e) => {
          call.tool = e.target.value;
          render();
        },
      },
      tool ? null : h('option', { value: call.tool, text: `${call.tool} (not offered)`, selected: true }),
      tools.map((t) => h('option', { value: t.name, text: t.name, selected: t.name === call.tool })),
    );
    // Parameters the call sets and required ones first; the other optional ones folded away.
    const names = [...Object.keys(properties), ...Object.keys(call.fields).filter((n) => !Object.hasOwn(properties, n))];
    const shownFirst = names.filter((n) => required.has(n) || (call.fields[n] && call.fields[n].raw !== ''));
    const others = names.filter((n) => !shownFirst.includes(n));
    const field = (name) => renderField(call, `${key}:${name}`, name, Object.hasOwn(properties, name) ? properties[name] : undefined, required.has(name));
    return h(
      'div',
      { class: 'call-card', dataset: { call: key } },
      h(
        'div',
        { class: 'call-head' },
        h('label', { class: 'inline' }, 'id ', h('input', { type: 'text', class: 'call-id', value: call.id, dataset: { field: `${key}:id` }, oninput: (e) => (call.id = e.target.value) })),
        h('label', { class: 'inline' }, 'tool ', toolSelect),
        h('button', { type: 'button', class: 'small danger', text: 'Remove call', onclick: () => (group.calls.splice(index, 1), render()) }),
      ),
      h('div', { class: 'field-error', dataset: { error: key } }),
      names.length ? shownFirst.map(field) : h('p', { class: 'muted', text: 'This tool takes no parameters.' }),
      others.length ? h('details', { class: 'more-params' }, h('summary', { text: `Other parameters (${others.length})` }), others.map(field)) : null,
    );
  }

  function renderField(call, key, name, schema, isRequired) {
    const current = call.fields[name];
    const mode = current?.mode ?? modeOf(schema, undefined);
    const raw = current?.raw ?? '';
    const set = (value) => (call.fields[name] = { mode, raw: value });
    let input;
    if (mode === 'enum' || mode === 'boolean') {
      const options = mode === 'enum' ? schema.enum.map((e) => [JSON.stringify(e), typeof e === 'string' ? e : JSON.stringify(e)]) : [['true', 'true'], ['false', 'false']];
      input = h(
        'select',
        { id: key, dataset: { field: key }, onchange: (e) => set(e.target.value) },
        h('option', { value: '', text: '— not set —', selected: raw === '' }),
        options.map(([value, label]) => h('option', { value, text: label, selected: value === raw })),
      );
    } else if (mode === 'json' || raw.includes('\n') || raw.length > 60) {
      input = h('textarea', { id: key, rows: mode === 'json' ? 2 : 3, dataset: { field: key }, value: raw, oninput: (e) => set(e.target.value), spellcheck: 'false' });
    } else {
      input = h('input', { id: key, type: 'text', inputmode: mode === 'number' ? 'decimal' : null, dataset: { field: key }, value: raw, oninput: (e) => set(e.target.value), autocomplete: 'off' });
    }
    return h(
      'div',
      { class: `field${isRequired ? ' required' : ''}${schema ? '' : ' extra'}` },
      h(
        'label',
        { for: key },
        h('span', { class: 'name', text: name }),
        isRequired ? h('span', { class: 'req', title: 'required', text: '*' }) : null,
        h('span', { class: 'type', text: schema ? typeHint(schema, mode) : 'not a parameter of this tool' }),
      ),
      input,
      schema?.description ? h('div', { class: 'hint', text: schema.description }) : null,
      h('div', { class: 'field-error', dataset: { error: key } }),
    );
  }

  /** The calls as the form holds them, in the gold answer's shape; argument order kept as it was. */
  function value() {
    const toCalls = (group) =>
      group.calls.map((call) => {
        const args = {};
        const names = [...call.order, ...Object.keys(call.fields).filter((n) => !call.order.includes(n))];
        for (const name of names) {
          const field = call.fields[name];
          if (!field) continue;
          const v = valueOf(field.mode, field.raw);
          if (v !== undefined) args[name] = v;
        }
        return { id: call.id, tool: call.tool, arguments: args };
      });
    return perTurn ? Object.fromEntries(groups.map((g) => [g.turn, toCalls(g)])) : toCalls(groups[0]);
  }

  function clearProblems() {
    for (const slot of element.querySelectorAll('[data-error]')) slot.replaceChildren();
    for (const el of element.querySelectorAll('.invalid')) el.classList.remove('invalid');
  }

  /** Shows each problem at its field, else at its call, else above the calls. */
  function showProblems(problems) {
    for (const problem of problems) {
      const candidates = [problem.field, problem.field?.split(':').slice(0, 3).join(':'), 'calls'].filter(Boolean);
      const slot = candidates.map((id) => element.querySelector(`[data-error="${CSS.escape(id)}"]`)).find(Boolean);
      slot.append(h('div', { class: 'problem', text: problem.message }));
      slot.closest('details')?.setAttribute('open', ''); // a folded parameter's problem must show
      element.querySelector(`[data-field="${CSS.escape(problem.field ?? '')}"]`)?.classList.add('invalid');
    }
  }

  render();
  return { element, value, showProblems, clearProblems };
}
