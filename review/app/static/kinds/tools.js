// The view of one tool question (a row of the tool sheet): the tools side by side (description,
// parameters, sample counts, example queries), what the run proposes and the suggested name; merge
// (merged name, which tools) / keep apart / decompose (target tools) / rename, as the question allows,
// and notes.
import { decisionControls } from '../decision.js';
import { fill, h } from '../dom.js';
import { paramsTable } from '../tool-doc.js';

export const title = 'Tool questions';

export const shortcuts = [
  ['m', 'merge: the merged name (pre-filled with the suggestion) and the tools to merge'],
  ['a', 'keep the tools apart (saved at once, then on to the next)'],
  ['d', 'decompose: the tools that take over the queries'],
  ['r', 'rename: one "Old -> New" line per tool'],
  ['Enter / Ctrl+Enter', 'save the open form (Ctrl+Enter in the rename lines)'],
  ['Esc', 'leave a field; again: close the form'],
];

/** Each decision as the page counts it. */
export const DECIDED = { merge: 'merged', 'keep-apart': 'kept apart', decompose: 'decomposed', rename: 'renamed' };

const BUTTONS = [
  ['merge', 'Merge…', 'm'],
  ['keep-apart', 'Keep apart', 'a'],
  ['decompose', 'Decompose…', 'd'],
  ['rename', 'Rename…', 'r'],
];

/** A sheet cell listing tools: one per line or comma-separated (as tool-sheet.ts reads it). */
const toolList = (text) => [...new Set(text.split(/[\n,;]/).map((t) => t.trim()).filter(Boolean))];

function toolCard(tool) {
  return h(
    'section',
    { class: 'card tool-card', dataset: { tool: tool.name } },
    h('div', { class: 'tool-card-head' }, h('code', { class: 'tool-name', text: tool.name }), h('span', { class: 'chip', text: `${tool.samples} sample${tool.samples === 1 ? '' : 's'}` })),
    h('p', { class: 'description', text: tool.description || '(no description)' }),
    h('h3', { text: 'Parameters' }),
    tool.spec ? paramsTable(tool.spec.parameters) : h('p', { class: 'muted', text: "not in this version's library (the run merged it into another tool): parameters unknown" }),
    h('h3', { text: 'Example queries' }),
    tool.examples.length ? h('ul', { class: 'examples' }, tool.examples.map((q) => h('li', { text: q }))) : h('p', { class: 'muted', text: 'none' }),
  );
}

/** A labelled field with its error slot (`data-error` = the sheet column the server names). */
function field(column, label, hint, input) {
  return h('div', { class: 'field' }, h('label', { for: column }, h('span', { class: 'name', text: label }), hint ? h('span', { class: 'type', text: hint }) : null), input, h('div', { class: 'field-error', dataset: { error: column } }));
}

/** Checkboxes for the question's tools; `checked(name)` says which start ticked. */
function toolChecks(column, tools, checked) {
  return h(
    'div',
    { class: 'tool-checks', id: column, dataset: { field: column } },
    tools.map((t) => h('label', { class: 'tool-check' }, h('input', { type: 'checkbox', value: t.name, checked: checked(t.name) }), h('code', { text: t.name }))),
  );
}

const ticked = (el) => [...el.querySelectorAll('input[type="checkbox"]:checked')].map((c) => c.value);

/**
 * Renders the question into `root`. `app` is the shell: app.position {index, total}, app.save(answer)
 * → {ok, problems}, app.next(). Returns the item's key handler.
 */
export function render(view, root, app) {
  const answer = view.answer;
  const names = view.tools.map((t) => t.name);
  const { badge, notes, clearProblems, decide, bar } = decisionControls({ root, app, decided: DECIDED, answer, notesPlaceholder: 'Notes (kept with the decision in the next version)' });
  const formSlot = h('div', { class: 'form-slot' });
  /** The open form: { decision, panel, first, save }. */
  let form = null;

  /** The saved cell when the saved decision is this one, else `fallback`. */
  const saved = (decision, column, fallback) => (answer.decision === decision ? answer[column] : fallback);

  function mergeForm() {
    const name = h('input', { type: 'text', id: 'merged_name', value: saved('merge', 'merged_name', '') || view.suggestedName, dataset: { field: 'merged_name' }, autocomplete: 'off' });
    const members = toolList(saved('merge', 'target_tools', ''));
    const checks = toolChecks('target_tools', view.tools, (t) => !members.length || members.includes(t));
    return {
      first: name,
      body: [
        field('merged_name', 'Merged name', `the one tool the merged ones become (suggested: ${view.suggestedName})`, name),
        field('target_tools', 'Tools to merge', 'two or more; the others are kept apart', checks),
      ],
      // All ticked is "merge all": the sheet's empty cell.
      fields: () => ({ merged_name: name.value, target_tools: ticked(checks).length === names.length ? '' : ticked(checks).join(', ') }),
    };
  }

  function decomposeForm() {
    const targets = toolList(saved('decompose', 'target_tools', ''));
    const checks = toolChecks('target_tools', view.tools, (t) => targets.includes(t));
    const others = h('input', { type: 'text', id: 'other_targets', value: targets.filter((t) => !names.includes(t)).join(', '), list: 'known-tools', placeholder: 'other tools of this version, comma-separated', autocomplete: 'off' });
    return {
      first: others,
      body: [
        field('target_tools', 'Tools that take over the queries', "ticked ones keep their queries and take the others'; the unticked are decomposed", h('div', {}, checks, others, h('datalist', { id: 'known-tools' }, view.knownTools.map((t) => h('option', { value: t }))))),
      ],
      fields: () => ({ target_tools: [...ticked(checks), ...toolList(others.value)].join(', ') }),
    };
  }

  function renameForm() {
    const lines = h('textarea', { id: 'new_name', rows: Math.max(2, names.length), value: saved('rename', 'new_name', ''), placeholder: names.map((n) => `${n} -> New${n.replace(/^./, (c) => c.toUpperCase())}`).join('\n'), dataset: { field: 'new_name' } });
    return { first: lines, body: [field('new_name', 'New names', 'one "Old -> New" line per tool to rename; the others are kept apart', lines)], fields: () => ({ new_name: lines.value }) };
  }

  const FORMS = { merge: mergeForm, decompose: decomposeForm, rename: renameForm };
  const LABELS = { merge: 'Merge', decompose: 'Decompose', rename: 'Rename' };

  function openForm(decision) {
    if (!view.decisions.includes(decision)) return;
    if (form?.decision === decision) return form.first.focus();
    closeForm();
    const built = FORMS[decision]();
    const save = () => decide(decision, built.fields());
    const panel = h(
      'section',
      { class: 'card editor', id: 'decision-form', dataset: { decision } },
      h('h2', {}, LABELS[decision], h('span', { class: 'muted', text: ' — Enter (Ctrl+Enter in the lines) saves, Esc twice closes' })),
      built.body,
      h('div', { class: 'actions' }, h('button', { type: 'button', class: 'primary', id: 'save-decision', onclick: save, text: `Save: ${DECIDED[decision]}` }), h('button', { type: 'button', onclick: closeForm, text: 'Cancel' })),
    );
    form = { decision, panel, first: built.first, save };
    formSlot.append(panel);
    for (const button of root.querySelectorAll('.buttons button')) button.classList.toggle('chosen', button.id === decision);
    panel.scrollIntoView({ block: 'nearest' });
    built.first.focus();
    built.first.select?.();
  }

  function closeForm() {
    if (!form) return;
    form.panel.remove();
    form = null;
    for (const button of root.querySelectorAll('.buttons button')) button.classList.remove('chosen');
    clearProblems();
  }

  const choose = (decision) => (decision === 'keep-apart' ? (closeForm(), decide('keep-apart')) : openForm(decision));

  fill(
    root,
    h(
      'div',
      { class: 'item-head' },
      h('h1', {}, `Tool question ${app.position.index + 1} of ${app.position.total}`, badge),
      h('div', { class: 'meta' }, h('span', { class: 'chip', text: view.questionKind.replace(/-/g, ' ') }), h('span', { class: 'chip', text: `suggested name ${view.suggestedName}` }), h('span', { class: 'chip muted', text: view.id })),
    ),
    h('section', { class: 'card check proposal' }, h('h2', { text: 'What the run proposes' }), h('p', { text: view.proposal })),
    h('div', { class: `tool-grid n${Math.min(view.tools.length, 4)}` }, view.tools.map(toolCard)),
    formSlot,
    h(
      'div',
      { class: 'decision-bar' },
      h(
        'div',
        { class: 'buttons' },
        BUTTONS.filter(([d]) => view.decisions.includes(d)).map(([d, label, key]) => h('button', { type: 'button', class: d, id: d, onclick: () => choose(d), title: key }, `${label} `, h('kbd', { text: key }))),
      ),
      bar,
    ),
  );

  return {
    onKey(event, inField) {
      const save = event.key === 'Enter' && (event.ctrlKey || event.metaKey || (inField && event.target.tagName === 'INPUT'));
      if (save && form) return form.save(), true;
      if (inField) {
        if (event.key === 'Escape') return event.target.blur(), true;
        return false;
      }
      if (event.key === 'Escape' && form) return closeForm(), true;
      const chosen = BUTTONS.find(([, , key]) => key === event.key);
      if (chosen && view.decisions.includes(chosen[0])) return choose(chosen[0]), true;
      if (event.key === 'n') return notes.focus(), true;
      return false;
    },
  };
}
