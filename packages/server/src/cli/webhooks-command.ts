/** `videogen webhooks secret|rotate-secret|deliveries`: callback signing secrets and the delivery log. */
import { parseArgs } from 'node:util';
import { defaultAccountId } from '../accounts/api-keys.js';
import { deliveryLog } from '../webhooks/delivery-log.js';
import { rotateWebhookSecret, webhookSecrets } from '../webhooks/webhook-secrets.js';
import { printTable } from './print-table.js';
import { withStore } from './store-session.js';
import { UsageError } from './usage-error.js';

export async function webhooksCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  switch (action) {
    case 'secret':
    case 'rotate-secret': {
      const { values } = parseArgs({ args: rest, options: { account: { type: 'string' } }, strict: true });
      const secret = await withStore('read', async (store) => {
        const accountId = values.account ?? (await defaultAccountId(store));
        if (action === 'secret') return (await webhookSecrets(store, accountId)).current.secret;
        return (await rotateWebhookSecret(store, accountId)).secret;
      });
      // The secret alone on stdout, so that scripts can capture it.
      process.stdout.write(`${secret}\n`);
      return 0;
    }
    case 'deliveries': {
      const { values, positionals } = parseArgs({
        args: rest,
        options: { json: { type: 'boolean', default: false } },
        allowPositionals: true,
        strict: true,
      });
      const taskId = positionals[0];
      if (!taskId || positionals.length > 1) throw new UsageError('webhooks deliveries needs one task ID');
      const deliveries = await withStore('read', (store) => deliveryLog(store, taskId));
      if (values.json) {
        process.stdout.write(`${JSON.stringify(deliveries, null, 2)}\n`);
        return 0;
      }
      const rows = deliveries.flatMap((delivery) => {
        const head = [delivery.id, delivery.event, delivery.status];
        if (delivery.attempts.length === 0) {
          const next = delivery.next_attempt_at
            ? new Date(delivery.next_attempt_at * 1000).toISOString()
            : '-';
          return [[...head, '-', `not attempted yet (next ${next})`, '-']];
        }
        return delivery.attempts.map((attempt, i) => [
          ...(i === 0 ? head : ['', '', '']),
          new Date(attempt.attempted_at * 1000).toISOString(),
          attempt.http_status === undefined ? (attempt.error ?? '-') : `HTTP ${attempt.http_status}`,
          `${attempt.duration_ms} ms`,
        ]);
      });
      printTable(['WEBHOOK ID', 'EVENT', 'STATE', 'ATTEMPTED', 'RESULT', 'DURATION'], rows);
      return 0;
    }
    default:
      throw new UsageError(
        action ? `unknown webhooks action ${JSON.stringify(action)}` : 'webhooks needs an action',
      );
  }
}
