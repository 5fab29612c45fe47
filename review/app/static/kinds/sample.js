// The view of one queued sample: what to check, the dialogue as a conversation, the gold answer and
// the candidate tools; accept / reject / edit (query, calls through a schema-built form, labels) and notes.
import { fill, h, shown } from '../dom.js';
import { decisionControls } from '../decision.js';
import { callsForm } from '../schema-form.js';
import { toolDoc } from '../tool-doc.js';

export const title = 'Samples';

export const shortcuts = [
  ['a', 'accept the item'],
  ['r', 'reject the item'],
  ['e', 'edit the query, calls or labels'],
  ['n', 'write a note'],
  ['Ctrl+Enter', 'save the edit (in the edit form)'],
  ['Esc', 'leave a field; again: cancel the edit'],
];

/** Each decision as the page counts it. */
export const DECIDED = { accept: 'accepted', reject: 'rejected', edit: 'edited' };

function callCard(call, observation) {
  const args = Object.entries(call.arguments ?? {});
  return h(
    'div',
    { class: 'call' },
    h('div', { class: 'call-title' }, h('span', { class: 'arrow', text: '→' }), h('code', { class: 'tool', text: call.tool }), h('span', { class: 'call-id', text: call.id })),
    args.length
      ? h('dl', { class: 'args' }, args.map(([name, value]) => [h('dt', { text: name }), h('dd', {}, h('code', { text: shown(value) }))]))
      : h('div', { class: 'muted', text: 'no arguments' }),
    observation === undefined ? null : h('div', { class: 'observation' }, h('span', { class: 'arrow', text: '←' }), h('pre', { text: JSON.stringify(observation, null, 1) })),
  );
}

function turnView(turn, index) {
  const observations = turn.observations ?? {};
  const called = new Set((turn.calls ?? []).map((c) => c.id));
  return h(
    'div',
    { class: `turn ${turn.role}`, dataset: { turn: String(index) } },
    h('div', { class: 'turn-head' }, h('span', { class: 'role', text: turn.role }), h('span', { class: 'index', text: `turn ${index}` })),
    turn.content ? h('div', { class: 'content', text: turn.content }) : null,
    turn.thought ? h('div', { class: 'thought' }, h('span', { class: 'label', text: 'thought' }), turn.thought) : null,
    (turn.calls ?? []).map((call) => callCard(call, observations[call.id])),
    Object.entries(observations)
      .filter(([id]) => !called.has(id))
      .map(([id, result]) => h('div', { class: 'observation' }, h('span', { class: 'arrow', text: `← ${id}` }), h('pre', { text: JSON.stringify(result, null, 1) }))),
    turn.response ? h('div', { class: 'response' }, h('span', { class: 'label', text: 'response' }), turn.response) : null,
  );
}

function goldView(view) {
  const gold = view.gold;
  const groups = gold === null ? [] : Array.isArray(gold) ? [['', gold]] : Object.entries(gold);
  return h(
    'div',
    {},
    groups.map(([turn, calls]) => [turn ? h('div', { class: 'group-label', text: `turn ${turn}` }) : null, calls.length ? calls.map((c) => callCard(c)) : h('div', { class: 'muted', text: 'no calls' })]),
    view.labels ? h('div', { class: 'labels' }, h('span', { class: 'label', text: 'labels' }), view.labels.map((l) => h('code', { class: 'chip', text: l }))) : null,
  );
}

function usedTools(gold) {
  const calls = gold === null ? [] : Array.isArray(gold) ? gold : Object.values(gold).flat();
  return new Set(calls.map((c) => c.tool));
}

/**
 * Renders the sample into `root`. `app` is the shell: app.position {index, total}, app.save(answer)
 * → {ok, problems}, app.next(). Returns the item's key handler.
 */
export function render(view, root, app) {
  const answer = view.answer;
  let editor = null;
  const controls = decisionControls({ root, app, decided: DECIDED, answer, notesPlaceholder: 'Notes (kept with the decision)' });
  const { badge, notes, clearProblems } = controls;
  // Problems with calls go to the calls form; others without a field of their own to the edit form when it is open.
  const decide = (decision, fields) =>
    controls.decide(decision, fields, {
      place: (problem) => Boolean(problem.field?.startsWith('calls') && editor && (editor.form.showProblems([problem]), true)),
      rest: () => (editor ? editor.problems : null),
    });

  function openEditor() {
    if (editor) return editor.query.focus();
    const form = callsForm({ calls: answer.calls ?? view.gold ?? [], tools: view.tools });
    const query = h('textarea', { id: 'query', rows: 4, value: answer.corrected_query || view.query, dataset: { field: 'query' } });
    const labels = view.labels ? h('textarea', { id: 'labels', rows: 2, value: answer.corrected_labels || view.labels.join('\n'), dataset: { field: 'labels' } }) : null;
    const problems = h('div', { class: 'field-error', dataset: { error: 'edit' } });
    // Text left as the version has it is not sent: it is no correction, and text the reviewer did
    // not type must not be judged as typed (a query may itself start with "=").
    const save = () =>
      decide('edit', {
        ...(query.value === view.query ? {} : { corrected_query: query.value }),
        ...(view.gold === null ? {} : { corrected_calls: JSON.stringify(form.value()) }),
        ...(labels && labels.value !== view.labels.join('\n') ? { corrected_labels: labels.value } : {}),
      });
    const panel = h(
      'section',
      { class: 'card editor', id: 'editor' },
      h('h2', {}, 'Edit', h('span', { class: 'muted', text: ' — Ctrl+Enter saves, Esc twice cancels' })),
      problems,
      h('div', { class: 'field' }, h('label', { for: 'query' }, h('span', { class: 'name', text: 'Query' }), h('span', { class: 'type', text: 'the first user turn' })), query, h('div', { class: 'field-error', dataset: { error: 'query' } })),
      view.gold === null ? null : form.element,
      labels ? h('div', { class: 'field' }, h('label', { for: 'labels' }, h('span', { class: 'name', text: 'Labels' }), h('span', { class: 'type', text: 'one per line' })), labels, h('div', { class: 'field-error', dataset: { error: 'labels' } })) : null,
      h('div', { class: 'actions' }, h('button', { type: 'button', class: 'primary', id: 'save-edit', onclick: save, text: 'Save edit' }), h('button', { type: 'button', onclick: closeEditor, text: 'Cancel' })),
    );
    editor = { panel, form, query, problems, save };
    goldCard.replaceWith(panel);
    query.focus();
  }

  function closeEditor() {
    if (!editor) return;
    editor.panel.replaceWith(goldCard);
    editor = null;
    clearProblems();
  }

  const goldCard = h('section', { class: 'card' }, h('h2', { text: 'Gold answer' }), goldView(view));
  const used = usedTools(view.gold);
  const tools = [...view.tools].sort((a, b) => Number(used.has(b.name)) - Number(used.has(a.name)));

  fill(
    root,
    h(
      'div',
      { class: 'item-head' },
      h('h1', {}, `Item ${app.position.index + 1} of ${app.position.total}`, badge),
      h(
        'div',
        { class: 'meta' },
        h('span', { class: 'chip', text: `sample ${view.sampleId}` }),
        h('span', { class: 'chip', text: `category ${view.category}` }),
        h('span', { class: 'chip', text: `priority ${view.priority}` }),
        h('span', { class: 'chip muted', text: view.id }),
      ),
    ),
    h(
      'section',
      { class: 'card check' },
      h('h2', { text: 'What to check' }),
      h('ul', {}, view.whatToCheck.map((line) => h('li', { text: line }))),
      view.failedChecks.length
        ? h(
            'div',
            { class: 'failed-checks' },
            h('h3', { text: 'Failed checks' }),
            h('ul', {}, view.failedChecks.map((c) => h('li', {}, h('code', { text: c.name }), c.soft ? h('span', { class: 'badge soft', text: 'soft' }) : null, c.reason ? `: ${c.reason}` : ''))),
          )
        : null,
    ),
    h(
      'div',
      { class: 'columns' },
      h('section', { class: 'card conversation' }, h('h2', { text: 'Dialogue' }), view.dialogue.map(turnView)),
      h('div', { class: 'side' }, goldCard, h('section', { class: 'card' }, h('h2', { text: `Candidate tools (${view.tools.length})` }), tools.map((t) => toolDoc(t, used.has(t.name) ? { open: true, className: 'used', badge: 'in the gold answer' } : {})))),
    ),
    h(
      'div',
      { class: 'decision-bar' },
      h(
        'div',
        { class: 'buttons' },
        h('button', { type: 'button', class: 'accept', id: 'accept', onclick: () => decide('accept'), title: 'a' }, 'Accept ', h('kbd', { text: 'a' })),
        h('button', { type: 'button', class: 'reject', id: 'reject', onclick: () => decide('reject'), title: 'r' }, 'Reject ', h('kbd', { text: 'r' })),
        h('button', { type: 'button', class: 'edit', id: 'edit', onclick: openEditor, title: 'e' }, 'Edit… ', h('kbd', { text: 'e' })),
      ),
      controls.bar,
    ),
  );

  return {
    onKey(event, inField) {
      if (inField) {
        if (event.key === 'Enter' && (event.ctrlKey || event.metaKey) && editor) {
          editor.save();
          return true;
        }
        if (event.key === 'Escape') {
          event.target.blur();
          return true;
        }
        return false;
      }
      if (event.key === 'Escape' && editor) return closeEditor(), true;
      if (event.key === 'Enter' && (event.ctrlKey || event.metaKey) && editor) return editor.save(), true;
      if (event.key === 'a') return decide('accept'), true;
      if (event.key === 'r') return decide('reject'), true;
      if (event.key === 'e') return openEditor(), true;
      if (event.key === 'n') return notes.focus(), true;
      return false;
    },
  };
}
