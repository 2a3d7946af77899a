// @ts-check
/** #/keys: create keys (shown once) with their monthly limits, list them, change limits, revoke and rotate them. */
import { api } from './api.js';
import { copyButton } from './clipboard.js';
import { confirmDialog } from './dialogs.js';
import { announce, field, h, select, time } from './dom.js';
import { describeLimits, limitFields } from './limit-fields.js';
import { currentSession } from './session.js';
import { cell, dataTable, errorBox, exclusive, pageHeading } from './ui.js';

/**
 * A new key, shown once: the answer of creating or rotating one (`previous`: the rotated key).
 * @typedef {{ key: string, api_key: ApiKeyRecord, previous?: ApiKeyRecord }} NewKey
 */

/** @type {[value: string, label: string][]} */
const ENVIRONMENTS = [
  ['development', 'Development'],
  ['production', 'Production'],
];

/** @type {[value: string, label: string][]} */
const GRACE_PERIODS = [
  ['0', 'None: revoke the old key now'],
  ['1', '1 hour'],
  ['24', '24 hours'],
  ['168', '7 days'],
  ['720', '30 days'],
];

/** @param {string} environment */
function environmentLabel(environment) {
  return h('span', { class: `environment environment-${environment}` }, environment);
}

/**
 * The one time a key is visible: read-only, with a copy button and the warning to store it now.
 * @param {{ key: string, apiKey: ApiKeyRecord, previous: ApiKeyRecord | undefined, onDone: () => void }} shown
 */
function newKeyPanel({ key, apiKey, previous, onDone }) {
  const input = h('input', {
    type: 'text',
    readOnly: true,
    value: key,
    class: 'secret-value',
    spellcheck: 'false',
    autocomplete: 'off',
  });
  const heading = h('h2', { tabindex: '-1' }, previous ? 'Your rotated key' : 'Your new key');
  const panel = h(
    'section',
    { class: 'new-key card', 'aria-labelledby': 'new-key-heading' },
    heading,
    h(
      'p',
      { class: 'warning' },
      h('strong', {}, 'Copy this key now: it is shown only once. '),
      'Store it in a secret manager or your server’s environment variables, never in client-side code or a ' +
        'repository. videogen keeps only its hash and cannot show it again.',
    ),
    h(
      'div',
      { class: 'secret-row' },
      field(`API key “${apiKey.name}” (${apiKey.environment})`, input),
      copyButton({ text: () => key, source: input }),
    ),
    previous
      ? h(
          'p',
          {},
          previous.expires_at && previous.expires_at * 1000 > Date.now()
            ? ['The old key keeps working until ', time(previous.expires_at), ', then it is revoked.']
            : 'The old key has been revoked.',
        )
      : null,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'button secondary', onclick: onDone }, 'Done'),
    ),
  );
  heading.id = 'new-key-heading';
  return { panel, focus: () => heading.focus() };
}

/**
 * @param {HTMLElement} main
 * @param {RouteContext} context
 */
export async function renderKeys(main, { signal }) {
  const errors = errorBox();
  const newKeySlot = h('div');
  const listSlot = h('div', { 'aria-busy': 'true' }, h('p', { class: 'muted' }, 'Loading keys…'));
  /**
   * The currency of budgets (null: no prices configured), from the account's limits; undefined when that could
   * not be read, and budgets are then shown without it.
   */
  /** @type {Promise<AccountLimits>} */
  const limitsRequest = api('/dashboard/api/limits', { signal });
  const currencyRequest = limitsRequest.then(
    (answer) => answer.currency,
    () => undefined,
  );
  /** @type {string | null | undefined} */
  let currency;

  /** @param {NewKey} answer */
  function showNewKey(answer) {
    const { panel, focus } = newKeyPanel({
      key: answer.key,
      apiKey: answer.api_key,
      previous: answer.previous,
      onDone: () => {
        newKeySlot.replaceChildren();
        // The Done button is gone with the panel: put the focus back at the top of the page, not on <body>.
        main.querySelector('h1')?.focus();
      },
    });
    newKeySlot.replaceChildren(panel);
    focus();
  }

  async function refresh() {
    try {
      /** @type {{ data: ApiKeyRecord[] }} */
      const { data } = await api('/dashboard/api/keys', { signal });
      currency = await currencyRequest;
      listSlot.replaceChildren(keyList(data));
      listSlot.removeAttribute('aria-busy');
    } catch (error) {
      if (!signal.aborted) errors.show(error);
    }
  }

  // A double click must not revoke or rotate twice (a second rotation would lose the first new key).
  const revoke = exclusive(async (/** @type {ApiKeyRecord} */ key) => {
    const confirmed = await confirmDialog({
      title: `Revoke “${key.name}”?`,
      content: h(
        'p',
        {},
        'The key ',
        h('code', {}, `${key.prefix}…`),
        ` (${key.environment}) stops working at once: programs using it get 401 invalid_api_key. This cannot be undone.`,
      ),
      confirmLabel: 'Revoke key',
      danger: true,
      signal,
    });
    if (!confirmed) return;
    errors.clear();
    try {
      await api(`/dashboard/api/keys/${encodeURIComponent(key.id)}/revoke`, { method: 'POST' });
      announce(`Key ${key.name} revoked.`);
      await refresh();
      main.querySelector('h1')?.focus();
    } catch (error) {
      errors.show(error);
    }
  });

  const rotate = exclusive(async (/** @type {ApiKeyRecord} */ key) => {
    const grace = select({ name: 'grace_period_hours' }, GRACE_PERIODS, '24');
    const form = await confirmDialog({
      title: `Rotate “${key.name}”?`,
      content: [
        h(
          'p',
          {},
          'A new key with the same name and environment is made now. Keep the old one working long enough to ' +
            'deploy the new one everywhere.',
        ),
        field('Old key keeps working for', grace),
      ],
      confirmLabel: 'Rotate key',
      signal,
    });
    if (!form) return;
    errors.clear();
    try {
      /** @type {NewKey} */
      const answer = await api(`/dashboard/api/keys/${encodeURIComponent(key.id)}/rotate`, {
        method: 'POST',
        json: { grace_period_hours: Number(grace.value) },
      });
      await refresh();
      showNewKey(answer);
    } catch (error) {
      errors.show(error);
    }
  });

  const setLimits = exclusive(async (/** @type {ApiKeyRecord} */ key) => {
    const inputs = limitFields(key, currency);
    const form = await confirmDialog({
      title: `Monthly limits of “${key.name}”`,
      content: [
        h(
          'p',
          {},
          'A task that would pass a limit is refused with 402 budget_exceeded. Limits reset on the 1st (UTC).',
        ),
        ...inputs.fields,
      ],
      confirmLabel: 'Save limits',
      signal,
    });
    if (!form) return;
    errors.clear();
    try {
      await api(`/dashboard/api/keys/${encodeURIComponent(key.id)}/limits`, {
        method: 'POST',
        json: inputs.read(),
      });
      announce(`Limits of ${key.name} saved.`);
      await refresh();
      // The list was redrawn: back to this key's Limits button, not to <body>.
      const button = listSlot.querySelector(`tr[data-key-id="${CSS.escape(key.id)}"] .row-actions button`);
      if (button instanceof HTMLButtonElement) button.focus();
    } catch (error) {
      errors.show(error);
    }
  });

  /** @param {ApiKeyRecord[]} keys */
  function keyList(keys) {
    if (keys.length === 0) {
      return h('p', { class: 'empty' }, 'No active keys. Create one above to call the API.');
    }
    const rows = keys.map((key) =>
      h(
        'tr',
        { 'data-key-id': key.id },
        cell('Name', h('strong', {}, key.name)),
        cell('Environment', environmentLabel(key.environment)),
        cell('Prefix', h('code', {}, `${key.prefix}…`)),
        cell('Created', time(key.created_at)),
        cell('Last used', time(key.last_used_at)),
        cell('Expires', key.expires_at ? time(key.expires_at) : h('span', { class: 'muted' }, '—')),
        cell('Monthly limits', describeLimits(key, currency)),
        cell(
          'Actions',
          h(
            'div',
            { class: 'row-actions' },
            h(
              'button',
              {
                type: 'button',
                class: 'button secondary small',
                'aria-label': `Limits of ${key.name}`,
                onclick: () => setLimits(key),
              },
              'Limits',
            ),
            h(
              'button',
              {
                type: 'button',
                class: 'button secondary small',
                'aria-label': `Rotate ${key.name}`,
                onclick: () => rotate(key),
              },
              'Rotate',
            ),
            h(
              'button',
              {
                type: 'button',
                class: 'button danger small',
                'aria-label': `Revoke ${key.name}`,
                onclick: () => revoke(key),
              },
              'Revoke',
            ),
          ),
        ),
      ),
    );
    return dataTable({
      caption: 'Active API keys',
      columns: [
        'Name',
        'Environment',
        'Prefix',
        'Created',
        'Last used',
        'Expires',
        'Monthly limits',
        'Actions',
      ],
      rows,
      className: 'keys-table',
    });
  }

  const name = h('input', {
    type: 'text',
    name: 'name',
    required: true,
    maxlength: '100',
    autocomplete: 'off',
  });
  const environment = select(
    { name: 'environment' },
    ENVIRONMENTS,
    currentSession()?.environment ?? 'development',
  );
  const createLimits = limitFields(undefined, undefined);
  const createButton = h('button', { type: 'submit', class: 'button' }, 'Create key');
  const createForm = h(
    'form',
    { class: 'card inline-form', 'aria-labelledby': 'create-key-heading' },
    h('h2', { id: 'create-key-heading' }, 'Create a key'),
    h(
      'div',
      { class: 'form-row' },
      field('Name', name, 'What uses it, e.g. “ci” or “web backend”.'),
      // Not plain "Environment": that is the header's switcher, and two controls must not share a name.
      field('Key environment', environment, 'Development keys see development tasks only, and likewise.'),
    ),
    h('div', { class: 'form-row' }, createLimits.fields),
    h('div', { class: 'actions' }, createButton),
  );
  createForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    errors.clear();
    createButton.disabled = true;
    try {
      /** @type {NewKey} */
      const answer = await api('/dashboard/api/keys', {
        method: 'POST',
        json: { name: name.value.trim(), environment: environment.value, ...createLimits.read() },
      });
      createForm.reset();
      environment.value = currentSession()?.environment ?? 'development';
      await refresh();
      showNewKey(answer);
    } catch (error) {
      errors.show(error);
    } finally {
      createButton.disabled = false;
    }
  });

  main.replaceChildren(
    ...pageHeading(
      'API keys',
      'Programs call the API with a key in the Authorization header. Use separate keys for development and production, and rotate them.',
    ),
    errors,
    createForm,
    newKeySlot,
    h(
      'section',
      { 'aria-labelledby': 'key-list-heading' },
      h('h2', { id: 'key-list-heading' }, 'Active keys'),
      listSlot,
    ),
  );
  await refresh();
}
