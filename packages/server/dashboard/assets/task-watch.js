// @ts-check
/**
 * Live task status: the task's event stream (EventSource sends the session cookie), falling back to polling
 * when the stream cannot be opened or drops before the task is final.
 */
import { ApiError, api } from './api.js';
import { isFinal } from './ui.js';

const POLL_MS = 2000;

/** An answer that asking again will not change: the task is gone (404), or the request is refused. */
/** @param {unknown} error */
function permanent(error) {
  return error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 429;
}

/**
 * Calls `onUpdate(task)` at every change until the task is final or `signal` fires. `onError(error, { retrying })`
 * reports a failed poll; with `retrying: false` the watch has given up (the task was deleted, say).
 * @param {string} taskId
 * @param {{
 *   signal: AbortSignal,
 *   onUpdate: (task: Task) => void,
 *   onError?: (error: unknown, state: { retrying: boolean }) => void,
 * }} handlers
 */
export function watchTask(taskId, { signal, onUpdate, onError }) {
  const path = `/v1/tasks/${encodeURIComponent(taskId)}`;
  /** @type {EventSource | null} */
  let source = null;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;

  function stop() {
    source?.close();
    source = null;
    clearTimeout(timer);
  }
  signal.addEventListener('abort', stop);

  async function poll() {
    try {
      /** @type {Task} */
      const task = await api(path, { signal });
      onUpdate(task);
      if (isFinal(task)) return;
    } catch (error) {
      if (signal.aborted) return;
      const retrying = !permanent(error);
      onError?.(error, { retrying });
      if (!retrying) return;
    }
    if (!signal.aborted) timer = setTimeout(poll, POLL_MS);
  }

  if (typeof EventSource !== 'function') {
    poll();
    return;
  }
  source = new EventSource(`${path}/events`);
  source.addEventListener('task', (event) => {
    const task = JSON.parse(event.data);
    onUpdate(task);
    if (isFinal(task)) stop();
  });
  source.addEventListener('error', () => {
    if (!source) return;
    stop();
    if (!signal.aborted) poll();
  });
}
