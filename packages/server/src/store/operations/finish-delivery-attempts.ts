import type { Kysely } from 'kysely';
import type { DeliveryStatus } from '../../domain/delivery.js';
import type { FinishedDeliveryAttempt } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { type Placeholder, preparedQuery } from '../prepared-query.js';

// Compiled once (prepared-query.ts): a group of finished attempts runs these two statements per attempt, and
// building them with Kysely each time cost more than running them.
const applyOutcome = preparedQuery(
  (
    db,
    value: Placeholder<
      'status' | 'nextAttemptAt' | 'noOwner' | 'now' | 'deliveryId' | 'attempt' | 'workerId' | 'pending'
    >,
  ) =>
    db
      .updateTable('webhook_deliveries')
      .set({
        status: value<DeliveryStatus>('status'),
        next_attempt_at: value<number | null>('nextAttemptAt'),
        lease_owner: value<null>('noOwner'),
        updated_at: value<number>('now'),
      })
      // The fence of current-delivery-claim.ts, spelt out for a statement compiled once.
      .where('id', '=', value<string>('deliveryId'))
      .where('status', '=', value<DeliveryStatus>('pending'))
      .where('attempt_count', '=', value<number>('attempt'))
      .where('lease_owner', '=', value<string>('workerId'))
      .returning('id'),
);

const logAttempt = preparedQuery(
  (db, value: Placeholder<'deliveryId' | 'number' | 'attemptedAt' | 'durationMs' | 'httpStatus' | 'error'>) =>
    db.insertInto('webhook_attempts').values({
      delivery_id: value<string>('deliveryId'),
      number: value<number>('number'),
      attempted_at: value<number>('attemptedAt'),
      duration_ms: value<number>('durationMs'),
      http_status: value<number | null>('httpStatus'),
      error: value<string | null>('error'),
    }),
);

/**
 * Logs each attempt and moves its delivery on (succeeded, failed, or due again later), fenced by its claim, all
 * in one transaction: one commit for a group of attempts (the dispatcher's group commit). Returns, in order,
 * whether each was recorded; a stale claim records nothing and does not affect the others.
 */
export async function finishDeliveryAttempts(
  db: Kysely<Database>,
  finished: readonly FinishedDeliveryAttempt[],
  now: number,
): Promise<boolean[]> {
  if (finished.length === 0) return [];
  return db.transaction().execute(async (trx) => {
    const recorded: boolean[] = [];
    for (const { claim, attempt, outcome } of finished) {
      const updated = await applyOutcome(trx, {
        status: outcome.status,
        nextAttemptAt: outcome.status === 'pending' ? outcome.nextAttemptAt : null,
        noOwner: null,
        now,
        deliveryId: claim.deliveryId,
        attempt: claim.attempt,
        workerId: claim.workerId,
        pending: 'pending',
      });
      if (updated.length === 0) {
        recorded.push(false);
        continue;
      }
      await logAttempt(trx, {
        deliveryId: claim.deliveryId,
        number: claim.attempt,
        attemptedAt: attempt.attemptedAt,
        durationMs: attempt.durationMs,
        httpStatus: attempt.httpStatus,
        error: attempt.error,
      });
      recorded.push(true);
    }
    return recorded;
  });
}
