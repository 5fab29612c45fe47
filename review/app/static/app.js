// The review app's shell: item list, progress and counts per reason, navigation (j / k), help (?),
// and the server calls. What an item looks like and which decisions it offers belongs to the module
// of its kind (kinds/<kind>.js); a new kind of item is one more module in KINDS.
import { fill, h, typing } from './dom.js';
import * as sample from './kinds/sample.js';

const KINDS = { sample };

const SHELL_SHORTCUTS = [
  ['j', 'next item'],
  ['k', 'previous item'],
  ['?', 'show or hide this help'],
];

const DECIDED = { accept: 'accepted', reject: 'rejected', edit: 'edited' };

const app = {
  items: [],
  index: 0,
  handler: null,
  /** Bumped on every navigation, so a late answer for an item left behind is ignored. */
  loading: 0,
};

const $ = (id) => document.getElementById(id);

async function call(path, init) {
  let res;
  try {
    res = await fetch(path, init);
  } catch (error) {
    return { status: 0, body: { error: `the review server does not answer (${error.message}): is toolkiln review serve still running?` } };
  }
  const body = await res.json().catch(() => ({ error: `${res.status} ${res.statusText}` }));
  return { status: res.status, body };
}

async function start() {
  const { status, body } = await call('api/state');
  if (status !== 200) return fill($('item'), h('div', { class: 'card error', text: body.error ?? `cannot load the review (${status})` }));
  app.items = body.items;
  fill($('dataset'), h('strong', { text: body.dataset }), h('span', { class: 'muted', text: ` · ${body.annotator}` }));
  $('files').textContent = body.kinds.map((k) => k.file).join(', ');
  renderHelp();
  const wanted = decodeURIComponent(location.hash.slice(1));
  const byHash = app.items.findIndex((item) => item.id === wanted);
  const open = app.items.findIndex((item) => !item.decision);
  renderProgress();
  if (!app.items.length) return fill($('item'), h('div', { class: 'card', text: 'The queue is empty: nothing to review.' }));
  await show(byHash >= 0 ? byHash : open >= 0 ? open : 0);
}

function renderProgress() {
  const total = app.items.length;
  const decided = app.items.filter((i) => i.decision).length;
  $('progress-fill').style.width = total ? `${(100 * decided) / total}%` : '0';
  $('progress-text').textContent = `${decided} / ${total} decided`;
  const byDecision = (d) => app.items.filter((i) => i.decision === d).length;
  fill(
    $('totals'),
    Object.entries(DECIDED).map(([d, label]) => h('span', { class: `count ${d}`, dataset: { count: d } }, h('b', { text: String(byDecision(d)) }), ` ${label}`)),
    h('span', { class: 'count open', dataset: { count: 'open' } }, h('b', { text: String(total - decided) }), ' open'),
  );

  const reasons = new Map();
  for (const item of app.items) {
    for (const reason of item.reasons) {
      const entry = reasons.get(reason) ?? { total: 0, decided: 0 };
      entry.total++;
      if (item.decision) entry.decided++;
      reasons.set(reason, entry);
    }
  }
  fill(
    $('reasons'),
    [...reasons].map(([reason, { total: n, decided: d }]) =>
      h('tr', { dataset: { reason } }, h('td', { class: 'reason', text: reason }), h('td', { class: 'num', text: `${d} / ${n}` }), h('td', {}, h('div', { class: 'mini-bar' }, bar((100 * d) / n)))),
    ),
  );

  fill(
    $('items'),
    app.items.map((item, i) =>
      h(
        'li',
        { class: i === app.index ? 'current' : '', dataset: { item: item.id, decision: item.decision ?? 'open' }, onclick: () => show(i), title: item.reasons.join('\n') },
        h('span', { class: `dot ${item.decision ?? 'open'}`, title: DECIDED[item.decision] ?? 'open' }),
        h('span', { class: 'title', text: item.title }),
      ),
    ),
  );
  $('items').querySelector('li.current')?.scrollIntoView({ block: 'nearest' });
}

/** A filled bar (CSSOM, not a style attribute: the page's CSP allows no inline styles). */
function bar(percent) {
  const el = h('div');
  el.style.width = `${percent}%`;
  return el;
}

async function show(index) {
  if (index < 0 || index >= app.items.length) return;
  const ticket = ++app.loading;
  app.index = index;
  const item = app.items[index];
  history.replaceState(null, '', `#${encodeURIComponent(item.id)}`);
  renderProgress();
  const { status, body } = await call(`api/items/${encodeURIComponent(item.id)}`);
  if (ticket !== app.loading) return;
  const root = $('item');
  if (status !== 200) return fill(root, h('div', { class: 'card error', text: body.error ?? `cannot load item ${item.id} (${status})` }));
  const kind = KINDS[body.view.kind];
  if (!kind) return fill(root, h('div', { class: 'card error', text: `this page cannot show items of kind "${body.view.kind}"` }));
  root.scrollTop = 0;
  app.handler = kind.render(body.view, root, {
    position: { index, total: app.items.length },
    save: (answer) => save(item.id, answer),
    next: () => show(Math.min(app.index + 1, app.items.length - 1)).then(() => undefined),
  });
  root.dataset.loaded = item.id;
}

async function save(id, answer) {
  const { status, body } = await call(`api/items/${encodeURIComponent(id)}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(answer) });
  if (status === 200) {
    const at = app.items.findIndex((item) => item.id === id);
    app.items[at] = body.summary;
    renderProgress();
    return { ok: true };
  }
  return { ok: false, problems: status === 422 ? body.problems : [{ column: null, message: body.error ?? `not saved (${status})` }] };
}

function renderHelp() {
  const rows = [...SHELL_SHORTCUTS, ...new Map(Object.values(KINDS).flatMap((k) => k.shortcuts))];
  fill($('help-keys'), rows.map(([key, what]) => h('tr', {}, h('td', {}, h('kbd', { text: key })), h('td', { text: what }))));
}

function toggleHelp() {
  const dialog = $('help');
  if (dialog.open) dialog.close();
  else dialog.showModal();
}

document.addEventListener('keydown', (event) => {
  if ($('help').open) {
    if (event.key === '?') toggleHelp();
    return;
  }
  const inField = typing(event);
  if (!inField && !event.ctrlKey && !event.metaKey && !event.altKey) {
    if (event.key === 'j') return event.preventDefault(), show(app.index + 1);
    if (event.key === 'k') return event.preventDefault(), show(app.index - 1);
    if (event.key === '?') return event.preventDefault(), toggleHelp();
  }
  if ((event.altKey || (!inField && (event.ctrlKey || event.metaKey) && event.key !== 'Enter'))) return;
  if (app.handler?.onKey(event, inField)) event.preventDefault();
});

$('help-button').addEventListener('click', toggleHelp);
$('help-close').addEventListener('click', toggleHelp);
start();
