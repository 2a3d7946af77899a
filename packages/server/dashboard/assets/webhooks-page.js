// @ts-check
/** #/webhooks: the account's callback signing secret (reveal, copy, rotate) and how to verify signatures. */
import { api } from './api.js';
import { copyButton } from './clipboard.js';
import { confirmDialog } from './dialogs.js';
import { announce, field, h, time } from './dom.js';
import { codeBlock, errorBox, exclusive, pageHeading } from './ui.js';

const LIBRARY_SAMPLE = `// npm install standardwebhooks express
import express from 'express';
import { Webhook } from 'standardwebhooks';

const wh = new Webhook(process.env.VIDEOGEN_WEBHOOK_SECRET); // whsec_…
const app = express();

// The signature covers the raw body: verify before parsing it.
app.post('/hooks/videogen', express.raw({ type: 'application/json' }), (req, res) => {
  let task;
  try {
    task = wh.verify(req.body, req.headers); // throws on a bad signature or a stale timestamp
  } catch {
    return res.sendStatus(400);
  }
  res.sendStatus(204);
  // Act on task.status; de-duplicate on req.headers['webhook-id'].
});

app.listen(3000);`;

const MANUAL_SAMPLE = `import { createHmac, timingSafeEqual } from 'node:crypto';

/** Verifies a videogen callback; rawBody is the request body exactly as received. */
export function verifyCallback(secret, headers, rawBody) {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) throw new Error('stale timestamp');

  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(\`\${id}.\${timestamp}.\${rawBody}\`).digest();
  // During a rotation the header holds one signature per secret, space-separated.
  const valid = headers['webhook-signature'].split(' ').some((signature) => {
    const [version, value = ''] = signature.split(',');
    const actual = Buffer.from(value, 'base64');
    return version === 'v1' && actual.length === expected.length && timingSafeEqual(actual, expected);
  });
  if (!valid) throw new Error('bad signature');
  return JSON.parse(rawBody);
}`;

/**
 * `GET /dashboard/api/webhook-secret`: the current secret and the previous ones still signing.
 * @typedef {{ secret: string, created_at: number, previous: { expires_at: number }[] }} WebhookSecret
 */

/**
 * @param {HTMLElement} main
 * @param {RouteContext} context
 */
export async function renderWebhooks(main, { signal }) {
  const errors = errorBox();
  const secretInput = h('input', {
    type: 'password',
    readOnly: true,
    class: 'secret-value',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  const reveal = h(
    'button',
    { type: 'button', class: 'button secondary', 'aria-pressed': 'false' },
    'Reveal',
  );
  const details = h('div', { class: 'secret-details' });
  const rotate = h('button', { type: 'button', class: 'button danger' }, 'Rotate secret');

  /** @param {boolean} revealed */
  function setRevealed(revealed) {
    secretInput.type = revealed ? 'text' : 'password';
    reveal.setAttribute('aria-pressed', String(revealed));
    reveal.textContent = revealed ? 'Hide' : 'Reveal';
  }
  reveal.addEventListener('click', () => setRevealed(secretInput.type === 'password'));

  /** @param {WebhookSecret} secret */
  function show(secret) {
    secretInput.value = secret.secret;
    details.replaceChildren(
      h('p', {}, 'Created ', time(secret.created_at), '.'),
      ...secret.previous.map((old) =>
        h('p', {}, 'The previous secret also signs every callback until ', time(old.expires_at), '.'),
      ),
    );
  }

  rotate.addEventListener(
    'click',
    exclusive(async () => {
      const confirmed = await confirmDialog({
        title: 'Rotate the signing secret?',
        content: h(
          'p',
          {},
          'A new secret signs callbacks from now on. The current one keeps signing beside it for 24 hours, so ' +
            'update your receivers within that time.',
        ),
        confirmLabel: 'Rotate secret',
        danger: true,
        signal,
      });
      if (!confirmed) return;
      errors.clear();
      try {
        show(await api('/dashboard/api/webhook-secret/rotate', { method: 'POST' }));
        setRevealed(true);
        announce('The signing secret was rotated. The new one is shown.');
        secretInput.focus();
      } catch (error) {
        errors.show(error);
      }
    }),
  );

  main.replaceChildren(
    ...pageHeading(
      'Webhooks',
      'Tasks created with a callback_url are POSTed there when they start and when they end, signed per Standard Webhooks with this secret.',
    ),
    errors,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'secret-heading' },
      h('h2', { id: 'secret-heading' }, 'Signing secret'),
      h(
        'div',
        { class: 'secret-row' },
        field('Current secret', secretInput),
        reveal,
        // Browsers do not copy out of a password field: reveal the secret before selecting it for Ctrl+C.
        copyButton({
          text: () => secretInput.value,
          source: secretInput,
          beforeSelect: () => setRevealed(true),
        }),
      ),
      h('p', { class: 'hint' }, 'Keep it on your server, like an API key.'),
      details,
      h('div', { class: 'actions' }, rotate),
    ),
    h(
      'section',
      { 'aria-labelledby': 'verify-heading' },
      h('h2', { id: 'verify-heading' }, 'Verifying signatures'),
      h(
        'p',
        {},
        'Each callback carries webhook-id, webhook-timestamp and webhook-signature headers. Check them against ',
        'the raw body before trusting it. With the Standard Webhooks library for Node.js:',
      ),
      codeBlock(LIBRARY_SAMPLE, 'Verification with the standardwebhooks library'),
      h(
        'p',
        {},
        'Or by hand, in any language: the base64 HMAC-SHA256 of id.timestamp.body, keyed by the decoded secret:',
      ),
      codeBlock(MANUAL_SAMPLE, 'Verification with node:crypto'),
      h(
        'p',
        {},
        'Each task’s deliveries and their attempts are on its page under ',
        h('a', { href: '#/tasks' }, 'Tasks'),
        '.',
      ),
    ),
  );
  try {
    show(await api('/dashboard/api/webhook-secret', { signal }));
  } catch (error) {
    if (!signal.aborted) errors.show(error);
  }
}
