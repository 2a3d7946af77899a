/**
 * The SQLite store keeps every statement it prepares until its thread ends (store/sqlite/sqlite-handles.ts), one per
 * distinct SQL string (store/sqlite/sqlite-statement-cache.ts). So the text of its statements must depend on neither the data's
 * sizes (hosts with deliveries in flight or full, batches, lists of ids, rows written together) nor its values
 * (a value written into the SQL rather than bound to it). A workload that runs every operation of the store, with
 * such sizes from 1 to 40 and values that differ each time, must prepare no statement that one pass had not.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { GenerationParams } from '../src/domain/generation-request.js';
import { newId, newTaskId } from '../src/domain/identifiers.js';
import { MODEL_IDS, type ModelId } from '../src/domain/models.js';
import type { TaskRecord, TaskScope } from '../src/domain/task.js';
import type { Claim, ClaimRouting, DeliveryClaim, Store } from '../src/ports/store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { generationParams } from './helpers/generation-params.js';
import { T0 } from './helpers/store-harness.js';

const LEASE = 30_000;
const SEND_LEASE = 25_000;
const PER_HOST = 4;
const CIRCUIT = { failures: 3, cooldownMs: 60_000 };

const PARAMS = generationParams();

const hostOf = (index: number) => `receiver-${index}.example.com`;
const withCallback = (index: number): GenerationParams => ({
  ...PARAMS,
  callback_url: `https://${hostOf(index)}/hook`,
});

function claimOf(task: TaskRecord): Claim {
  assert.ok(task.leaseOwner, 'a claimed task has a lease owner');
  return { taskId: task.id, attempt: task.attempts, workerId: task.leaseOwner };
}

/** Claims with `claim` until it finds nothing. */
async function drain(claim: () => Promise<TaskRecord | undefined>): Promise<TaskRecord[]> {
  const claimed: TaskRecord[] = [];
  for (let task = await claim(); task; task = await claim()) claimed.push(task);
  return claimed;
}

/**
 * The store's operations that take or write several values (claims, outcomes, batch writes and deletes, pages),
 * with those around them, `size` being the number of receivers, of models, of rows written together and of ids in
 * a list; each with the same options every time otherwise.
 */
async function pass(store: Store, clock: { now: number }, size: number): Promise<void> {
  clock.now += 1_000_000;
  const scope: TaskScope = { accountId: (await store.createAccount()).id, environment: 'production' };
  const models: ModelId[] = MODEL_IDS.slice(0, 1 + (size % MODEL_IDS.length));
  const create = (params: GenerationParams, model: ModelId = 'videogen-2.0-text-to-video') =>
    store.createTask({ ...scope, id: newTaskId(), model, params });
  const createMany = (count: number, params: (index: number) => GenerationParams) =>
    // Created together: one group commit of `count` creations.
    Promise.all(
      Array.from({ length: count }, (_, index) => create(params(index), models[index % models.length])),
    );

  // Claims among `size` models, routed (the engine chosen per model) or not, with and without callbacks.
  await createMany(size, () => PARAMS);
  await createMany(size, withCallback);
  const routes = new Map(models.map((model, index) => [model, [[{ engine: `engine-${index}`, weight: 1 }]]]));
  const routing = (maxConcurrency: ReadonlyMap<string, number>): ClaimRouting => ({
    routes,
    maxConcurrency,
    circuit: CIRCUIT,
    random: () => 0,
  });
  const routed = await drain(() =>
    store.claimTask({ workerId: 'routed', leaseMs: LEASE, maxAttempts: 3, routing: routing(new Map()) }),
  );
  assert.equal(routed.length, 2 * size);
  await createMany(size, withCallback);
  const capped = await drain(() =>
    store.claimTask({
      workerId: 'capped',
      leaseMs: LEASE,
      maxAttempts: 3,
      maxActivePerAccount: 10 * size,
      routing: routing(new Map([['engine-0', 1000]])),
    }),
  );
  assert.equal(capped.length, size);
  await createMany(size, withCallback);
  const plain = await drain(() =>
    store.claimTask({ workerId: 'plain', leaseMs: LEASE, maxAttempts: 3, models }),
  );
  assert.equal(plain.length, size);
  await store.rerouteTask(
    claimOf(plain[0] as TaskRecord),
    [[{ engine: 'engine-0', weight: 1 }], [{ engine: 'fallback', weight: 1 }]],
    new Set(['engine-0']),
    { maxConcurrency: new Map(), circuit: CIRCUIT, leaseMs: LEASE },
  );
  // A failure, then the success that closes the circuit again for the next pass.
  await store.recordEngineOutcome('engine-0', 'unavailable', CIRCUIT);
  await store.recordEngineOutcome('engine-0', 'succeeded', CIRCUIT);
  await store.engineStats();
  await store.queueStats();

  // Runs under way: progress reported (a different value each time, at a different instant) and leases renewed.
  for (const [index, task] of [...routed, ...capped].entries()) {
    clock.now += 1;
    assert.ok(await store.reportProgress(claimOf(task), (size * 7 + index) % 100));
    assert.ok((await store.renewLeases(task.leaseOwner ?? '', [claimOf(task)], LEASE + index)).has(task.id));
    const job = { engine: 'engine-0', id: `job-${size}-${index}`, submittedAt: clock.now };
    assert.ok(
      await store.recordUpstreamJob(claimOf(task), index % 2 ? job : { ...job, data: { url: task.id } }),
    );
    // A provider's callback naming the job.
    assert.equal(await store.findUpstreamJobTask('engine-0', job.id), task.id);
  }

  // Runs ended: completed, failed, cancelled, abandoned by `size` workers that are gone, or by a lease lapsed.
  for (const [index, task] of [...routed, ...capped].entries()) {
    if (index % 2 === 0) assert.ok(await store.completeTask(claimOf(task), `results/${task.id}.mp4`));
    else assert.ok(await store.failTask(claimOf(task), { code: 'generation_failed', message: 'no' }));
  }
  // The failed runs' jobs, taken to cancel upstream, by lists of engines of every size.
  const engines = Array.from({ length: size }, (_, index) => `engine-${index}`);
  const taken = await store.takeEndedUpstreamJobs(engines, size);
  assert.ok(taken.length > 0 && taken.length <= size);
  await store.cancelTask((plain[0] as TaskRecord).id, scope);
  await createMany(size, withCallback);
  for (let index = 0; index < size; index++) {
    await store.claimTask({ workerId: `gone-${index}`, leaseMs: LEASE, maxAttempts: 3, models });
  }
  assert.equal(
    await store.requeueOrphanedTasks(Array.from({ length: size }, (_, index) => `gone-${index}`)),
    size,
  );
  await drain(() => store.claimTask({ workerId: 'abandoning', leaseMs: LEASE, maxAttempts: 1 }));
  clock.now += LEASE;
  assert.equal(await store.failAbandonedTasks(1), 2 * size - 1);

  // Deliveries to `size` receivers: claims with `size` hosts in flight, `size` hosts full, or one host alone.
  const hosts = Array.from({ length: size }, (_, index) => hostOf(index));
  const inFlight = Object.fromEntries(hosts.map((host, index) => [host, index % PER_HOST]));
  const claims = async (options: Partial<Parameters<Store['claimDeliveries']>[0]>) =>
    store.claimDeliveries({
      workerId: 'sender',
      leaseMs: SEND_LEASE,
      limit: size,
      excludeHosts: [],
      ...options,
    });
  const claimed = [
    ...(await claims({})),
    ...(await claims({ excludeHosts: hosts.filter((_, index) => index % 3 === 0) })),
    ...(await claims({ perHostLimit: PER_HOST, hostsInFlight: inFlight })),
    ...(await claims({
      perHostLimit: PER_HOST,
      hostsInFlight: {},
      excludeHosts: hosts.slice(0, Math.ceil(size / 2)),
    })),
    ...(await claims({ perHostLimit: PER_HOST, host: hostOf(0), hostsInFlight: inFlight })),
  ];
  assert.ok(claimed.length >= size, `${claimed.length} deliveries claimed`);
  const [released, ...sent] = claimed;
  const deliveryClaim = (delivery: (typeof claimed)[number]): DeliveryClaim => ({
    deliveryId: delivery.id,
    attempt: delivery.attemptCount,
    workerId: 'sender',
  });
  if (released) assert.ok(await store.releaseDelivery(deliveryClaim(released)));
  // Outcomes of every claimed delivery, in one group.
  const recorded = await store.finishDeliveryAttempts(
    sent.map((delivery, index) => ({
      claim: deliveryClaim(delivery),
      attempt: { attemptedAt: clock.now, durationMs: 3, httpStatus: 204, error: null },
      outcome:
        index % 2 === 0 ? { status: 'succeeded' } : { status: 'pending', nextAttemptAt: clock.now + 1 },
    })),
  );
  assert.ok(recorded.every(Boolean));
  const [first] = sent;
  if (first)
    await store.finishDeliveryAttempt(
      deliveryClaim(first),
      {
        attemptedAt: clock.now,
        durationMs: 3,
        httpStatus: 500,
        error: null,
      },
      { status: 'failed' },
    );
  // A task with `size` more deliveries (redeliveries), listed with their attempts.
  const redelivered = routed.find((task) => task.params.callback_url !== null) as TaskRecord;
  for (const delivery of (await store.listDeliveries(redelivered.id)).slice(0, 1)) {
    for (let index = 0; index < size; index++) await store.createDelivery({ ...delivery, id: newId('msg') });
  }
  assert.ok((await store.listDeliveries(redelivered.id)).length > size);

  // Pages of tasks, filtered each way, `size` at a time.
  const page = { limit: size };
  const lists = [
    page,
    { ...page, status: 'completed' },
    { ...page, model: models[0] },
    { ...page, status: 'failed', model: models[0] },
    { ...page, createdAfter: clock.now - 10_000 },
    { ...page, createdBefore: clock.now },
    { ...page, createdAfter: clock.now - 10_000, createdBefore: clock.now },
  ] as const;
  for (const query of lists) {
    const { tasks } = await store.listTasks(scope, query);
    const last = tasks.at(-1);
    if (last) await store.listTasks(scope, { ...query, after: { createdAt: last.createdAt, id: last.id } });
  }
  for (const groupBy of ['day', 'model', 'api_key'] as const) {
    await store.listUsage(scope.accountId, { start: 0, end: clock.now + 1, groupBy });
    await store.listUsage(scope.accountId, {
      start: 0,
      end: clock.now + 1,
      groupBy,
      environment: 'production',
    });
  }

  // Retention: `size` files and up to `size` final tasks deleted at once, and a task deleted alone.
  for (let index = 0; index < size; index++) {
    await store.createFile({
      ...scope,
      id: newId('file'),
      kind: 'image',
      contentType: 'image/png',
      filename: 'a.png',
      bytes: 1,
    });
  }
  clock.now += 1;
  assert.equal((await store.deleteExpiredFiles(clock.now, size)).length, size);
  assert.equal((await store.deleteExpiredTasks(clock.now, size)).length, size);
  const final = (await store.listTasks(scope, { limit: 1, status: 'completed' })).tasks[0];
  if (final) assert.equal((await store.deleteTask(final.id, scope))?.deleted, true);
}

/**
 * Every other operation of the store, with values that differ from pass to pass (ids, emails, times, limits,
 * progress, ratios) and each optional argument both given and left out: any value written into the SQL instead
 * of bound to it would make a statement per pass.
 */
async function passOverTheRest(store: Store, clock: { now: number }, size: number): Promise<void> {
  clock.now += 1_000_000;
  await store.ping();
  await store.countAccounts();
  const email = `owner-${size}-${clock.now}@example.com`;
  const owned = await store.createOwnedAccount({ email, passwordHash: `hash-${size}` });
  assert.ok(owned);
  const keysOnly = await store.createAccount();
  assert.equal(
    await store.setAccountOwner(keysOnly.id, { email: `second-${email}`, passwordHash: 'h' }),
    true,
  );
  assert.ok(await store.getAccount(owned.id));
  assert.ok(await store.findAccountOwner(email));
  await store.recordSignInFailure(email);
  assert.equal((await store.listSignInFailures(email, clock.now - size)).length, 1);
  await store.forgetSignInFailures(clock.now - 60_000 - size);
  const tokenHash = `token-${size}-${clock.now}`;
  await store.createSession({
    tokenHash,
    accountId: owned.id,
    csrfToken: `csrf-${size}`,
    environment: 'production',
    expiresAt: clock.now + 60_000 + size,
  });
  assert.ok(await store.findSession(tokenHash));
  assert.equal(await store.setSessionEnvironment(tokenHash, size % 2 ? 'development' : 'production'), true);
  await store.deleteSession(tokenHash);
  assert.equal(await store.setOwnerPassword(email, `new-hash-${size}`), true);
  await store.getOrCreateSecret(`secret-${size % 3}`, () => `value-${size}`);

  // API keys: made with and without limits, found, listed, used, limited, rotated and revoked by id and prefix.
  const limits = { monthlyVideoSeconds: 100 * size, monthlyBudgetMicros: size % 2 ? null : 1000 * size };
  const newKey = (index: number) => ({
    accountId: owned.id,
    name: `key-${index}`,
    environment: 'production' as const,
    prefix: `vg_${size}_${index}_${clock.now}`,
    hash: `hash-${size}-${index}-${clock.now}`,
  });
  const [first, second, third] = [
    await store.createApiKey({ ...newKey(1), limits }),
    await store.createApiKey(newKey(2)),
    await store.createApiKey(newKey(3)),
  ];
  assert.ok(await store.findActiveApiKey(newKey(1).hash));
  await store.listApiKeys(owned.id);
  await store.listApiKeys();
  await store.touchApiKey(first.id, clock.now + size);
  assert.ok(await store.setApiKeyLimits(first.id, limits, owned.id));
  assert.ok(await store.setApiKeyLimits(second.prefix, limits));
  const rotation = await store.rotateApiKey(
    second.id,
    owned.id,
    { prefix: `vg_rotated_${size}_${clock.now}`, hash: `rotated-${size}-${clock.now}` },
    1000 * size,
  );
  assert.ok(rotation);
  assert.ok(await store.revokeApiKey(rotation.created.id, owned.id));
  assert.ok(await store.revokeApiKey(third.prefix));
  assert.ok(await store.setAccountLimits(owned.id, limits));
  assert.deepEqual(await store.getAccountLimits(owned.id), limits);

  // Tasks made under a key and a price, once under an idempotency key, read with and without a scope.
  const scope: TaskScope = { accountId: owned.id, environment: 'production' };
  const task = await store.createTask({
    ...scope,
    id: newTaskId(),
    model: 'videogen-2.0-text-to-video',
    params: { ...PARAMS, aspect_ratio: 'adaptive', seed: size },
    apiKeyId: first.id,
    costMicros: 10 * size,
  });
  const once = { key: `idempotency-${size}`, requestHash: `request-${size}`, since: clock.now - size };
  await store.createTaskOnce(
    { ...scope, id: newTaskId(), model: 'videogen-2.0-text-to-video', params: PARAMS },
    once,
  );
  await store.createTaskOnce(
    { ...scope, id: newTaskId(), model: 'videogen-2.0-text-to-video', params: PARAMS },
    once,
  );
  assert.ok(await store.getTask(task.id, scope));
  assert.ok(await store.getTask(task.id));
  // As many ids as the size: one statement for any number of them.
  const watched = await store.getTasks([task.id, ...Array.from({ length: size }, () => newTaskId())]);
  assert.deepEqual([...watched.keys()], [task.id]);
  await store.countPendingTasks();
  await store.recentRunTimes('videogen-2.0-text-to-video', { since: clock.now - size, limit: 1 + size });

  // Workers: registered for some models, listed, their claims ended by a ratio recorded and a release.
  const workerId = `worker-${size}-${clock.now}`;
  await store.registerWorker(workerId, MODEL_IDS.slice(0, 1 + (size % MODEL_IDS.length)), 10_000 + size);
  const lock = await store.holdWorkerLock(workerId);
  await store.servedModels();
  const claimed = await drain(() => store.claimTask({ workerId, leaseMs: LEASE + size, maxAttempts: 3 }));
  await store.listLeaseOwners();
  for (const [index, each] of claimed.entries()) {
    const ratios = ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9'] as const;
    assert.ok(await store.recordAspectRatio(claimOf(each), ratios[(size + index) % ratios.length] ?? '16:9'));
    assert.ok(await store.releaseTask(claimOf(each)));
  }
  await drain(() => store.claimTask({ workerId, leaseMs: LEASE, maxAttempts: 3 }));
  assert.deepEqual(await store.listLocklessWorkers(), [], 'SQLite has no worker locks');
  assert.equal(await store.requeueOrphanedTasks([workerId]), claimed.length);
  await store.removeWorker(workerId);
  await lock.release();
  // Ended, so that the next pass finds the queue empty.
  for (const each of await drain(() => store.claimTask({ workerId, leaseMs: LEASE, maxAttempts: 3 }))) {
    assert.ok(await store.completeTask(claimOf(each), `results/${each.id}.mp4`));
  }

  // Files read back; webhook secrets read and rotated with different overlaps.
  const file = await store.createFile({
    ...scope,
    id: newId('file'),
    kind: 'image',
    contentType: 'image/png',
    filename: `picture-${size}.png`,
    bytes: size,
  });
  assert.ok(await store.getFile(file.id, scope));
  await store.getWebhookSecrets(owned.id);
  await store.rotateWebhookSecret(owned.id, 1000 * size);
  await store.getWebhookSecrets(owned.id);
}

/** The store's operations, all of them: its class's methods, but for opening and closing. */
function operationsOf(store: Store): string[] {
  const names = new Set<string>();
  for (
    let proto = Object.getPrototypeOf(store);
    proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (typeof Object.getOwnPropertyDescriptor(proto, name)?.value === 'function') names.add(name);
    }
  }
  for (const lifecycle of ['constructor', 'migrate', 'close', 'closeDatabase', 'createWorkSignal'])
    names.delete(lifecycle);
  return [...names].sort();
}

/** `store`, noting the name of each operation called through it. */
function noting(store: Store, called: Set<string>): Store {
  return new Proxy(store, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function' || typeof name !== 'string') return value;
      called.add(name);
      return value.bind(target);
    },
  });
}

describe('SqliteStore statements', () => {
  it('prepares no new statement when the data grows: the SQL strings are bounded by the code', async () => {
    const clock = { now: T0 };
    // On a file, not in memory, so that polls go through the reader's statements too (sqlite-reader.ts).
    const directory = await mkdtemp(join(tmpdir(), 'videogen-statements-'));
    const sqlite = new SqliteStore({ path: join(directory, 'store.db'), now: () => clock.now });
    const called = new Set<string>();
    const store = noting(sqlite, called);
    try {
      await store.migrate();
      const both = async (size: number) => {
        await pass(store, clock, size);
        await passOverTheRest(store, clock, size);
      };
      await both(3);
      const warm = sqlite.preparedStatements;
      const grew: string[] = [];
      for (let size = 1; size <= 40; size++) {
        await both(size);
        if (sqlite.preparedStatements !== warm) grew.push(`${size}: ${sqlite.preparedStatements}`);
      }
      assert.deepEqual(grew, [], `${warm} statements after one pass; after passes of each size`);
      const missed = operationsOf(sqlite).filter((name) => !called.has(name));
      assert.deepEqual(missed, [], 'every operation of the store runs in the passes');
    } finally {
      await sqlite.close();
      await rm(directory, { recursive: true, force: true });
    }
  });
});
