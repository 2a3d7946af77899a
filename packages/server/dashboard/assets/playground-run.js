// @ts-check
/**
 * The playground's Result section: one run at a time (a new one stops the last), from uploading the chosen
 * files to playing the video.
 */
import { h } from './dom.js';
import { watchTask } from './task-watch.js';
import { resultVideo, statusBadge } from './ui.js';

/**
 * What a run does: upload `files`, then create the task with their URLs.
 * @typedef {{
 *   files: File[],
 *   upload: (file: File, report: (text: string) => void, signal: AbortSignal) => Promise<string>,
 *   create: (urlOf: (file: File) => string, signal: AbortSignal) => Promise<Task>,
 *   refused: (error: unknown) => void,
 * }} Run
 */

/**
 * `run({ files, upload, create, refused })` uploads `files` with `upload(file, report, signal)` (resolving to
 * the file's URL), creates the task with `create(urlOf, signal)` and follows it to the end. An upload or creation
 * the server refuses starts nothing and goes to `refused(error)`; what happens later goes to `errors`.
 * @param {{ signal: AbortSignal, errors: ErrorBox }} options
 */
export function runSection({ signal, errors }) {
  // Only the stage line is live: the whole section would be read out again at every progress step.
  const element = h('section', { class: 'run', 'aria-labelledby': 'run-heading', hidden: true });
  /** @type {AbortController | null} */
  let running = null;

  /** @param {Run} request */
  async function run({ files, upload, create, refused }) {
    running?.abort();
    running = new AbortController();
    const runSignal = AbortSignal.any([signal, running.signal]);
    const stage = h('p', { class: 'stage', role: 'status' }, 'Starting…');
    const bar = h('progress', { max: '100', value: '0', 'aria-labelledby': 'run-progress-label' });
    const percent = h('span', { class: 'progress-value' }, '0%');
    const status = h('span');
    const taskLink = h('p');
    const videoSlot = h('div');
    element.hidden = false;
    element.replaceChildren(
      h('h2', { id: 'run-heading' }, 'Result'),
      stage,
      h(
        'p',
        { class: 'progress' },
        h('span', { id: 'run-progress-label' }, 'Progress'),
        ' ',
        bar,
        percent,
        ' ',
        status,
      ),
      taskLink,
      videoSlot,
    );
    let task;
    try {
      /** @type {Map<File, string>} */
      const urls = new Map();
      /** @param {string} text */
      const report = (text) => {
        stage.textContent = text;
      };
      for (const file of files) urls.set(file, await upload(file, report, runSignal));
      stage.textContent = 'Creating the task…';
      task = await create((file) => urls.get(file) ?? '', runSignal);
    } catch (error) {
      if (!runSignal.aborted) {
        stage.textContent = 'Nothing was started.';
        refused(error);
      }
      return;
    }
    stage.textContent = 'Rendering…';
    taskLink.replaceChildren(
      'Task ',
      h('a', { href: `#/tasks/${encodeURIComponent(task.id)}` }, h('code', {}, task.id)),
    );
    await new Promise(
      /** @param {(value?: unknown) => void} resolve */
      (resolve) => {
        watchTask(task.id, {
          signal: runSignal,
          onError: (error, { retrying }) => {
            errors.show(error);
            if (retrying) return;
            // Given up (the task was deleted meanwhile, say): end the run so the button works again.
            stage.textContent = 'The task can no longer be followed.';
            resolve();
          },
          onUpdate: (next) => {
            bar.value = next.progress;
            percent.textContent = `${next.progress}%`;
            status.replaceChildren(statusBadge(next.status));
            if (next.status === 'completed') {
              stage.textContent = 'Done.';
              if (next.results?.[0])
                videoSlot.replaceChildren(resultVideo(next.results[0], 'Generated video'));
              resolve();
            } else if (next.status === 'failed') {
              stage.textContent = 'The task failed.';
              errors.show(next.error ? `${next.error.code}: ${next.error.message}` : 'The task failed.');
              resolve();
            }
          },
        });
        runSignal.addEventListener('abort', resolve);
      },
    );
  }

  return { element, run };
}
