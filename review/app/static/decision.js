// What every item view shares: the decision badge, the notes, the status line, and saving a decision
// with each refused problem shown next to the field it names.
import { fill, h } from './dom.js';

/**
 * `decided` maps each decision to its label ("accepted"); `answer` is the saved one ({decision, notes}).
 * `decide(decision, fields, place)` saves through app.save, then goes on to the next item; a refusal
 * puts each problem where `place(problem)` puts it (returning true), else in the slot
 * `[data-error=<field>]` (marking `[data-field=<field>]` invalid), else in `rest()` when it gives an element, else under the buttons.
 */
export function decisionControls({ root, app, decided, answer, notesPlaceholder }) {
  const status = h('div', { class: 'status', role: 'status' });
  const problemsBox = h('div', { class: 'field-error', dataset: { error: 'decision' } });
  const notes = h('textarea', { id: 'notes', rows: 2, placeholder: notesPlaceholder, value: answer.notes, dataset: { field: 'notes' } });
  const notesError = h('div', { class: 'field-error', dataset: { error: 'notes' } });
  const badge = h('span', { class: `decision-badge ${answer.decision || 'open'}`, text: decided[answer.decision] ?? 'open' });

  const showStatus = (text, kind) => fill(status, h('span', { class: kind, text }));
  const clearProblems = () => {
    for (const slot of root.querySelectorAll('[data-error]')) slot.replaceChildren();
    for (const el of root.querySelectorAll('.invalid')) el.classList.remove('invalid');
  };

  async function decide(decision, fields = {}, { place = () => false, rest = () => null } = {}) {
    clearProblems();
    showStatus('saving…', 'muted');
    const result = await app.save({ decision, notes: notes.value, ...fields });
    if (result.ok) {
      badge.className = `decision-badge ${decision}`;
      badge.textContent = decided[decision];
      showStatus(`saved: ${decided[decision]}`, 'ok');
      app.next();
      return;
    }
    showStatus('not saved: see the problems marked below', 'error');
    for (const problem of result.problems) {
      if (place(problem)) continue;
      const slot = problem.field && root.querySelector(`[data-error="${problem.field}"]`);
      if (slot) {
        slot.append(h('div', { class: 'problem', text: problem.message }));
        root.querySelector(`[data-field="${problem.field}"]`)?.classList.add('invalid');
      } else (rest() ?? problemsBox).append(h('div', { class: 'problem', text: problem.message }));
    }
  }

  if (answer.decision) showStatus(`saved: ${decided[answer.decision]}`, 'ok');
  return { badge, notes, clearProblems, decide, bar: [h('div', { class: 'notes' }, notes, notesError), h('div', { class: 'feedback' }, status, problemsBox)] };
}
