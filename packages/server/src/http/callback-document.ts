/**
 * The callback a task's `callback_url` receives, as the OpenAPI document's top-level `webhooks` (OpenAPI 3.1):
 * the request the webhook dispatcher sends (webhooks/webhook-dispatcher.ts), and what it makes of the answers
 * (send-webhook.ts, retry-policy.ts).
 */
import { USER_AGENT } from '../webhooks/webhook-dispatcher.js';

const header = (name: string, description: string, schema: Record<string, unknown>, example: string) => ({
  in: 'header' as const,
  name,
  required: true,
  description,
  schema,
  example,
});

/** `webhooks` of the document: one entry, the callback of a task's status change. */
export const CALLBACK_WEBHOOKS = {
  taskStatusChanged: {
    post: {
      summary: "A task's status changed",
      description:
        "`POST`ed to the task's `callback_url` when it starts (`processing`, once) and when it ends (`completed` or " +
        '`failed`). The body is the task exactly as `GET /v1/tasks/{task_id}` returns it at that moment. Signed as ' +
        "[Standard Webhooks](https://www.standardwebhooks.com/) says, with the account's secret (`whsec_…`): verify " +
        'the signature, then de-duplicate on `webhook-id`. Any `2xx` is success; `410` stops the deliveries of the ' +
        'message; anything else, or no answer within the timeout (15 s by default), is retried with backoff over ' +
        "more than 24 hours (a longer `Retry-After` is waited for). Redirects are not followed. The task's " +
        'deliveries are listed by `GET /v1/tasks/{task_id}/deliveries`.',
      operationId: 'taskCallback',
      tags: ['Callbacks'],
      parameters: [
        header(
          'webhook-id',
          'The message id: the same on every retry of this message; de-duplicate on it.',
          { type: 'string', pattern: '^msg_[0-9A-Za-z]+$' },
          'msg_2Ck3mJ8qS0bV7yTzR1wXu4Ae',
        ),
        header(
          'webhook-timestamp',
          'Unix seconds of this attempt; refuse a message whose timestamp is far from your clock.',
          { type: 'string', pattern: '^[0-9]+$' },
          '1763812351',
        ),
        header(
          'webhook-signature',
          '`v1,` and the base64 HMAC-SHA256, keyed with the secret, of `{webhook-id}.{webhook-timestamp}.{body}`; ' +
            'during a secret rotation two of them, space-separated.',
          { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$' },
          'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
        ),
        header('user-agent', 'Names the sender and its version.', { type: 'string' }, USER_AGENT),
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Task' } } },
      },
      responses: {
        '2XX': { description: 'Received: the message is delivered.' },
        '410': { description: 'Gone: the message is not sent again.' },
        default: {
          description: 'Not received: the message is sent again later, with the same `webhook-id`.',
        },
      },
    },
  },
};
