// The review app's shell: one list per kind of item (a switch between them), progress and counts per
// reason, navigation (j / k), help (?), and the server calls. What an item looks like and which
// decisions it offers belongs to the module of its kind (kinds/<kind>.js: title, DECIDED, shortcuts,
// render); a new kind of item is one more module in KINDS.
import { fill, h, typing } from './dom.js';
import * as sample from './kinds/sample.js';
import * as tools from './kinds/tools.js';

/** In the order a reviewer works: tool decisions publish the next version, whose samples are then reviewed. */
const KINDS = { tools, sample };

const SHELL_SHORTCUTS = [
  ['j', 'next item'],
  ['k', 'previous item'],
  ['t', 'switch between tool questions and samples'],
  ['?', 'show or hide this help'],
];

const app = {
  /** Every item of every kind; the list shows those of `kind`, `index` counts among them. */
  items: [],
  kinds: [],
  kind: null,
  dataset: '',
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
  app.dataset = body.dataset;
  app.kinds = Object.keys(KINDS)
    .map((kind) => body.kinds.find((k) => k.kind === kind))
    .filter(Boolean);
  fill($('dataset'), h('strong', { text: body.dataset }), h('span', { class: 'muted', text: ` · ${body.annotator}` }));
  $('files').textContent = app.kinds.map((k) => k.file).join(', ');
  renderHelp();
  const wanted = app.items.find((item) => item.id === decodeURIComponent(location.hash.slice(1)));
  // Open tool questions first: their decisions make the next version, whose samples are the ones to review.
  const open = app.kinds.find((k) => app.items.some((item) => item.kind === k.kind && !item.decision));
  await switchKind(wanted?.kind ?? open?.kind ?? app.kinds[0]?.kind, wanted?.id);
}

const visible = () => app.items.filter((item) => item.kind === app.kind);

/** Shows the list of `kind` and opens `id` in it, else its first open item. */
async function switchKind(kind, id) {
  app.kind = kind;
  const items = visible();
  const at = items.findIndex((item) => item.id === id);
  const open = items.findIndex((item) => !item.decision);
  renderProgress();
  if (!items.length) {
    app.handler = null;
    delete $('item').dataset.loaded;
    return fill($('item'), h('div', { class: 'card', text: app.kinds.length ? `No ${KINDS[kind]?.title.toLowerCase() ?? 'items'} to review.` : 'The queue is empty: nothing to review.' }));
  }
  await show(at >= 0 ? at : open >= 0 ? open : 0);
}

function renderTabs() {
  const tabs = $('kind-tabs');
  tabs.hidden = app.kinds.length < 2;
  fill(
    tabs,
    app.kinds.map(({ kind }) => {
      const items = app.items.filter((item) => item.kind === kind);
      const decided = items.filter((item) => item.decision).length;
      return h(
        'button',
        { type: 'button', class: kind === app.kind ? 'tab current' : 'tab', dataset: { kind }, onclick: () => kind !== app.kind && switchKind(kind) },
        KINDS[kind].title,
        h('span', { class: 'tab-count', text: `${decided} / ${items.length} decided` }),
      );
    }),
  );
  const toolFile = app.kinds.find((k) => k.kind === 'tools')?.file;
  const note = $('kind-note');
  note.hidden = !toolFile;
  if (toolFile) {
    fill(
      note,
      h('strong', { text: 'Tool questions come first. ' }),
      'Their decisions run the recipe again and publish the next version, so decide them, stop the server and import ',
      h('code', { text: `toolkiln review import ${app.dataset} ${toolFile}` }),
      ', then review the samples of the new version.',
    );
  }
}

function renderProgress() {
  renderTabs();
  const items = visible();
  const { DECIDED } = KINDS[app.kind] ?? { DECIDED: {} };
  const total = items.length;
  const decided = items.filter((i) => i.decision).length;
  $('progress-fill').style.width = total ? `${(100 * decided) / total}%` : '0';
  $('progress-text').textContent = `${decided} / ${total} decided`;
  const byDecision = (d) => items.filter((i) => i.decision === d).length;
  fill(
    $('totals'),
    Object.entries(DECIDED).map(([d, label]) => h('span', { class: `count ${d}`, dataset: { count: d } }, h('b', { text: String(byDecision(d)) }), ` ${label}`)),
    h('span', { class: 'count open', dataset: { count: 'open' } }, h('b', { text: String(total - decided) }), ' open'),
  );

  const reasons = new Map();
  for (const item of items) {
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

  $('items-title').textContent = KINDS[app.kind]?.title ?? 'Items';
  fill(
    $('items'),
    items.map((item, i) =>
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
  const items = visible();
  if (index < 0 || index >= items.length) return;
  const ticket = ++app.loading;
  app.index = index;
  const item = items[index];
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
    position: { index, total: items.length },
    save: (answer) => save(item.id, answer),
    next: () => show(Math.min(app.index + 1, visible().length - 1)).then(() => undefined),
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
  const rows = (shortcuts) => shortcuts.map(([key, what]) => h('tr', {}, h('td', {}, h('kbd', { text: key })), h('td', { text: what })));
  fill(
    $('help-keys'),
    h('tbody', {}, rows(SHELL_SHORTCUTS)),
    app.kinds.map(({ kind }) => h('tbody', {}, h('tr', {}, h('th', { colspan: 2, text: KINDS[kind].title })), rows(KINDS[kind].shortcuts))),
  );
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
    if (event.key === 't' && app.kinds.length > 1) {
      event.preventDefault();
      const next = app.kinds[(app.kinds.findIndex((k) => k.kind === app.kind) + 1) % app.kinds.length];
      return switchKind(next.kind);
    }
    if (event.key === '?') return event.preventDefault(), toggleHelp();
  }
  if ((event.altKey || (!inField && (event.ctrlKey || event.metaKey) && event.key !== 'Enter'))) return;
  if (app.handler?.onKey(event, inField)) event.preventDefault();
});

$('help-button').addEventListener('click', toggleHelp);
$('help-close').addEventListener('click', toggleHelp);
start();
