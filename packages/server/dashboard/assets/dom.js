// @ts-check
/**
 * Building the page from DOM nodes: text goes in as text nodes, never as HTML, so nothing the API returns
 * (prompts, key names, error messages) can become markup.
 */

const BOOLEAN_PROPERTIES = new Set([
  'checked',
  'disabled',
  'hidden',
  'multiple',
  'required',
  'readOnly',
  'open',
]);

const SAFE_SCHEMES = new Set(['http:', 'https:', 'blob:']);

/**
 * `url` as an absolute address when it is http(s) or blob, else null: a link or player built from data (a task's
 * result URL) must never be a `javascript:` or `data:` URL.
 */
/** @param {unknown} url */
export function safeUrl(url) {
  try {
    const parsed = new URL(String(url), location.href);
    return SAFE_SCHEMES.has(parsed.protocol) ? parsed.href : null;
  } catch {
    return null;
  }
}

/**
 * `h('button', { type: 'button', class: 'button', onclick: fn }, 'Copy')`. `on…` props add listeners, `value` and
 * the boolean props set the element's property, anything else is an attribute; an `href` or `src` that is not
 * http(s) or blob (see `safeUrl`) is left out. Children may be strings, nodes,
 * arrays of them, or null/false (skipped).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, unknown>} [props]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  /** The element's properties by name, for `value` and the boolean ones. */
  const properties = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (element));
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      element.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    } else if (name === 'class') {
      element.className = String(value);
    } else if (name === 'value') {
      properties.value = value;
    } else if (BOOLEAN_PROPERTIES.has(name)) {
      properties[name] = Boolean(value);
    } else if ((name === 'href' || name === 'src') && !safeUrl(value)) {
      // Skipped: never a link or source that could run script.
    } else if (value !== false) {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(element, children);
  return element;
}

/**
 * @param {Element} parent
 * @param {Child[]} children
 */
function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  }
  return parent;
}

/**
 * The element of index.html with `id`, which is there and of that kind (else the page is broken: say so).
 * @template {HTMLElement} E
 * @param {string} id
 * @param {new () => E} kind
 * @returns {E}
 */
export function byId(id, kind) {
  const element = document.getElementById(id);
  if (!(element instanceof kind)) throw new Error(`index.html has no ${kind.name} #${id}.`);
  return element;
}

let idCounter = 0;
/** A unique id for pairing labels, hints and inputs. */
/** @param {string} prefix */
export function uid(prefix) {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

/**
 * A labelled form control with an optional hint: `<div class="field"><label/>control<p class="hint"/></div>`.
 * @param {string} label
 * @param {HTMLElement} control
 * @param {Child} [hint]
 */
export function field(label, control, hint) {
  control.id ||= uid('field');
  const children = [h('label', { for: control.id }, label), control];
  if (hint) {
    const hintId = uid('hint');
    control.setAttribute('aria-describedby', hintId);
    children.push(h('p', { class: 'hint', id: hintId }, hint));
  }
  return h('div', { class: 'field' }, children);
}

/**
 * `<select>` from `[value, label]` pairs.
 * @param {Record<string, unknown>} props
 * @param {[value: string, label: string][]} options
 * @param {string} [selected]
 */
export function select(props, options, selected) {
  return h(
    'select',
    props,
    options.map(([value, label]) => h('option', { value, selected: value === selected }, label)),
  );
}

/** Unix seconds as a `<time>`, in the reader's locale and time zone. */
/** @param {number | null | undefined} seconds */
export function time(seconds) {
  if (seconds === null || seconds === undefined) return h('span', { class: 'muted' }, 'never');
  const date = new Date(seconds * 1000);
  return h('time', { datetime: date.toISOString(), title: date.toISOString() }, formatDate(date));
}

/** @param {Date} date */
function formatDate(date) {
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** Reads out a short message to screen readers (the polite live region in index.html). */
/** @param {string} message */
export function announce(message) {
  const region = /** @type {HTMLElement} */ (document.getElementById('announcer'));
  region.textContent = '';
  // A fresh text node after clearing makes screen readers read a repeated message again.
  requestAnimationFrame(() => {
    region.textContent = message;
  });
}
