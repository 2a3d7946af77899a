// @ts-check
/** #/tasks: the account's tasks in the dashboard's environment, filtered, a page at a time, kept live. */
import { ApiError, api, describeError } from './api.js';
import { field, h, select, time } from './dom.js';
import { listModels } from './models.js';
import { navigate } from './router.js';
import { currentSession } from './session.js';
import { cell, dataTable, errorBox, isFinal, pageHeading, shortId, statusBadge, taskProgress } from './ui.js';

/** @type {[value: string, label: string][]} */
const STATUSES = [
  ['', 'Any status'],
  ['pending', 'Pending'],
  ['processing', 'Processing'],
  ['completed', 'Completed'],
  ['failed', 'Failed'],
];

const REFRESH_MS = 2000;

/**
 * A date input's day (local time) as Unix seconds; `nextDay` for an exclusive upper bound.
 * @param {string} value
 * @param {boolean} [nextDay]
 */
function daySeconds(value, nextDay = false) {
  const [year = 0, month = 1, day = 1] = value.split('-').map(Number);
  return Math.floor(new Date(year, month - 1, day + (nextDay ? 1 : 0)).getTime() / 1000);
}

/**
 * @param {URLSearchParams} filters
 * @param {string | null} cursor
 */
function listQuery(filters, cursor) {
  const query = new URLSearchParams({ limit: '20' });
  const status = filters.get('status');
  const model = filters.get('model');
  const from = filters.get('from');
  const to = filters.get('to');
  if (status) query.set('status', status);
  if (model) query.set('model', model);
  if (from) query.set('created_after', String(daySeconds(from)));
  if (to) query.set('created_before', String(daySeconds(to, true)));
  if (cursor) query.set('after', cursor);
  return query;
}

/**
 * The filters; the model filter offers the models `GET /v1/models` lists, once `models` has them (until then,
 * or when they cannot be read, only the one filtered on).
 * @param {URLSearchParams} filters
 * @param {Promise<readonly Model[]>} models
 */
function filterForm(filters, models) {
  const status = select({ name: 'status' }, STATUSES, filters.get('status') ?? '');
  const chosenModel = filters.get('model') ?? '';
  /**
   * @param {string[]} ids
   * @returns {[value: string, label: string][]}
   */
  const modelChoices = (ids) => [
    ['', 'Any model'],
    ...[...new Set([chosenModel, ...ids].filter(Boolean))].map(
      (id) => /** @type {[string, string]} */ ([id, id]),
    ),
  ];
  const model = select({ name: 'model' }, modelChoices([]), chosenModel);
  models.then(
    (list) => {
      // New options, then the choice set again: options moved out of another select would bring their
      // selectedness along, and the last of them would win.
      const chosen = model.value;
      model.replaceChildren(
        ...modelChoices(list.map(({ id }) => id)).map(([value, label]) => h('option', { value }, label)),
      );
      model.value = chosen;
    },
    () => {},
  );
  const from = h('input', { type: 'date', name: 'from', value: filters.get('from') ?? '' });
  const to = h('input', { type: 'date', name: 'to', value: filters.get('to') ?? '' });
  const form = h(
    'form',
    { class: 'card filters', role: 'search', 'aria-label': 'Filter tasks' },
    h('div', { class: 'form-row' }, field('Status', status), field('Model', model)),
    h('div', { class: 'form-row' }, field('Created from', from), field('Created until', to)),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'submit', class: 'button' }, 'Apply filters'),
      h('a', { href: '#/tasks', class: 'button secondary' }, 'Clear'),
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const chosen = new URLSearchParams();
    for (const [name, value] of new FormData(form)) if (value) chosen.set(name, String(value));
    const query = chosen.toString();
    navigate(query ? `#/tasks?${query}` : '#/tasks');
  });
  return form;
}

/**
 * A row of the table, with the task it shows.
 * @typedef {HTMLTableRowElement & { task: Task }} TaskRow
 */

/**
 * @param {Task} task
 * @returns {TaskRow}
 */
function taskRow(task) {
  const row = h(
    'tr',
    { 'data-task-id': task.id },
    cell('Task', h('a', { href: `#/tasks/${encodeURIComponent(task.id)}` }, h('code', {}, shortId(task.id)))),
    cell('Model', task.model),
    cell('Status', statusBadge(task.status)),
    cell('Progress', taskProgress(task, `Progress of ${task.id}`)),
    cell('Video', `${task.duration} s · ${task.quality} · ${task.aspect_ratio}`),
    cell('Created', time(task.created_at)),
  );
  return Object.assign(row, { task });
}

/**
 * @param {HTMLElement} main
 * @param {RouteContext} context
 */
export async function renderTasks(main, { query, signal }) {
  const errors = errorBox();
  /** @type {TaskRow[]} */
  const tbody = [];
  const listSlot = h('div', { 'aria-busy': 'true' }, h('p', { class: 'muted' }, 'Loading tasks…'));
  const more = h('button', { type: 'button', class: 'button secondary', hidden: true }, 'Load more');
  /** @type {string | null} */
  let cursor = null;

  function render() {
    if (tbody.length === 0) {
      const filtered = [...query.keys()].length > 0;
      listSlot.replaceChildren(
        h(
          'p',
          { class: 'empty' },
          filtered
            ? 'No tasks match these filters.'
            : [
                'No tasks yet. Start one in the ',
                h('a', { href: '#/playground' }, 'playground'),
                ' or through the API.',
              ],
        ),
      );
      return;
    }
    const table = dataTable({
      caption: 'Tasks',
      columns: ['Task', 'Model', 'Status', 'Progress', 'Video', 'Created'],
      rows: tbody,
      className: 'tasks-table',
    });
    listSlot.replaceChildren(table);
  }

  async function loadPage() {
    more.disabled = true;
    try {
      /** @type {TaskPage} */
      const page = await api(`/v1/tasks?${listQuery(query, cursor)}`, { signal });
      tbody.push(...page.data.map(taskRow));
      cursor = page.has_more ? page.next_cursor : null;
      more.hidden = !cursor;
      render();
      listSlot.removeAttribute('aria-busy');
    } catch (error) {
      if (signal.aborted) return;
      errors.show(error);
      if (tbody.length === 0) {
        listSlot.replaceChildren();
        listSlot.removeAttribute('aria-busy');
      }
    } finally {
      more.disabled = false;
    }
  }
  more.addEventListener('click', loadPage);

  /** Tasks deleted since they were listed (404): no longer asked about. */
  const gone = new Set();

  // Polling rather than one event stream per row: browsers allow only six connections to a server.
  async function refreshRunning() {
    if (signal.aborted) return;
    const running = tbody.filter((row) => !isFinal(row.task) && !gone.has(row.task.id));
    for (const row of running) {
      try {
        /** @type {Task} */
        const task = await api(`/v1/tasks/${encodeURIComponent(row.task.id)}`, { signal });
        if (task.status === row.task.status && task.progress === row.task.progress) continue;
        const fresh = taskRow(task);
        // A keyboard reader on the row's link keeps their place when the row is redrawn.
        const hadFocus = row.contains(document.activeElement);
        tbody[tbody.indexOf(row)] = fresh;
        row.replaceWith(fresh);
        if (hadFocus) fresh.querySelector('a')?.focus();
      } catch (error) {
        if (signal.aborted) return;
        // Other errors (a network blip) are tried again next round.
        if (error instanceof ApiError && error.status === 404) gone.add(row.task.id);
      }
    }
    if (!signal.aborted) setTimeout(refreshRunning, REFRESH_MS);
  }

  const models = listModels(signal);
  models.catch((error) => {
    if (!signal.aborted)
      errors.show(`The models could not be listed for the filter. ${describeError(error)}`);
  });
  const environment = currentSession()?.environment ?? 'development';
  main.replaceChildren(
    ...pageHeading(
      'Tasks',
      `Tasks of this account in the ${environment} environment, newest first. Running tasks update live.`,
    ),
    errors,
    filterForm(query, models),
    h('section', { 'aria-label': 'Task list' }, listSlot, h('div', { class: 'actions' }, more)),
  );
  await loadPage();
  setTimeout(refreshRunning, REFRESH_MS);
}
