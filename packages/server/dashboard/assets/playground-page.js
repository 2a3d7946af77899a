/**
 * #/playground: a form per mode that uploads the chosen files, creates a task with the session, follows it to
 * the end and plays the video, with the equivalent curl command beside it. The models come from
 * `GET /v1/models`: what each one takes as the server routes it (its upload fields, durations, qualities and
 * aspect ratios) and whether it can run now; without that list the form offers what the catalogue allows.
 */
import { api, describeError } from './api.js';
import { copyButton } from './clipboard.js';
import { curlCommands } from './curl.js';
import { field, h, select, uid } from './dom.js';
import { currentSession } from './session.js';
import { watchTask } from './task-watch.js';
import { codeBlock, errorBox, pageHeading, resultVideo, statusBadge } from './ui.js';

const MODES = {
  text: { label: 'Text to video' },
  image: { label: 'Image to video' },
  reference: { label: 'Reference to video' },
};

/** The catalogue's own limits, the built-in behaviour when the server's list of models cannot be read. */
const CATALOGUE = {
  inputs: {
    text: {},
    image: { image_urls: { min: 1, max: 2 } },
    reference: {
      image_urls: { min: 0, max: 9 },
      video_urls: { min: 0, max: 3 },
      audio_urls: { min: 0, max: 3 },
    },
  },
  durations: [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  qualities: ['480p', '720p', '1080p'],
  aspectRatios: ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9', 'adaptive'],
};

const ACCEPT = { image: 'image/*', video: 'video/*', audio: 'audio/*' };
/** How often the page reads the models again, to follow workers starting and stopping. */
const REFRESH_MS = 10_000;

function modelId(mode, fast) {
  return `videogen-2.0-${fast ? 'fast-' : ''}${mode}-to-video`;
}

/** A model as `GET /v1/models` describes it, from the catalogue alone. */
function builtInModel(mode, fast) {
  return {
    id: modelId(mode, fast),
    mode,
    fast,
    inputs: CATALOGUE.inputs[mode],
    durations: CATALOGUE.durations,
    qualities: CATALOGUE.qualities,
    aspect_ratios: CATALOGUE.aspectRatios,
    available: true,
  };
}

/** The upload fields for the asset fields a model takes (`inputs`), in the order the prompt names them. */
function uploadSpecs(mode, inputs) {
  const specs = [];
  const images = inputs.image_urls;
  if (mode === 'image' && images) {
    specs.push({
      key: 'first',
      field: 'image_urls',
      kind: 'image',
      label: 'First frame',
      max: 1,
      required: images.min > 0,
    });
    // An engine that takes no last frame narrows image_urls to one.
    if (images.max > 1)
      specs.push({ key: 'last', field: 'image_urls', kind: 'image', label: 'Last frame (optional)', max: 1 });
  }
  if (mode === 'reference') {
    const { video_urls: videos, audio_urls: audios } = inputs;
    if (images)
      specs.push({
        key: 'images',
        field: 'image_urls',
        kind: 'image',
        label: `Images (up to ${images.max})`,
        max: images.max,
      });
    if (videos)
      specs.push({
        key: 'videos',
        field: 'video_urls',
        kind: 'video',
        label: `Videos (up to ${videos.max})`,
        max: videos.max,
      });
    if (audios)
      specs.push({
        key: 'audio',
        field: 'audio_urls',
        kind: 'audio',
        label: `Audio (up to ${audios.max}; the first is the soundtrack)`,
        max: audios.max,
      });
  }
  return specs;
}

function sameSpec(a, b) {
  return (
    a.key === b.key && a.label === b.label && a.max === b.max && Boolean(a.required) === Boolean(b.required)
  );
}

/** The ratios to offer, the API's default first: `adaptive`, except for text, where it has nothing to follow. */
function ratiosOf(mode, ratios) {
  const fixed = ratios.filter((ratio) => ratio !== 'adaptive');
  if (mode === 'text') return fixed;
  return ratios.includes('adaptive') ? ['adaptive', ...fixed] : fixed;
}

/** Replaces a select's options, keeping its value when still offered, else `preferred`, else the first. */
function offer(control, values, preferred) {
  const current = control.value;
  const chosen = values.includes(current) ? current : values.includes(preferred) ? preferred : values[0];
  control.replaceChildren(
    ...values.map((value) => h('option', { value, selected: value === chosen }, value)),
  );
  control.value = chosen ?? '';
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
  const durationChoices = h('datalist', { id: uid('durations') });
  const duration = h('input', {
    type: 'number',
    name: 'duration',
    min: '4',
    max: '15',
    step: '1',
    value: '5',
    required: true,
    list: durationChoices.id,
  });
  const quality = select(
    { name: 'quality' },
    CATALOGUE.qualities.map((value) => [value, value]),
    '720p',
  );
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
  const fastLabel = h('label', { for: fast.id }, 'Fast variant');
  const unavailableMark = h('span');
  // Said out when the chosen model cannot run now; the task can be created all the same.
  const modelNote = h('div', { role: 'status' });
  let uploads = [];
  /** File → URL returned by /v1/files, so a second run does not upload the same file again. */
  const uploaded = new Map();
  let running = null;
  /** Model ID → model, from `GET /v1/models`; null until it has answered (or when it failed). */
  let models = null;

  /** The model a mode and the fast toggle pick, as the server lists it (else from the catalogue). */
  function modelOf(pickedMode, pickedFast) {
    return models?.get(modelId(pickedMode, pickedFast)) ?? builtInModel(pickedMode, pickedFast);
  }
  const selectedModel = () => modelOf(mode, fast.checked);

  const modeChoices = Object.entries(MODES).map(([value, { label }]) => {
    const id = uid('mode');
    const radio = h('input', { type: 'radio', name: 'mode', value, id, checked: value === mode });
    radio.addEventListener('change', () => {
      mode = value;
      history.replaceState(null, '', `#/playground?mode=${value}`);
      applyModel({ modeChanged: true });
    });
    return { value, text: label, label: h('label', { for: id }, label), radio };
  });
  const modeRadios = modeChoices.map(({ radio, label }) => h('div', { class: 'radio' }, radio, label));
  fast.addEventListener('change', () => applyModel({ modeChanged: false }));

  /** "(unavailable)" after the label of a choice whose model cannot run now. */
  function markedLabel(text, model) {
    return model.available ? text : `${text} (unavailable)`;
  }

  /** Marks the choices whose model cannot run now, and says why for the chosen one. */
  function showAvailability() {
    for (const choice of modeChoices)
      choice.label.textContent = markedLabel(choice.text, modelOf(choice.value, fast.checked));
    fastLabel.textContent = markedLabel('Fast variant', modelOf(mode, true));
    const model = selectedModel();
    unavailableMark.textContent = model.available ? '' : ' (unavailable)';
    modelNote.replaceChildren(
      ...(model.available
        ? []
        : [
            h(
              'p',
              { class: 'warning' },
              h('code', {}, model.id),
              ` cannot run now: ${model.unavailable_reason ?? 'the server did not say why.'} `,
              'You can still create the task: it waits until the model can run.',
            ),
          ]),
    );
  }

  /** The form's fields for the chosen model: its upload fields, durations, qualities and aspect ratios. */
  function applyModel({ modeChanged }) {
    const model = selectedModel();
    // Fields the new model takes alike keep their files; the others go.
    const next = uploadSpecs(mode, model.inputs).map(
      (spec) => uploads.find((upload) => sameSpec(upload.spec, spec)) ?? uploadField(spec, updateCurl),
    );
    for (const upload of uploads) if (!next.includes(upload)) upload.release();
    const changed = next.length !== uploads.length || next.some((upload, i) => upload !== uploads[i]);
    uploads = next;
    if (changed) uploadsSlot.replaceChildren(...uploads.map((upload) => upload.element));

    const durations = model.durations.length > 0 ? model.durations : CATALOGUE.durations;
    duration.min = String(Math.min(...durations));
    duration.max = String(Math.max(...durations));
    durationChoices.replaceChildren(...durations.map((seconds) => h('option', { value: String(seconds) })));
    checkDuration();
    offer(quality, model.qualities.length > 0 ? model.qualities : CATALOGUE.qualities, '720p');
    const ratios = ratiosOf(
      mode,
      model.aspect_ratios.length > 0 ? model.aspect_ratios : CATALOGUE.aspectRatios,
    );
    // A new mode starts from the API's default ratio; another model of the same mode keeps the one chosen.
    if (modeChanged) aspectRatio.value = '';
    offer(aspectRatio, ratios, ratios[0]);
    showAvailability();
    updateCurl();
  }

  /** Within min and max, but not a duration the model takes (when its durations have gaps). */
  function checkDuration() {
    const durations = selectedModel().durations;
    const seconds = Number(duration.value);
    const taken = duration.value === '' || durations.length === 0 || durations.includes(seconds);
    duration.setCustomValidity(taken ? '' : `This model takes ${durations.join(', ')} seconds.`);
  }
  duration.addEventListener('input', checkDuration);

  function byId(list) {
    return new Map((list?.data ?? []).map((model) => [model.id, model]));
  }

  /** Reads the models again now and then, to follow workers starting and stopping and circuits opening. */
  let refreshTimer;
  function scheduleRefresh() {
    refreshTimer = setTimeout(async () => {
      try {
        models = byId(await api('/v1/models', { signal }));
        showAvailability();
      } catch {
        // Keep what is shown: the page was left, or this read failed and the next one may not.
      }
      if (!signal.aborted) scheduleRefresh();
    }, REFRESH_MS);
  }
  signal.addEventListener('abort', () => clearTimeout(refreshTimer));

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
    modelOutput.textContent = selectedModel().id;
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
        fastLabel,
        h('p', { class: 'hint' }, 'Model: ', modelOutput, unavailableMark),
      ),
      field('Duration (seconds)', duration),
      field('Quality', quality),
      field('Aspect ratio', aspectRatio),
    ),
    durationChoices,
    modelNote,
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
  applyModel({ modeChanged: true });

  // The form works at once with the catalogue's limits; the server's list then narrows it, keeping what was chosen.
  form.setAttribute('aria-busy', 'true');
  try {
    models = byId(await api('/v1/models', { signal }));
    applyModel({ modeChanged: false });
    scheduleRefresh();
  } catch (error) {
    if (signal.aborted) return;
    errors.show(
      `The models could not be listed, so the form offers what the catalogue allows and cannot tell whether a model can run now. ${describeError(error)}`,
    );
  } finally {
    form.removeAttribute('aria-busy');
  }
}
