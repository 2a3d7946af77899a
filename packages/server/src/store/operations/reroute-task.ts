import type { Kysely } from 'kysely';
import { chooseEngine, type EngineChoice, type EngineRoute } from '../../domain/engine-route.js';
import type { Claim, ClaimRouting } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { takeCappedClaimLock } from './claim-task.js';
import { isCurrentClaim } from './current-claim.js';
import { routingSnapshot, startTrial } from './routing-snapshot.js';

/** A claimed task's next engine (fallback), chosen and recorded like a claim's (claim-routed-task.ts). */
export async function rerouteTask(
  db: Kysely<Database>,
  claim: Claim,
  route: EngineRoute,
  exclude: ReadonlySet<string>,
  routing: Omit<ClaimRouting, 'routes'> & { readonly leaseMs: number; readonly skipLocked: boolean },
  now: number,
): Promise<EngineChoice> {
  return db.transaction().execute(async (trx) => {
    if (routing.skipLocked && routing.maxConcurrency.size > 0) await takeCappedClaimLock(trx);
    const snapshot = await routingSnapshot(trx, routing, now);
    const choice = chooseEngine(route, snapshot, routing.random ?? Math.random, exclude);
    if (choice.kind !== 'engine') return choice;
    if (
      choice.trial &&
      !(await startTrial(trx, choice.engine, routing.circuit, now + routing.leaseMs, now))
    ) {
      // Another task took the trial: this one waits for its outcome.
      return { kind: 'wait' };
    }
    const moved = await trx
      .updateTable('tasks')
      .set({ engine: choice.engine, updated_at: now })
      .where((eb) => isCurrentClaim(eb, claim))
      .executeTakeFirst();
    return moved.numUpdatedRows > 0n ? choice : { kind: 'none' };
  });
}
