/** The cross-process circuit tests of the SQLite and PostgreSQL stores: text tasks routed to `ark`, then `gpu`. */
import { newTaskId } from '../../src/domain/identifiers.js';
import type { NewTask, Store } from '../../src/ports/store.js';

/** One failure opens the circuit for a minute. */
export const CIRCUIT_POLICY = { failures: 1, cooldownMs: 60_000 };

const ARK_THEN_GPU = {
  routes: new Map([
    ['videogen-2.0-text-to-video' as const, [[{ engine: 'ark', weight: 1 }], [{ engine: 'gpu', weight: 1 }]]],
  ]),
  maxConcurrency: new Map<string, number>(),
  circuit: CIRCUIT_POLICY,
};

/** `count` text-to-video tasks with `params`, in a new account. */
export async function addTextTasks(store: Store, count: number, params: NewTask['params']): Promise<void> {
  const { id: accountId } = await store.createAccount();
  for (let i = 0; i < count; i++) {
    await store.createTask({
      accountId,
      environment: 'development',
      id: newTaskId(),
      model: 'videogen-2.0-text-to-video',
      params,
    });
  }
}

/** The engine the next claim on `store` sends its task to (leases long enough to outlast the test's clock). */
export async function engineOfNextClaim(store: Store): Promise<string | undefined> {
  const task = await store.claimTask({
    workerId: 'w',
    leaseMs: 600_000,
    maxAttempts: 3,
    routing: ARK_THEN_GPU,
  });
  return task?.engine ?? undefined;
}
