import type { Kysely } from 'kysely';
import { chooseEngine, type RoutingSnapshot } from '../../domain/engine-route.js';
import type { ModelId } from '../../domain/models.js';
import type { TaskRecord } from '../../domain/task.js';
import type { ClaimRouting } from '../../ports/store.js';
import type { CircuitsCache } from '../circuits-cache.js';
import type { Database } from '../database-schema.js';
import {
  type ClaimTaskOptions,
  claimInTransaction,
  claimRoutedWithoutCallback,
  takeCappedClaimLock,
} from './claim-task.js';
import { routingSnapshot, startTrial } from './routing-snapshot.js';

/** Rolls back a claim whose circuit trial another claim took first. */
class TrialTaken extends Error {}

/**
 * Claims the oldest task of the models some engine can take now, and routes it there, in one transaction:
 * read the engines' tasks in flight and circuits, choose an engine per model (domain/engine-route.ts), claim
 * among the models that have one, record the engine (and take the circuit's trial when half-open).
 *
 * Caps are counts of other claims, so on PostgreSQL claims with caps take the capped-claim advisory lock and
 * run one at a time (each sees the claims committed before it); SQLite runs one transaction at a time anyway.
 *
 * On PostgreSQL without caps (no engine's `max_concurrency`, no per-account cap), nothing read before the claim
 * has to hold until it commits: the circuits are taken from `circuits` (read at most every second,
 * circuits-cache.ts), then a task without a callback is claimed in one statement that also records its engine
 * (one round trip and one commit where the transaction takes four). The transaction remains for a task with a
 * callback (its `task.processing` delivery is written with the claim), for a circuit's trial, and for when
 * that statement finds nothing.
 */
export async function claimRoutedTask(
  db: Kysely<Database>,
  options: ClaimTaskOptions,
  routing: ClaimRouting,
  now: number,
  circuits?: CircuitsCache,
): Promise<TaskRecord | undefined> {
  const random = routing.random ?? Math.random;
  const capped = routing.maxConcurrency.size > 0 || (options.maxActivePerAccount ?? 0) > 0;
  // The one statement first on PostgreSQL only (`skipLocked` stands for it, as elsewhere): on SQLite, BEGIN and
  // COMMIT are no round trips, and trying the statement first ran the claim twice whenever it found nothing or
  // a task with a callback, as after every run.
  if (!capped && options.skipLocked) {
    const cached = circuits ? () => circuits.records() : undefined;
    const chosen = chooseEngines(options, routing, await routingSnapshot(db, routing, now, cached), random);
    if (chosen.size === 0) return undefined;
    if (![...chosen.values()].some((choice) => choice.trial)) {
      const engines = enginesOf(chosen);
      const task = await claimRoutedWithoutCallback(db, options, engines, now);
      if (task) return task;
    }
  }
  const serialise = options.skipLocked === true && capped;
  try {
    return await db.transaction().execute(async (trx) => {
      if (serialise) await takeCappedClaimLock(trx);
      const chosen = chooseEngines(options, routing, await routingSnapshot(trx, routing, now), random);
      if (chosen.size === 0) return undefined;
      const engines = enginesOf(chosen);
      const task = await claimInTransaction(trx, options, engines, now);
      if (!task) return undefined;
      const choice = chosen.get(task.model);
      if (!choice) throw new Error(`claimed a task of ${task.model}, which has no engine chosen`);
      if (choice.trial) {
        circuits?.clear();
        if (!(await startTrial(trx, choice.engine, routing.circuit, now + options.leaseMs, now))) {
          throw new TrialTaken();
        }
      }
      return task;
    });
  } catch (error) {
    if (error instanceof TrialTaken) return undefined;
    throw error;
  }
}

/** The engine each claimable model would go to now; models with none (all open, or all full) are left out. */
function chooseEngines(
  options: ClaimTaskOptions,
  routing: ClaimRouting,
  snapshot: RoutingSnapshot,
  random: () => number,
): Map<ModelId, { engine: string; trial: boolean }> {
  const chosen = new Map<ModelId, { engine: string; trial: boolean }>();
  for (const [model, route] of routing.routes) {
    if (options.models && !options.models.includes(model)) continue;
    const choice = chooseEngine(route, snapshot, random);
    if (choice.kind === 'engine') chosen.set(model, choice);
  }
  return chosen;
}

/** The engine chosen for each model, as the claiming statement records it. */
function enginesOf(chosen: ReadonlyMap<ModelId, { engine: string }>): Map<ModelId, string> {
  return new Map([...chosen].map(([model, choice]) => [model, choice.engine]));
}
