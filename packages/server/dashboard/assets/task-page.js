// @ts-check
/** #/tasks/<id>: one task, live: its status and progress, the video, its request and JSON, its callbacks. */
import { ApiError, api, describeError } from './api.js';
import { confirmDialog } from './dialogs.js';
import { announce, h, time } from './dom.js';
import { navigate } from './router.js';
import { watchTask } from './task-watch.js';
import {
  codeBlock,
  errorBox,
  exclusive,
  isFinal,
  json,
  pageHeading,
  resultVideo,
  statusBadge,
  taskProgress,
} from './ui.js';

const DELIVERY_REFRESH_MS = 3000;

/** @param {Task} task */
function summary(task) {
  /** @type {[term: string, value: Child][]} */
  const rows = [
    ['Status', statusBadge(task.status)],
    ['Progress', taskProgress(task, 'Task progress')],
    ['Model', task.model],
    ['Duration', `${task.duration} s`],
    ['Quality', task.quality],
    ['Aspect ratio', task.aspect_ratio],
    ['Seed', String(task.seed)],
    ['Created', time(task.created_at)],
    ['Updated', time(task.updated_at)],
  ];
  if (task.status === 'completed' || task.status === 'failed') rows.push(['Ended', time(task.completed_at)]);
  if (task.status === 'failed')
    rows.push(['Error', h('span', {}, h('code', {}, task.error.code), ` ${task.error.message}`)]);
  return h(
    'dl',
    { class: 'summary' },
    rows.map(([term, value]) => h('div', {}, h('dt', {}, term), h('dd', {}, value))),
  );
}

/** @param {Delivery['attempts'][number]} attempt */
function attemptResult(attempt) {
  if (attempt.http_status !== undefined) return `HTTP ${attempt.http_status}`;
  return attempt.error ?? '—';
}

/** @param {readonly Delivery[]} deliveries */
function deliveryList(deliveries) {
  if (deliveries.length === 0)
    return h('p', { class: 'empty' }, 'No callbacks have been sent for this task.');
  return h(
    'ol',
    { class: 'deliveries' },
    deliveries.map((delivery) =>
      h(
        'li',
        { class: 'card delivery', 'data-delivery-id': delivery.id },
        h(
          'p',
          { class: 'delivery-head' },
          h('strong', {}, delivery.event),
          ' to ',
          h('code', {}, delivery.url),
          ' ',
          h('span', { class: `status delivery-${delivery.status}` }, delivery.status),
        ),
        h(
          'p',
          { class: 'muted' },
          h('code', {}, delivery.id),
          ' · created ',
          time(delivery.created_at),
          delivery.status === 'pending' && delivery.next_attempt_at
            ? [' · next attempt ', time(delivery.next_attempt_at)]
            : null,
        ),
        delivery.attempts.length === 0
          ? h('p', { class: 'muted' }, 'Not attempted yet.')
          : h(
              'table',
              { class: 'attempts' },
              h('caption', { class: 'visually-hidden' }, `Attempts of ${delivery.id}`),
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ['#', 'Attempted', 'Result', 'Duration'].map((c) => h('th', { scope: 'col' }, c)),
                ),
              ),
              h(
                'tbody',
                {},
                delivery.attempts.map((attempt, index) =>
                  h(
                    'tr',
                    {},
                    h('td', {}, String(index + 1)),
                    h('td', {}, time(attempt.attempted_at)),
                    h('td', {}, attemptResult(attempt)),
                    h('td', {}, `${attempt.duration_ms} ms`),
                  ),
                ),
              ),
            ),
      ),
    ),
  );
}

/**
 * @param {HTMLElement} main
 * @param {RouteContext} context
 */
export async function renderTask(main, { params: [taskId = ''], signal }) {
  const path = `/v1/tasks/${encodeURIComponent(taskId)}`;
  const errors = errorBox();
  // Not a live region: it is redrawn at every progress step; status changes are announced instead.
  const summarySlot = h('div');
  const actionsSlot = h('div', { class: 'actions' });
  const videoSlot = h('div');
  const taskJson = h('div');
  const requestJson = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const deliveriesSlot = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  /** @type {Task | null} */
  let task = null;
  /**
   * The request as the task was created with it (`GET /dashboard/api/tasks/{id}/request`).
   * @type {{ callback_url?: string } | null}
   */
  let request = null;
  /** @type {HTMLElement | null} */
  let shownVideo = null;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let deliveryTimer;
  signal.addEventListener('abort', () => clearTimeout(deliveryTimer));

  // One action at a time: a double click cancels, deletes or redelivers once.
  const cancel = exclusive(async () => {
    const confirmed = await confirmDialog({
      title: 'Cancel this task?',
      content: h('p', {}, 'It stops rendering and fails with the error code cancelled.'),
      confirmLabel: 'Cancel task',
      danger: true,
      signal,
    });
    if (!confirmed) return;
    try {
      show(await api(`${path}/cancel`, { method: 'POST' }));
      announce('Task cancelled.');
    } catch (error) {
      errors.show(error);
    }
  });

  const remove = exclusive(async () => {
    const confirmed = await confirmDialog({
      title: 'Delete this task?',
      content: h('p', {}, 'The task, its video and its callback log are deleted. This cannot be undone.'),
      confirmLabel: 'Delete task',
      danger: true,
      signal,
    });
    if (!confirmed) return;
    try {
      await api(path, { method: 'DELETE' });
      announce('Task deleted.');
      navigate('#/tasks');
    } catch (error) {
      errors.show(error);
    }
  });

  const redeliver = exclusive(async () => {
    try {
      await api(`${path}/deliveries/redeliver`, { method: 'POST' });
      announce('A new callback was queued.');
      // Following again: the loop may have stopped once every earlier delivery had ended.
      await followDeliveries();
    } catch (error) {
      errors.show(error);
    }
  });

  function renderActions() {
    // The buttons are replaced (Cancel becomes Delete): keep the keyboard focus among them.
    const hadFocus = actionsSlot.contains(document.activeElement);
    actionsSlot.replaceChildren(
      task && isFinal(task)
        ? h('button', { type: 'button', class: 'button danger', onclick: remove }, 'Delete task')
        : h('button', { type: 'button', class: 'button danger', onclick: cancel }, 'Cancel task'),
      ...(request?.callback_url
        ? [
            h(
              'button',
              { type: 'button', class: 'button secondary', onclick: redeliver },
              'Send the callback again',
            ),
          ]
        : []),
    );
    if (hadFocus) actionsSlot.querySelector('button')?.focus();
  }

  /** @param {Task} next */
  function show(next) {
    const statusChanged = task?.status !== next.status;
    task = next;
    summarySlot.replaceChildren(summary(task));
    taskJson.replaceChildren(codeBlock(json(task), 'Task JSON'));
    if (statusChanged) {
      renderActions();
      if (task.status !== 'pending') announce(`Task ${task.status}.`);
    }
    const url = task.status === 'completed' ? task.results[0] : undefined;
    // A fresh signed link on every poll would restart the video; keep the one already playing.
    if (url && !shownVideo) {
      shownVideo = resultVideo(url, 'Generated video');
      videoSlot.replaceChildren(h('h2', {}, 'Video'), shownVideo);
    }
  }

  async function loadDeliveries() {
    try {
      /** @type {{ data: Delivery[] }} */
      const { data } = await api(`${path}/deliveries`, { signal });
      deliveriesSlot.replaceChildren(deliveryList(data));
      return data;
    } catch (error) {
      if (!signal.aborted)
        deliveriesSlot.replaceChildren(h('p', { class: 'error-box' }, describeError(error)));
      return [];
    }
  }

  /** Reloads the deliveries while the task runs or one is pending; calling it again restarts, never doubles, the loop. */
  async function followDeliveries() {
    clearTimeout(deliveryTimer);
    if (signal.aborted) return;
    // Taken before the list is asked for: a task that ends while the list is on its way has a final callback
    // the list cannot hold yet, so the list is read once more after the task has ended.
    const running = () => task !== null && !isFinal(task);
    const runningBefore = running();
    const deliveries = await loadDeliveries();
    const busy = runningBefore || running() || deliveries.some((delivery) => delivery.status === 'pending');
    clearTimeout(deliveryTimer);
    if (busy && !signal.aborted) deliveryTimer = setTimeout(followDeliveries, DELIVERY_REFRESH_MS);
  }

  main.replaceChildren(
    ...pageHeading('Task'),
    h('p', { class: 'task-id' }, h('code', {}, taskId), ' · ', h('a', { href: '#/tasks' }, 'All tasks')),
    errors,
  );
  try {
    show(await api(path, { signal }));
  } catch (error) {
    if (signal.aborted) return;
    errors.show(
      error instanceof ApiError && error.code === 'task_not_found'
        ? 'There is no such task in this environment.'
        : error,
    );
    return;
  }
  main.append(
    summarySlot,
    actionsSlot,
    videoSlot,
    h(
      'section',
      { 'aria-labelledby': 'request-heading' },
      h('h2', { id: 'request-heading' }, 'Request'),
      requestJson,
    ),
    h(
      'section',
      { 'aria-labelledby': 'task-json-heading' },
      h('h2', { id: 'task-json-heading' }, 'Task JSON'),
      taskJson,
    ),
    h(
      'section',
      { 'aria-labelledby': 'deliveries-heading' },
      h('h2', { id: 'deliveries-heading' }, 'Callback deliveries'),
      deliveriesSlot,
    ),
  );
  if (task && !isFinal(task))
    watchTask(taskId, { signal, onUpdate: show, onError: (error) => errors.show(error) });
  /** @type {Promise<{ request: { callback_url?: string } }>} */
  const requested = api(`/dashboard/api/tasks/${encodeURIComponent(taskId)}/request`, { signal });
  requested
    .then((answer) => {
      request = answer.request;
      requestJson.replaceChildren(codeBlock(json(request), 'Request JSON'));
      renderActions();
    })
    .catch((error) => {
      if (!signal.aborted) requestJson.replaceChildren(h('p', { class: 'error-box' }, describeError(error)));
    });
  followDeliveries();
}
