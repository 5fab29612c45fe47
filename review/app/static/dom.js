// Builds elements without innerHTML: every text from the dataset becomes a text node, never markup.

/**
 * h('div', { class: 'card', onclick: fn, dataset: { field: 'x' } }, 'text', child, [more, children])
 * Attributes: `class`, `text`, `dataset`, `on<event>` handlers, booleans (`hidden`, `disabled`,
 * `open`, `selected`), anything else as a plain attribute. Null, undefined and false children are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') el.className = value;
    else if (name === 'text') el.textContent = value;
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else if (name === 'value') el.value = value;
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A value as JSON on one line, or as it is for plain strings. */
export function shown(value) {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Whether a key press happened while typing in a field (shortcuts are off there). */
export function typing(event) {
  const el = event.target;
  return el instanceof HTMLElement && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName));
}
