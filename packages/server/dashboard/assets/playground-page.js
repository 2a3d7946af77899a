/**
 * #/playground: a form per mode that uploads the chosen files, creates a task with the session, follows it to
 * the end and plays the video, with the equivalent curl command beside it.
 */
import { api } from './api.js';
import { copyButton } from './clipboard.js';
import { curlCommands } from './curl.js';
import { field, h, select, uid } from './dom.js';
import { currentSession } from './session.js';
import { watchTask } from './task-watch.js';
import { codeBlock, errorBox, pageHeading, resultVideo, statusBadge } from './ui.js';

const MODES = {
  text: { label: 'Text to video', uploads: [] },
  image: {
    label: 'Image to video',
    uploads: [
      { key: 'first', field: 'image_urls', kind: 'image', label: 'First frame', max: 1, required: true },
      { key: 'last', field: 'image_urls', kind: 'image', label: 'Last frame (optional)', max: 1 },
    ],
  },
  reference: {
    label: 'Reference to video',
    uploads: [
      { key: 'images', field: 'image_urls', kind: 'image', label: 'Images (up to 9)', max: 9 },
      { key: 'videos', field: 'video_urls', kind: 'video', label: 'Videos (up to 3)', max: 3 },
      {
        key: 'audio',
        field: 'audio_urls',
        kind: 'audio',
        label: 'Audio (up to 3; the first is the soundtrack)',
        max: 3,
      },
    ],
  },
};

const QUALITIES = [
  ['480p', '480p'],
  ['720p', '720p'],
  ['1080p', '1080p'],
];
const RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9'];
const ACCEPT = { image: 'image/*', video: 'video/*', audio: 'audio/*' };

function modelId(mode, fast) {
  return `videogen-2.0-${fast ? 'fast-' : ''}${mode}-to-video`;
}

/** A file input with previews of what it holds, named as the prompt names them ("image 1"). */
function uploadField(spec, onChange) {
  const input = h('input', {
    type: 'file',
    name: spec.key,
    accept: ACCEPT[spec.kind],
    multiple: spec.max > 1,
    required: Boolean(spec.required),
  });
  const previews = h('ul', { class: 'previews', 'aria-label': `${spec.label}: previews` });
  const urls = [];
  input.addEventListener('change', () => {
    for (const url of urls.splice(0)) URL.revokeObjectURL(url);
    const files = [...input.files];
    input.setCustomValidity(files.length > spec.max ? `Choose at most ${spec.max} files.` : '');
    previews.replaceChildren(
      ...files.map((file) => {
        const url = URL.createObjectURL(file);
        urls.push(url);
        const media =
          spec.kind === 'image'
            ? h('img', { src: url, alt: `Preview of ${file.name}` })
            : h(spec.kind, { src: url, controls: true, 'aria-label': `Preview of ${file.name}` });
        return h('li', { class: 'preview' }, media, h('span', {}, file.name));
      }),
    );
    onChange();
  });
  const wrapper = field(spec.label, input);
  wrapper.append(previews);
  return {
    spec,
    input,
    element: wrapper,
    files: () => [...input.files],
    release: () => {
      for (const url of urls.splice(0)) URL.revokeObjectURL(url);
    },
  };
}

export async function renderPlayground(main, { signal, query }) {
  let mode = MODES[query.get('mode')] ? query.get('mode') : 'text';
  const errors = errorBox();
  const prompt = h('textarea', { name: 'prompt', rows: '3', required: true, maxlength: '5000' });
  const fast = h('input', { type: 'checkbox', name: 'fast', id: uid('fast'), checked: true });
  const modelOutput = h('output', { class: 'model-id' });
  const duration = h('input', {
    type: 'number',
    name: 'duration',
    min: '4',
    max: '15',
    step: '1',
    value: '5',
    required: true,
  });
  const quality = select({ name: 'quality' }, QUALITIES, '720p');
  const aspectRatio = h('select', { name: 'aspect_ratio' });
  const seed = h('input', {
    type: 'number',
    name: 'seed',
    min: '0',
    max: '4294967295',
    step: '1',
    inputmode: 'numeric',
  });
  const callbackUrl = h('input', {
    type: 'url',
    name: 'callback_url',
    placeholder: 'https://example.com/hooks/videogen',
  });
  const uploadsSlot = h('div', { class: 'uploads' });
  const submit = h('button', { type: 'submit', class: 'button' }, 'Generate video');
  const curlBlock = codeBlock('', 'Equivalent curl command');
  const curlCode = curlBlock.querySelector('code');
  // Only the stage line is live: the whole section would be read out again at every progress step.
  const runSlot = h('section', { class: 'run', 'aria-labelledby': 'run-heading', hidden: true });
  let uploads = [];
  /** File → URL returned by /v1/files, so a second run does not upload the same file again. */
  const uploaded = new Map();
  let running = null;

  const modeRadios = Object.entries(MODES).map(([value, { label }]) => {
    const id = uid('mode');
    const radio = h('input', { type: 'radio', name: 'mode', value, id, checked: value === mode });
    radio.addEventListener('change', () => {
      mode = value;
      history.replaceState(null, '', `#/playground?mode=${value}`);
      renderModeFields();
    });
    return h('div', { class: 'radio' }, radio, h('label', { for: id }, label));
  });

  function renderModeFields() {
    for (const upload of uploads) upload.release();
    uploads = MODES[mode].uploads.map((spec) => uploadField(spec, updateCurl));
    uploadsSlot.replaceChildren(...uploads.map((upload) => upload.element));
    const ratios = mode === 'text' ? RATIOS : ['adaptive', ...RATIOS];
    // The API's defaults: 16:9 for text, the first image's (or video's) shape otherwise.
    const chosen = ratios[0];
    aspectRatio.replaceChildren(
      ...ratios.map((ratio) => h('option', { value: ratio, selected: ratio === chosen }, ratio)),
    );
    updateCurl();
  }

  /** The request body; files not uploaded yet stand as placeholders (for the curl command). */
  function body(urlOf = (file) => uploaded.get(file) ?? `<url of ${file.name} from /v1/files>`) {
    const request = { model: modelId(mode, fast.checked), prompt: prompt.value.trim() };
    for (const upload of uploads) {
      const files = upload.files();
      if (files.length > 0)
        request[upload.spec.field] = [...(request[upload.spec.field] ?? []), ...files.map(urlOf)];
    }
    request.duration = Number(duration.value) || 5;
    request.quality = quality.value;
    request.aspect_ratio = aspectRatio.value;
    if (seed.value !== '') request.seed = Number(seed.value);
    if (callbackUrl.value.trim()) request.callback_url = callbackUrl.value.trim();
    return request;
  }

  function updateCurl() {
    modelOutput.textContent = modelId(mode, fast.checked);
    const pending = uploads.flatMap((upload) => upload.files()).filter((file) => !uploaded.has(file));
    curlCode.textContent = curlCommands({ origin: location.origin, body: body(), uploads: pending });
  }

  async function upload(file, report, uploadSignal) {
    if (uploaded.has(file)) return uploaded.get(file);
    report(`Uploading ${file.name}…`);
    const form = new FormData();
    form.append('file', file, file.name);
    const answer = await api('/v1/files', { method: 'POST', form, signal: uploadSignal });
    uploaded.set(file, answer.url);
    return answer.url;
  }

  async function run() {
    errors.clear();
    running?.abort();
    running = new AbortController();
    const runSignal = AbortSignal.any([signal, running.signal]);
    const stage = h('p', { class: 'stage', role: 'status' }, 'Starting…');
    const bar = h('progress', { max: '100', value: '0', 'aria-labelledby': 'run-progress-label' });
    const percent = h('span', { class: 'progress-value' }, '0%');
    const status = h('span');
    const taskLink = h('p');
    const videoSlot = h('div');
    runSlot.hidden = false;
    runSlot.replaceChildren(
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
    submit.disabled = true;
    try {
      const files = new Map();
      for (const file of uploads.flatMap((item) => item.files())) {
        const report = (text) => {
          stage.textContent = text;
        };
        files.set(file, await upload(file, report, runSignal));
      }
      updateCurl();
      stage.textContent = 'Creating the task…';
      const task = await api('/v1/videos/generations', {
        method: 'POST',
        json: body((file) => files.get(file)),
        signal: runSignal,
      });
      stage.textContent = 'Rendering…';
      taskLink.replaceChildren(
        'Task ',
        h('a', { href: `#/tasks/${encodeURIComponent(task.id)}` }, h('code', {}, task.id)),
      );
      await new Promise((resolve) => {
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
      });
    } catch (error) {
      if (!runSignal.aborted) {
        stage.textContent = 'Nothing was started.';
        errors.show(error);
      }
    } finally {
      submit.disabled = false;
    }
  }

  const form = h(
    'form',
    { class: 'card playground-form', 'aria-label': 'Generation request' },
    h('fieldset', { class: 'modes' }, h('legend', {}, 'Mode'), modeRadios),
    field('Prompt', prompt, 'Name your files as “image 1”, “video 1”, “audio 1” in the order chosen.'),
    h(
      'div',
      { class: 'form-row' },
      h(
        'div',
        { class: 'field checkbox' },
        fast,
        h('label', { for: fast.id }, 'Fast variant'),
        h('p', { class: 'hint' }, 'Model: ', modelOutput),
      ),
      field('Duration (seconds)', duration),
      field('Quality', quality),
      field('Aspect ratio', aspectRatio),
    ),
    uploadsSlot,
    h(
      'details',
      { class: 'more-options' },
      h('summary', {}, 'More options'),
      h(
        'div',
        { class: 'form-row' },
        field('Seed', seed, 'Empty for a random seed; the task shows the one used.'),
        field('Callback URL', callbackUrl, 'Called when the task starts and ends; see the Webhooks page.'),
      ),
    ),
    h('div', { class: 'actions' }, submit),
  );
  form.addEventListener('input', updateCurl);
  form.addEventListener('change', updateCurl);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    run();
  });
  signal.addEventListener('abort', () => {
    for (const upload of uploads) upload.release();
  });

  const environment = currentSession()?.environment ?? 'development';
  main.replaceChildren(
    ...pageHeading(
      'Playground',
      `Try the models with your session: tasks run in the ${environment} environment and appear under Tasks.`,
    ),
    errors,
    h(
      'div',
      { class: 'playground' },
      form,
      h(
        'section',
        { class: 'curl', 'aria-labelledby': 'curl-heading' },
        h('h2', { id: 'curl-heading' }, 'The same request with curl'),
        h(
          'p',
          { class: 'hint' },
          'Set ',
          h('code', {}, 'VIDEOGEN_API_KEY'),
          ' to a key of this environment first.',
        ),
        curlBlock,
        copyButton({ text: () => curlCode.textContent, source: curlCode, label: 'Copy command' }),
      ),
    ),
    runSlot,
  );
  renderModeFields();
}
