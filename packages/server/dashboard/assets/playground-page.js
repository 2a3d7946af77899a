// @ts-check
/**
 * #/playground: a form per mode that uploads the chosen files, creates a task with the session, follows it to
 * the end and plays the video, with the equivalent curl command beside it. Everything the form offers comes
 * from `GET /v1/models`: the modes and models, what each takes as the server routes it (its upload fields,
 * durations, qualities and aspect ratios) and whether it can run now. A field left at "Server default" is not
 * sent, so the server applies its own default (the task shows the value used).
 */
import { api, describeError } from './api.js';
import { copyButton } from './clipboard.js';
import { curlCommands } from './curl.js';
import { field, h, uid } from './dom.js';
import { fieldErrors } from './field-errors.js';
import { listModels, modeLabel } from './models.js';
import { runSection } from './playground-run.js';
import { sameSpec, uploadField, uploadSpecs } from './playground-uploads.js';
import { currentSession } from './session.js';
import { codeBlock, errorBox, pageHeading } from './ui.js';

/** How often the page reads the models again, to follow workers starting and stopping. */
const REFRESH_MS = 10_000;

/** @typedef {import('./playground-uploads.js').Upload} Upload */
/** @typedef {ReturnType<typeof requestControls>} Controls */
/** @typedef {ReturnType<typeof modelPicker>} Picker */

/**
 * Replaces a select's options with "Server default" and `values`, keeping its value when still offered.
 * @param {HTMLSelectElement} control
 * @param {readonly string[]} values
 */
function offer(control, values) {
  const current = control.value;
  control.replaceChildren(
    h('option', { value: '' }, 'Server default'),
    ...values.map((value) => h('option', { value }, value)),
  );
  control.value = values.includes(current) ? current : '';
}

/**
 * "(unavailable)" after the label of a choice whose model cannot run now.
 * @param {string} text
 * @param {Model | undefined} model
 */
function markedLabel(text, model) {
  return !model || model.available ? text : `${text} (unavailable)`;
}

/** The request's own controls, each named after its field (a refusal naming the field finds it by name). */
function requestControls() {
  const durationChoices = h('datalist', { id: uid('durations') });
  return {
    prompt: h('textarea', { name: 'prompt', rows: '3', required: true }),
    durationChoices,
    duration: h('input', {
      type: 'number',
      name: 'duration',
      step: '1',
      placeholder: 'Server default',
      list: durationChoices.id,
    }),
    quality: h('select', { name: 'quality' }),
    aspectRatio: h('select', { name: 'aspect_ratio' }),
    seed: h('input', { type: 'number', name: 'seed', step: '1', inputmode: 'numeric' }),
    sound: h('input', { type: 'checkbox', name: 'generate_audio', id: uid('sound'), checked: true }),
    soundHint: h('p', { class: 'hint' }),
    callbackUrl: h('input', {
      type: 'url',
      name: 'callback_url',
      placeholder: 'https://example.com/hooks/videogen',
    }),
  };
}

/** The curl command's section, with its copy button. */
function curlSection() {
  const block = codeBlock('', 'Equivalent curl command');
  const code = /** @type {HTMLElement} */ (block.querySelector('code'));
  const element = h(
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
    block,
    copyButton({ text: () => code.textContent, source: code, label: 'Copy command' }),
  );
  return { element, code };
}

/**
 * The mode radios and the fast toggle over `models`, each marked when the model it would pick cannot run now,
 * and a note saying why for the chosen one. `onPick({ modeChanged })` follows every choice; `setModels` takes a
 * fresh list (availability changes while the page is open).
 * @param {{
 *   models: readonly Model[],
 *   query: URLSearchParams,
 *   onPick: (change: { modeChanged: boolean }) => void,
 * }} options
 */
function modelPicker({ models: listed, query, onPick }) {
  let models = listed;
  /** @type {string[]} */
  const modes = [...new Set(models.map((model) => model.mode))];
  let mode = modes.find((each) => each === query.get('mode')) ?? modes[0] ?? '';
  const fast = h('input', { type: 'checkbox', name: 'fast', id: uid('fast'), checked: true });
  const fastLabel = h('label', { for: fast.id }, 'Fast variant');
  const modelOutput = h('output', { class: 'model-id' });
  const unavailableMark = h('span');
  // Said out when the chosen model cannot run now; the task can be created all the same.
  const note = h('div', { role: 'status' });

  /**
   * The model a mode and the fast toggle pick (the mode's other one when it has no such variant).
   * @param {string} pickedMode
   * @param {boolean} pickedFast
   */
  const modelOf = (pickedMode, pickedFast) =>
    models.find((model) => model.mode === pickedMode && model.fast === pickedFast) ??
    models.find((model) => model.mode === pickedMode);
  /** Every listed mode has a model, and `mode` is one of them. */
  const selected = () => /** @type {Model} */ (modelOf(mode, fast.checked));

  const choices = modes.map((value) => {
    const id = uid('mode');
    const radio = h('input', { type: 'radio', name: 'mode', value, id, checked: value === mode });
    radio.addEventListener('change', () => {
      mode = value;
      history.replaceState(null, '', `#/playground?mode=${encodeURIComponent(value)}`);
      onPick({ modeChanged: true });
    });
    return { value, text: modeLabel(value), label: h('label', { for: id }, modeLabel(value)), radio };
  });
  fast.addEventListener('change', () => onPick({ modeChanged: false }));

  /** Marks the choices whose model cannot run now, and says why for the chosen one. */
  function showAvailability() {
    for (const choice of choices)
      choice.label.textContent = markedLabel(choice.text, modelOf(choice.value, fast.checked));
    fastLabel.textContent = markedLabel('Fast variant', modelOf(mode, true));
    const model = selected();
    modelOutput.textContent = model.id;
    unavailableMark.textContent = model.available ? '' : ' (unavailable)';
    note.replaceChildren(
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

  return {
    mode: () => mode,
    selected,
    showAvailability,
    /** @param {readonly Model[]} fresh */
    setModels(fresh) {
      // Only availability changes while the page is open; a list that lost a mode is not one to follow.
      if (modes.every((each) => fresh.some((model) => model.mode === each))) models = fresh;
      showAvailability();
    },
    modes: h(
      'fieldset',
      { class: 'modes' },
      h('legend', {}, 'Mode'),
      choices.map(({ radio, label }) => h('div', { class: 'radio' }, radio, label)),
    ),
    fast: h(
      'div',
      { class: 'field checkbox' },
      fast,
      fastLabel,
      h('p', { class: 'hint' }, 'Model: ', modelOutput, unavailableMark),
    ),
    note,
  };
}

/** Uploads a file once (`POST /v1/files`): a second run with the same file reuses its URL. */
function uploader() {
  /**
   * File → URL returned by /v1/files.
   * @type {Map<File, string>}
   */
  const uploaded = new Map();
  return {
    /** @param {File} file */
    urlOf: (file) => uploaded.get(file),
    /**
     * @param {File} file
     * @param {(text: string) => void} report
     * @param {AbortSignal} signal
     */
    async upload(file, report, signal) {
      const known = uploaded.get(file);
      if (known) return known;
      report(`Uploading ${file.name}…`);
      const data = new FormData();
      data.append('file', file, file.name);
      /** @type {UploadedFile} */
      const answer = await api('/v1/files', { method: 'POST', form: data, signal });
      uploaded.set(file, answer.url);
      return answer.url;
    },
  };
}

/**
 * The body of `POST /v1/videos/generations` for `model`; a field left at the server's default is not sent.
 * @param {Model} model
 * @param {Controls} controls
 * @param {Upload[]} uploads
 * @param {(file: File) => string} urlOf
 */
function requestBody(model, controls, uploads, urlOf) {
  const { prompt, duration, quality, aspectRatio, seed, sound, callbackUrl } = controls;
  /** @type {Record<string, unknown> & { image_urls?: string[], video_urls?: string[], audio_urls?: string[] }} */
  const request = { model: model.id, prompt: prompt.value.trim() };
  for (const upload of uploads) {
    const files = upload.files();
    if (files.length > 0)
      request[upload.spec.field] = [...(request[upload.spec.field] ?? []), ...files.map(urlOf)];
  }
  if (duration.value !== '') request.duration = Number(duration.value);
  if (quality.value) request.quality = quality.value;
  if (aspectRatio.value) request.aspect_ratio = aspectRatio.value;
  if (seed.value !== '') request.seed = Number(seed.value);
  // Left out, the server gives sound where the model's engines make it: only an unticked box is sent.
  if (!sound.checked && model.generate_audio) request.generate_audio = false;
  if (callbackUrl.value.trim()) request.callback_url = callbackUrl.value.trim();
  return request;
}

/**
 * The control a refused field came from: `image_urls[1]` is the second file over the image fields.
 * @param {HTMLFormElement} form
 * @param {Upload[]} uploads
 * @param {string} param
 */
function controlOfParam(form, uploads, param) {
  const [, name = '', index = '0'] = /^([a-z_]+)(?:\[(\d+)\])?/.exec(param) ?? [];
  const named = form.elements.namedItem(name);
  if (named instanceof HTMLElement && name !== 'mode' && name !== 'fast') return named;
  const fields = uploads.filter((upload) => upload.spec.field === name);
  let position = Number(index);
  for (const upload of fields) {
    const count = upload.files().length;
    if (position < count) return upload.input;
    position -= count;
  }
  return fields[0]?.input ?? null;
}

/**
 * The request's fields for `model`: its durations, qualities and aspect ratios.
 * @param {Controls} controls
 * @param {Model} model
 * @param {{ modeChanged: boolean }} change
 */
function applyLimits(controls, model, { modeChanged }) {
  const { duration, durationChoices, quality, aspectRatio } = controls;
  duration.min = model.durations.length > 0 ? String(Math.min(...model.durations)) : '';
  duration.max = model.durations.length > 0 ? String(Math.max(...model.durations)) : '';
  durationChoices.replaceChildren(
    ...model.durations.map((seconds) => h('option', { value: String(seconds) })),
  );
  checkDuration(duration, model);
  offer(quality, model.qualities);
  // A new mode starts from the server's default ratio; another model of the same mode keeps the one chosen.
  if (modeChanged) aspectRatio.value = '';
  offer(aspectRatio, model.aspect_ratios);
  applySound(controls, model);
}

/**
 * The sound box for `model`: ticked and free where its engines make sound, unticked and disabled where not.
 * @param {Controls} controls
 * @param {Model} model
 */
function applySound({ sound, soundHint }, model) {
  if (!model.generate_audio) sound.checked = false;
  else if (sound.disabled) sound.checked = true;
  sound.disabled = !model.generate_audio;
  soundHint.textContent = model.generate_audio
    ? 'The model makes a soundtrack of its own; an audio file, when given, is the soundtrack either way.'
    : 'The engines of this model make no sound; an audio file, when given, is the soundtrack.';
}

/**
 * Within min and max, but not a duration the model takes (when its durations have gaps).
 * @param {HTMLInputElement} duration
 * @param {Model} model
 */
function checkDuration(duration, model) {
  const taken =
    duration.value === '' || model.durations.some((seconds) => seconds === Number(duration.value));
  duration.setCustomValidity(taken ? '' : `This model takes ${model.durations.join(', ')} seconds.`);
}

/**
 * Fills `form` for `models` (the list of `GET /v1/models`): the model picker, the request's fields and the
 * upload fields of the chosen model, kept in step with the curl command; submitting runs the request, and a
 * refusal that names a field is shown beside it.
 * @param {HTMLFormElement} form
 * @param {{
 *   models: readonly Model[],
 *   query: URLSearchParams,
 *   signal: AbortSignal,
 *   errors: ErrorBox,
 *   curlCode: HTMLElement,
 *   run: (request: import('./playground-run.js').Run) => Promise<void>,
 * }} options
 */
function playgroundForm(form, { models, query, signal, errors, curlCode, run }) {
  const controls = requestControls();
  const picker = modelPicker({ models, query, onPick: applyModel });
  const files = uploader();
  const uploadsSlot = h('div', { class: 'uploads' });
  const submit = h('button', { type: 'submit', class: 'button' }, 'Generate video');
  /** @type {Upload[]} */
  let uploads = [];

  /**
   * The form's fields for the chosen model: its upload fields, durations, qualities and aspect ratios.
   * @param {{ modeChanged: boolean }} change
   */
  function applyModel({ modeChanged }) {
    const model = picker.selected();
    // Fields the new model takes alike keep their files; the others go.
    const next = uploadSpecs(picker.mode(), model.inputs).map(
      (spec) => uploads.find((upload) => sameSpec(upload.spec, spec)) ?? uploadField(spec, updateCurl),
    );
    for (const upload of uploads) if (!next.includes(upload)) upload.release();
    const changed = next.length !== uploads.length || next.some((upload, i) => upload !== uploads[i]);
    uploads = next;
    if (changed) uploadsSlot.replaceChildren(...uploads.map((upload) => upload.element));
    applyLimits(controls, model, { modeChanged });
    picker.showAvailability();
    updateCurl();
  }
  controls.duration.addEventListener('input', () => checkDuration(controls.duration, picker.selected()));

  function updateCurl() {
    /** @param {File} file */
    const placeholder = (file) => files.urlOf(file) ?? `<url of ${file.name} from /v1/files>`;
    const pending = uploads.flatMap((upload) => upload.files()).filter((file) => !files.urlOf(file));
    curlCode.textContent = curlCommands({
      origin: location.origin,
      body: requestBody(picker.selected(), controls, uploads, placeholder),
      uploads: pending,
    });
  }

  /** Reads the models again now and then, to follow workers starting and stopping and circuits opening. */
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let refreshTimer;
  function scheduleRefresh() {
    refreshTimer = setTimeout(async () => {
      try {
        picker.setModels(await listModels(signal));
      } catch {
        // Keep what is shown: the page was left, or this read failed and the next one may not.
      }
      if (!signal.aborted) scheduleRefresh();
    }, REFRESH_MS);
  }
  signal.addEventListener('abort', () => {
    clearTimeout(refreshTimer);
    for (const upload of uploads) upload.release();
  });

  const fieldError = fieldErrors((param) => controlOfParam(form, uploads, param));
  form.addEventListener('input', updateCurl);
  form.addEventListener('change', updateCurl);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    errors.clear();
    fieldError.clear();
    submit.disabled = true;
    try {
      await run({
        files: uploads.flatMap((upload) => upload.files()),
        upload: files.upload,
        create: (urlOf, runSignal) => {
          updateCurl();
          const json = requestBody(picker.selected(), controls, uploads, urlOf);
          return api('/v1/videos/generations', { method: 'POST', json, signal: runSignal });
        },
        refused: (error) => {
          errors.show(error);
          fieldError.show(error);
        },
      });
    } finally {
      submit.disabled = false;
    }
  });

  form.replaceChildren(...formLayout(controls, picker, uploadsSlot, submit));
  applyModel({ modeChanged: true });
  scheduleRefresh();
}

/**
 * Where each part of the form goes.
 * @param {Controls} controls
 * @param {Picker} picker
 * @param {HTMLElement} uploadsSlot
 * @param {HTMLButtonElement} submit
 */
function formLayout(controls, picker, uploadsSlot, submit) {
  const { prompt, duration, durationChoices, quality, aspectRatio, seed, sound, soundHint, callbackUrl } =
    controls;
  return [
    picker.modes,
    field('Prompt', prompt, 'Name your files as “image 1”, “video 1”, “audio 1” in the order chosen.'),
    h(
      'div',
      { class: 'form-row' },
      picker.fast,
      field('Duration (seconds)', duration),
      field('Quality', quality),
      field('Aspect ratio', aspectRatio),
    ),
    durationChoices,
    picker.note,
    uploadsSlot,
    h('div', { class: 'field checkbox' }, sound, h('label', { for: sound.id }, 'Sound'), soundHint),
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
  ];
}

/**
 * @param {HTMLElement} main
 * @param {RouteContext} context
 */
export async function renderPlayground(main, { signal, query }) {
  const errors = errorBox();
  const form = h('form', { class: 'card playground-form', 'aria-label': 'Generation request' });
  const curl = curlSection();
  const { element: runElement, run } = runSection({ signal, errors });
  const environment = currentSession()?.environment ?? 'development';
  main.replaceChildren(
    ...pageHeading(
      'Playground',
      `Try the models with your session: tasks run in the ${environment} environment and appear under Tasks.`,
    ),
    errors,
    h('div', { class: 'playground' }, form, curl.element),
    runElement,
  );

  /** The form once the server has listed its models; until then there is nothing to offer. */
  async function load() {
    form.setAttribute('aria-busy', 'true');
    form.replaceChildren(h('p', { class: 'muted' }, 'Loading the models…'));
    try {
      const models = await listModels(signal);
      errors.clear();
      playgroundForm(form, { models, query, signal, errors, curlCode: curl.code, run });
    } catch (error) {
      if (signal.aborted) return;
      errors.show(
        `The models could not be listed, so there is nothing to offer yet. ${describeError(error)}`,
      );
      const retry = h('button', { type: 'button', class: 'button' }, 'Try again');
      retry.addEventListener('click', async () => {
        await load();
        form.querySelector('input')?.focus();
      });
      form.replaceChildren(retry);
    } finally {
      form.removeAttribute('aria-busy');
    }
  }
  await load();
}
