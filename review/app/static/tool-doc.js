// A tool's documentation: name, description and a table of its parameters (types, enums, required
// ones starred), folded unless `open`. Shared by the sample and tool-question views.
import { h, shown } from './dom.js';

/** Options: `open`, `className` (added to `tool-doc`), `badge` (a label after the name). */
export function toolDoc(tool, { open = false, className = '', badge = null } = {}) {
  return h(
    'details',
    { class: `tool-doc${className ? ` ${className}` : ''}`, open },
    h('summary', {}, h('code', { text: tool.name }), badge ? h('span', { class: 'badge', text: badge }) : null, tool.domain ? h('span', { class: 'muted', text: ` ${tool.domain}` }) : null),
    tool.description ? h('p', { text: tool.description }) : null,
    paramsTable(tool.parameters),
  );
}

/** A tool's parameters (its JSON Schema object) as a table, or "no parameters". */
export function paramsTable(parameters) {
  const properties = Object.entries(parameters?.properties ?? {});
  const required = new Set(parameters?.required ?? []);
  return properties.length
      ? h(
          'table',
          { class: 'params' },
          h('thead', {}, h('tr', {}, h('th', { text: 'parameter' }), h('th', { text: 'type' }), h('th', { text: 'description' }))),
          h(
            'tbody',
            {},
            properties.map(([name, schema]) =>
              h(
                'tr',
                {},
                h('td', {}, h('code', { text: name }), required.has(name) ? h('span', { class: 'req', title: 'required', text: ' *' }) : null),
                h('td', { text: [[schema.type].flat().filter(Boolean).join(' | ') || 'any', schema.enum ? `one of ${schema.enum.map(shown).join(', ')}` : ''].filter(Boolean).join(', ') }),
                h('td', { text: schema.description ?? '' }),
              ),
            ),
          ),
        )
    : h('p', { class: 'muted', text: 'no parameters' });
}
