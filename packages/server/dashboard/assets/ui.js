// @ts-check
/** Pieces every page uses: the heading, error messages, tables, task status, progress and video. */
import { describeError } from './api.js';
import { h, safeUrl } from './dom.js';

/**
 * The page's `<h1>`; it takes focus on navigation so screen readers announce the new page.
 * @param {string} title
 * @param {string} [intro]
 */
export function pageHeading(title, intro) {
  const heading = h('h1', { tabindex: '-1', class: 'page-title' }, title);
  return intro ? [heading, h('p', { class: 'intro' }, intro)] : [heading];
}

/** An element that shows errors as they happen: `box.show(error)`, `box.clear()`. */
/** @returns {ErrorBox} */
export function errorBox() {
  const box = h('div', { class: 'error-box', role: 'alert', hidden: true });
  return Object.assign(box, {
    /** @param {unknown} error */
    show(error) {
      box.textContent = typeof error === 'string' ? error : describeError(error);
      box.hidden = false;
    },
    clear() {
      box.textContent = '';
      box.hidden = true;
    },
  });
}

/**
 * `action` that does not start again while a call of it is still running, so that a second click (on the same
 * button, or on another row's) cannot send the request twice.
 */
/**
 * @template {unknown[]} A
 * @param {(...args: A) => Promise<unknown>} action
 * @returns {(...args: A) => Promise<void>}
 */
export function exclusive(action) {
  let running = false;
  return async (...args) => {
    if (running) return;
    running = true;
    try {
      await action(...args);
    } finally {
      running = false;
    }
  };
}

/**
 * A table that scrolls sideways inside itself when too wide; on a phone its rows become cards, each cell
 * labelled by its column (the `data-label` the CSS shows).
 */
/** @param {{ caption: string, columns: string[], rows: Child, className?: string }} table */
export function dataTable({ caption, columns, rows, className = '' }) {
  const table = h(
    'table',
    { class: `data-table ${className}`.trim() },
    h('caption', { class: 'visually-hidden' }, caption),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        columns.map((column) => h('th', { scope: 'col' }, column)),
      ),
    ),
    h('tbody', {}, rows),
  );
  return h('div', { class: 'table-scroll', role: 'region', 'aria-label': caption, tabindex: '0' }, table);
}

/**
 * @param {string} label
 * @param {...Child} content
 */
export function cell(label, ...content) {
  return h('td', { 'data-label': label }, content);
}

/** @type {Record<string, string>} */
const STATUS_LABELS = {
  pending: 'Pending',
  processing: 'Processing',
  completed: 'Completed',
  failed: 'Failed',
};

/** @param {string} status */
export function statusBadge(status) {
  return h('span', { class: `status status-${status}` }, STATUS_LABELS[status] ?? status);
}

/** @param {{ status: string }} task */
export function isFinal(task) {
  return task.status === 'completed' || task.status === 'failed';
}

/**
 * `<progress>` with its percentage beside it; `label` names it for screen readers.
 * @param {{ progress: number }} task
 * @param {string} label
 */
export function taskProgress(task, label) {
  const bar = h('progress', { max: '100', value: String(task.progress), 'aria-label': label });
  return h('span', { class: 'progress' }, bar, h('span', { class: 'progress-value' }, `${task.progress}%`));
}

/**
 * @param {string} text
 * @param {string} label
 */
export function codeBlock(text, label) {
  return h('pre', { class: 'code', tabindex: '0', 'aria-label': label }, h('code', {}, text));
}

/** @param {unknown} value */
export function json(value) {
  return JSON.stringify(value, null, 2);
}

/** @param {string} id */
export function shortId(id) {
  return id.length > 24 ? `${id.slice(0, 13)}…${id.slice(-6)}` : id;
}

/**
 * The result video, played from its signed link; a link that is not http(s) is not used at all.
 * @param {string} url
 * @param {string} label
 */
export function resultVideo(url, label) {
  const src = safeUrl(url);
  if (!src) return h('p', { class: 'error-box' }, 'The server gave a video link that is not a web address.');
  return h(
    'figure',
    { class: 'video' },
    h('video', { src, controls: true, playsinline: true, preload: 'auto', 'aria-label': label }),
    h(
      'figcaption',
      {},
      h('a', { href: src, download: '' }, 'Download the MP4'),
      ' (the link is valid for 24 hours).',
    ),
  );
}
