/**
 * The behaviour every `Store` must have. Each implementation's test file calls `storeConformance` with a
 * function that opens an empty store of the test's own (migrated or not: the harness migrates it) reading
 * time from `clock.now`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EngineRoute } from '../src/domain/engine-route.js';
import type { GenerationParams } from '../src/domain/generation-request.js';
import { newTaskId } from '../src/domain/identifiers.js';
import type { ModelId } from '../src/domain/models.js';
import type { Environment, TaskRecord, TaskScope } from '../src/domain/task.js';
import { NO_LIMITS } from '../src/domain/usage.js';
import type { ApiKeyRecord, Claim, ClaimRouting, Store, TaskListQuery } from '../src/ports/store.js';
import { deliveryStoreConformance } from './delivery-store-conformance.js';
import { type Clock, storeHarness, T0 } from './helpers/store-harness.js';
import { usageStoreConformance } from './usage-store-conformance.js';

const LEASE = 30_000;
const TEXT: ModelId = 'videogen-2.0-text-to-video';
const IMAGE: ModelId = 'videogen-2.0-image-to-video';

const PARAMS: GenerationParams = {
  prompt: 'A lighthouse at dusk, "quoted" and ünïcödé ✓',
  image_urls: ['https://example.com/a.png', 'data:image/png;base64,AAAA'],
  video_urls: [],
  audio_urls: ['https://example.com/a.mp3'],
  duration: 15,
  quality: '1080p',
  aspect_ratio: 'adaptive',
  seed: 4294967295,
  callback_url: null,
  generate_audio: false,
};

/** Task ids that sort in the opposite order from their creation, so ordering by id cannot pass for FIFO. */
function descendingIds(count: number): string[] {
  return Array.from({ length: count }, () => newTaskId()).sort((a, b) => (a < b ? 1 : -1));
}

function claimOf(task: TaskRecord): Claim {
  assert.ok(task.leaseOwner, 'a claimed task has a lease owner');
  return { taskId: task.id, attempt: task.attempts, workerId: task.leaseOwner };
}

export function storeConformance(name: string, open: (clock: Clock) => Promise<Store>): void {
  const withStore = storeHarness(open);

  async function newScope(store: Store, environment: Environment = 'development'): Promise<TaskScope> {
    return { accountId: (await store.createAccount()).id, environment };
  }

  async function addTask(
    store: Store,
    scope: TaskScope,
    model: ModelId = TEXT,
    id = newTaskId(),
  ): Promise<TaskRecord> {
    return store.createTask({ ...scope, id, model, params: PARAMS });
  }

  async function claim(store: Store, workerId = 'worker-1', maxAttempts = 3, models?: readonly ModelId[]) {
    return store.claimTask({ workerId, leaseMs: LEASE, maxAttempts, ...(models ? { models } : {}) });
  }

  async function mustGet(store: Store, id: string): Promise<TaskRecord> {
    const task = await store.getTask(id);
    assert.ok(task, `task ${id} exists`);
    return task;
  }

  describe(`Store conformance: ${name}`, () => {
    describe('lifecycle', () => {
      it('migrates twice without harm and answers ping', () =>
        withStore(async (store) => {
          await store.migrate();
          await store.ping();
          assert.equal(await store.countAccounts(), 0);
        }));
    });

    describe('accounts and secrets', () => {
      it('creates accounts with distinct ids and counts them', () =>
        withStore(async (store, clock) => {
          assert.equal(await store.countAccounts(), 0);
          const a = await store.createAccount();
          clock.now += 5;
          const b = await store.createAccount();
          assert.notEqual(a.id, b.id);
          assert.equal(a.createdAt, T0);
          assert.equal(b.createdAt, T0 + 5);
          assert.equal(await store.countAccounts(), 2);
        }));

      it('getOrCreateSecret keeps the first value and generates only once', () =>
        withStore(async (store) => {
          let calls = 0;
          const generate = () => `secret-${++calls}`;
          assert.equal(await store.getOrCreateSecret('links', generate), 'secret-1');
          assert.equal(await store.getOrCreateSecret('links', generate), 'secret-1');
          assert.equal(calls, 1);
          assert.equal(await store.getOrCreateSecret('other', () => 'x'), 'x');
          assert.equal(await store.getOrCreateSecret('links', () => 'y'), 'secret-1');
        }));
    });

    describe('API keys', () => {
      it('creates a key and finds it, active, by hash', () =>
        withStore(async (store) => {
          const { accountId } = await newScope(store);
          const created = await store.createApiKey({
            accountId,
            name: 'ci',
            environment: 'production',
            prefix: 'vg_prod_abc123',
            hash: 'hash-1',
          });
          assert.deepEqual(created, {
            id: created.id,
            accountId,
            name: 'ci',
            environment: 'production',
            prefix: 'vg_prod_abc123',
            createdAt: T0,
            lastUsedAt: null,
            revokedAt: null,
            expiresAt: null,
            limits: NO_LIMITS,
          });
          assert.deepEqual(await store.findActiveApiKey('hash-1'), created);
          assert.equal(await store.findActiveApiKey('hash-2'), undefined);
        }));

      it('lists keys, all or per account, oldest first', () =>
        withStore(async (store, clock) => {
          const a = await newScope(store);
          const b = await newScope(store);
          const make = (accountId: string, n: number, environment: Environment = 'development') =>
            store.createApiKey({ accountId, name: `key ${n}`, environment, prefix: `p${n}`, hash: `h${n}` });
          clock.now = T0 + 30;
          const third = await make(a.accountId, 3, 'production');
          clock.now = T0 + 10;
          const first = await make(a.accountId, 1);
          clock.now = T0 + 20;
          const second = await make(b.accountId, 2);
          assert.deepEqual(await store.listApiKeys(), [first, second, third]);
          assert.deepEqual(await store.listApiKeys(a.accountId), [first, third]);
          assert.deepEqual(await store.listApiKeys(b.accountId), [second]);
          assert.deepEqual(await store.listApiKeys('acct_nobody'), []);
          // More keys, created newest first, so that no other order passes for oldest-first by chance.
          const more: ApiKeyRecord[] = [];
          for (let n = 9; n >= 4; n--) {
            clock.now = T0 + 1000 * n;
            more.unshift(await make(b.accountId, n));
          }
          assert.deepEqual(await store.listApiKeys(b.accountId), [second, ...more]);
        }));

      it('touchApiKey records when the key was last used', () =>
        withStore(async (store) => {
          const { accountId } = await newScope(store);
          const key = await store.createApiKey({
            accountId,
            name: 'k',
            environment: 'development',
            prefix: 'p',
            hash: 'h',
          });
          await store.touchApiKey(key.id, T0 + 1234);
          assert.equal((await store.findActiveApiKey('h'))?.lastUsedAt, T0 + 1234);
          assert.equal((await store.listApiKeys())[0]?.lastUsedAt, T0 + 1234);
        }));

      it('revokes by id or by prefix, once, leaving other keys active', () =>
        withStore(async (store, clock) => {
          const { accountId } = await newScope(store);
          const make = (n: number) =>
            store.createApiKey({
              accountId,
              name: `k${n}`,
              environment: 'development',
              prefix: `vg_dev_pre${n}`,
              hash: `h${n}`,
            });
          const one = await make(1);
          clock.now += 1;
          const two = await make(2);
          clock.now += 1;
          await make(3);
          clock.now = T0 + 99;
          assert.equal(await store.revokeApiKey(one.id), true);
          assert.equal(await store.findActiveApiKey('h1'), undefined);
          assert.equal(await store.revokeApiKey(one.id), false);
          assert.equal(await store.revokeApiKey('vg_dev_pre2'), true);
          assert.equal(await store.findActiveApiKey('h2'), undefined);
          assert.equal(await store.revokeApiKey(two.prefix), false);
          assert.equal(await store.revokeApiKey('no-such-key'), false);
          assert.ok(await store.findActiveApiKey('h3'));
          const listed = await store.listApiKeys();
          assert.deepEqual(
            listed.map((k) => k.revokedAt),
            [T0 + 99, T0 + 99, null],
          );
        }));

      it('revokes nothing while a prefix matches several active keys', () =>
        withStore(async (store) => {
          const { accountId } = await newScope(store);
          for (const hash of ['ha', 'hb']) {
            await store.createApiKey({
              accountId,
              name: hash,
              environment: 'development',
              prefix: 'vg_dev_same',
              hash,
            });
          }
          assert.equal(await store.revokeApiKey('vg_dev_same'), false);
          const a = await store.findActiveApiKey('ha');
          assert.ok(a);
          assert.ok(await store.findActiveApiKey('hb'));
          // Once one of them is revoked, the prefix names exactly one active key again.
          assert.equal(await store.revokeApiKey(a.id), true);
          assert.equal(await store.revokeApiKey('vg_dev_same'), true);
          assert.equal(await store.findActiveApiKey('hb'), undefined);
          assert.equal(await store.revokeApiKey('vg_dev_same'), false);
        }));

      it("revokes only the given account's key when an account is named", () =>
        withStore(async (store) => {
          const a = await newScope(store);
          const b = await newScope(store);
          const key = await store.createApiKey({
            accountId: a.accountId,
            name: 'k',
            environment: 'development',
            prefix: 'vg_dev_a',
            hash: 'ha',
          });
          assert.equal(await store.revokeApiKey(key.id, b.accountId), false);
          assert.ok(await store.findActiveApiKey('ha'));
          assert.equal(await store.revokeApiKey(key.id, a.accountId), true);
          assert.equal(await store.findActiveApiKey('ha'), undefined);
        }));

      it('rotates a key: the new one works at once, the old one until its grace period ends', () =>
        withStore(async (store, clock) => {
          const { accountId } = await newScope(store);
          const other = await newScope(store);
          const old = await store.createApiKey({
            accountId,
            name: 'ci',
            environment: 'production',
            prefix: 'vg_prod_old',
            hash: 'h-old',
          });
          clock.now = T0 + 10;
          assert.equal(
            await store.rotateApiKey(old.id, other.accountId, { prefix: 'x', hash: 'x' }, 1000),
            undefined,
          );
          const rotation = await store.rotateApiKey(
            old.id,
            accountId,
            { prefix: 'vg_prod_new', hash: 'h-new' },
            1000,
          );
          assert.ok(rotation);
          assert.equal(rotation.created.name, 'ci');
          assert.equal(rotation.created.environment, 'production');
          assert.equal(rotation.created.prefix, 'vg_prod_new');
          assert.deepEqual(rotation.previous, { ...old, expiresAt: T0 + 1010 });
          assert.deepEqual(await store.findActiveApiKey('h-new'), rotation.created);
          assert.deepEqual(await store.findActiveApiKey('h-old'), rotation.previous);
          clock.now = T0 + 1010;
          assert.equal(await store.findActiveApiKey('h-old'), undefined);
          assert.ok(await store.findActiveApiKey('h-new'));
          // An expired key is not active: it cannot be rotated or revoked again.
          assert.equal(await store.rotateApiKey(old.id, accountId, { prefix: 'y', hash: 'y' }, 0), undefined);
          assert.equal(await store.revokeApiKey(old.id), false);
          // No grace: revoked at once.
          const again = await store.rotateApiKey(
            rotation.created.id,
            accountId,
            { prefix: 'vg_prod_3', hash: 'h3' },
            0,
          );
          assert.equal(again?.previous.revokedAt, T0 + 1010);
          assert.equal(await store.findActiveApiKey('h-new'), undefined);
          assert.ok(await store.findActiveApiKey('h3'));
        }));
    });

    describe('dashboard owners, sessions and sign-in failures', () => {
      const owner = { email: 'ada@example.com', passwordHash: '$argon2id$stand-in' };

      it('creates an owned account once per email and finds its owner', () =>
        withStore(async (store) => {
          const account = await store.createOwnedAccount(owner);
          assert.ok(account);
          assert.equal(account.email, owner.email);
          assert.deepEqual(await store.getAccount(account.id), account);
          assert.equal(await store.createOwnedAccount({ ...owner, passwordHash: 'other' }), undefined);
          assert.deepEqual(await store.findAccountOwner(owner.email), { accountId: account.id, ...owner });
          assert.equal(await store.findAccountOwner('bob@example.com'), undefined);
          // Every account signs callbacks from the start, owned or not.
          assert.equal((await store.getWebhookSecrets(account.id)).length, 1);
        }));

      it('gives a key-only account an owner once', () =>
        withStore(async (store) => {
          const plain = await store.createAccount();
          assert.equal(plain.email, null);
          assert.equal(await store.findAccountOwner(owner.email), undefined);
          assert.equal(await store.setAccountOwner(plain.id, owner), true);
          assert.equal((await store.getAccount(plain.id))?.email, owner.email);
          assert.equal(await store.setAccountOwner(plain.id, { ...owner, email: 'x@example.com' }), false);
          const second = await store.createAccount();
          assert.equal(await store.setAccountOwner(second.id, owner), false, 'the email is taken');
          assert.equal(
            await store.setAccountOwner('acct_nobody', { ...owner, email: 'y@example.com' }),
            false,
          );
        }));

      it('keeps sessions until they expire, switches their environment and deletes them', () =>
        withStore(async (store, clock) => {
          const { accountId } = await newScope(store);
          const session = await store.createSession({
            tokenHash: 't1',
            accountId,
            csrfToken: 'c1',
            environment: 'development',
            expiresAt: T0 + 100,
          });
          assert.deepEqual(await store.findSession('t1'), { ...session, createdAt: T0 });
          assert.equal(await store.setSessionEnvironment('t1', 'production'), true);
          assert.equal((await store.findSession('t1'))?.environment, 'production');
          assert.equal(await store.setSessionEnvironment('nope', 'production'), false);
          clock.now = T0 + 100;
          assert.equal(await store.findSession('t1'), undefined);
          await store.createSession({
            tokenHash: 't2',
            accountId,
            csrfToken: 'c2',
            environment: 'development',
            expiresAt: T0 + 500,
          });
          assert.ok(await store.findSession('t2'));
          await store.deleteSession('t2');
          assert.equal(await store.findSession('t2'), undefined);
        }));

      it("sets an owner's password, ending the account's sessions and forgetting failed sign-ins", () =>
        withStore(async (store) => {
          const account = await store.createOwnedAccount(owner);
          const other = await store.createOwnedAccount({ ...owner, email: 'bob@example.com' });
          assert.ok(account && other);
          const session = (tokenHash: string, accountId: string) =>
            store.createSession({
              tokenHash,
              accountId,
              csrfToken: 'c',
              environment: 'development',
              expiresAt: T0 + 1000,
            });
          await session('mine-1', account.id);
          await session('mine-2', account.id);
          await session('theirs', other.id);
          await store.recordSignInFailure(owner.email);
          await store.recordSignInFailure('bob@example.com');

          assert.equal(await store.setOwnerPassword(owner.email, '$argon2id$new'), true);
          assert.equal((await store.findAccountOwner(owner.email))?.passwordHash, '$argon2id$new');
          assert.equal(await store.findSession('mine-1'), undefined);
          assert.equal(await store.findSession('mine-2'), undefined);
          assert.ok(await store.findSession('theirs'), "another account's session is untouched");
          assert.deepEqual(await store.listSignInFailures(owner.email, 0), []);
          assert.equal((await store.listSignInFailures('bob@example.com', 0)).length, 1);
          assert.equal(await store.setOwnerPassword('nobody@example.com', 'x'), false);
        }));

      it('lists sign-in failures per email since a time, oldest first', () =>
        withStore(async (store, clock) => {
          for (const at of [T0 + 3, T0 + 1, T0 + 2]) {
            clock.now = at;
            await store.recordSignInFailure('ada@example.com');
          }
          await store.recordSignInFailure('bob@example.com');
          assert.deepEqual(await store.listSignInFailures('ada@example.com', T0), [T0 + 1, T0 + 2, T0 + 3]);
          assert.deepEqual(await store.listSignInFailures('ada@example.com', T0 + 2), [T0 + 2, T0 + 3]);
          assert.deepEqual(await store.listSignInFailures('carol@example.com', T0), []);
        }));

      it("forgets every email's sign-in failures before a time, and only those", () =>
        withStore(async (store, clock) => {
          for (const [at, email] of [
            [T0 + 1, 'ada@example.com'],
            [T0 + 2, 'bob@example.com'],
            [T0 + 3, 'ada@example.com'],
          ] as const) {
            clock.now = at;
            await store.recordSignInFailure(email);
          }
          await store.forgetSignInFailures(T0 + 3);
          assert.deepEqual(await store.listSignInFailures('ada@example.com', 0), [T0 + 3]);
          assert.deepEqual(await store.listSignInFailures('bob@example.com', 0), []);
        }));
    });

    describe('tasks', () => {
      it('creates a pending task whose params round-trip exactly', () =>
        withStore(async (store) => {
          const scope = await newScope(store, 'production');
          const id = newTaskId();
          const created = await store.createTask({ ...scope, id, model: IMAGE, params: PARAMS });
          const expected: TaskRecord = {
            id,
            accountId: scope.accountId,
            environment: 'production',
            model: IMAGE,
            status: 'pending',
            progress: 0,
            revision: 1,
            params: PARAMS,
            error: null,
            resultKey: null,
            attempts: 0,
            leaseOwner: null,
            leaseExpiresAt: null,
            createdAt: T0,
            updatedAt: T0,
            completedAt: null,
            engine: null,
            upstreamJob: null,
            startedAt: null,
            costMicros: null,
          };
          assert.deepEqual(created, expected);
          assert.deepEqual(await store.getTask(id), expected);
          assert.deepEqual(await store.getTask(id, scope), expected);
          const withCallback = { ...PARAMS, callback_url: 'https://example.com/hook?a=1&b=2', seed: 0 };
          const other = await store.createTask({
            ...scope,
            id: newTaskId(),
            model: TEXT,
            params: withCallback,
          });
          assert.deepEqual((await mustGet(store, other.id)).params, withCallback);
        }));

      it('refuses a second task with the same id', () =>
        withStore(async (store) => {
          const scope = await newScope(store);
          const task = await addTask(store, scope);
          await assert.rejects(store.createTask({ ...scope, id: task.id, model: IMAGE, params: PARAMS }));
          assert.deepEqual(await mustGet(store, task.id), task);
        }));

      it('getTask hides a task from another account or environment', () =>
        withStore(async (store) => {
          const scope = await newScope(store, 'development');
          const other = await newScope(store, 'development');
          const task = await addTask(store, scope);
          assert.equal(await store.getTask(task.id, other), undefined);
          assert.equal(await store.getTask(task.id, { ...scope, environment: 'production' }), undefined);
          assert.equal((await store.getTask(task.id, scope))?.id, task.id);
          assert.equal((await store.getTask(task.id))?.id, task.id);
          assert.equal(await store.getTask(newTaskId()), undefined);
        }));

      it('counts pending tasks', () =>
        withStore(async (store) => {
          const scope = await newScope(store);
          assert.equal(await store.countPendingTasks(), 0);
          await addTask(store, scope);
          await addTask(store, scope);
          assert.equal(await store.countPendingTasks(), 2);
          await claim(store);
          assert.equal(await store.countPendingTasks(), 1);
        }));
    });

    describe('claiming', () => {
      it('claims the oldest pending task by creation time, not insertion order', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const [olderId, newerId] = descendingIds(2);
          clock.now = T0 + 10;
          const newer = await addTask(store, scope, TEXT, newerId);
          clock.now = T0 + 5;
          const older = await addTask(store, scope, TEXT, olderId);
          clock.now = T0 + 20;
          assert.equal((await claim(store))?.id, older.id);
          assert.equal((await claim(store))?.id, newer.id);
          assert.equal(await claim(store), undefined);
        }));

      it('moves the task to processing with a lease and one more attempt', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const task = await addTask(store, scope);
          clock.now = T0 + 1000;
          const claimed = await store.claimTask({ workerId: 'w-a', leaseMs: 45_000, maxAttempts: 3 });
          assert.ok(claimed);
          assert.deepEqual(claimed, {
            ...task,
            status: 'processing',
            revision: 2,
            attempts: 1,
            leaseOwner: 'w-a',
            leaseExpiresAt: T0 + 1000 + 45_000,
            updatedAt: T0 + 1000,
            startedAt: T0 + 1000,
          });
          assert.deepEqual(await mustGet(store, task.id), claimed);
        }));

      it('does not claim a task under a live lease; claims it again once the lease expires', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const task = await addTask(store, scope);
          const first = await claim(store, 'w-1');
          assert.equal(first?.id, task.id);
          clock.now = T0 + LEASE - 1;
          assert.equal(await claim(store, 'w-2'), undefined);
          clock.now = T0 + LEASE + 1;
          const second = await claim(store, 'w-2');
          assert.equal(second?.id, task.id);
          assert.equal(second?.attempts, 2);
          assert.equal(second?.leaseOwner, 'w-2');
          assert.equal(second?.leaseExpiresAt, clock.now + LEASE);
        }));

      it('does not claim an expired task that has used its attempts', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const task = await addTask(store, scope);
          assert.equal((await claim(store, 'w-1', 2))?.attempts, 1);
          clock.now += LEASE + 1;
          assert.equal((await claim(store, 'w-2', 2))?.attempts, 2);
          clock.now += LEASE + 1;
          assert.equal(await claim(store, 'w-3', 2), undefined);
          const after = await mustGet(store, task.id);
          assert.equal(after.status, 'processing');
          assert.equal(after.leaseOwner, 'w-2');
          assert.equal(after.attempts, 2);
        }));

      it('takes an expired task before newer pending ones, and pending ones before newer expired ones', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const [oldestId, middleId, newestId] = descendingIds(3);
          const oldest = await addTask(store, scope, TEXT, oldestId);
          clock.now += 1;
          const middle = await addTask(store, scope, TEXT, middleId);
          clock.now += 1;
          const newest = await addTask(store, scope, TEXT, newestId);
          assert.equal((await claim(store, 'w-1'))?.id, oldest.id);
          clock.now += LEASE + 1;
          const retried = await claim(store, 'w-2');
          assert.equal(retried?.id, oldest.id, 'the expired task is older than every pending one');
          assert.equal(retried?.attempts, 2);
          assert.equal((await claim(store, 'w-2'))?.id, middle.id);
          clock.now += LEASE + 1;
          // Both `oldest` (attempt 2) and `middle` (attempt 1) have expired; `newest` is still pending.
          assert.equal((await claim(store, 'w-3'))?.id, oldest.id);
          assert.equal((await claim(store, 'w-3'))?.id, middle.id);
          assert.equal((await claim(store, 'w-3'))?.id, newest.id);
          assert.equal(await claim(store, 'w-3'), undefined);
        }));

      it('claims only the models asked for', () =>
        withStore(async (store) => {
          const scope = await newScope(store);
          const text = await addTask(store, scope, TEXT);
          assert.equal(await claim(store, 'w', 3, [IMAGE]), undefined);
          assert.equal(await claim(store, 'w', 3, []), undefined);
          assert.equal((await claim(store, 'w', 3, [IMAGE, TEXT]))?.id, text.id);
          const image = await addTask(store, scope, IMAGE);
          assert.equal(await claim(store, 'w', 3, [TEXT]), undefined);
          assert.equal((await claim(store, 'w'))?.id, image.id);
        }));

      it('leaves expired tasks of other models alone', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const image = await addTask(store, scope, IMAGE);
          assert.equal((await claim(store, 'w-1', 3, [IMAGE]))?.id, image.id);
          clock.now += LEASE + 1;
          assert.equal(await claim(store, 'w-2', 3, [TEXT]), undefined);
          assert.equal((await claim(store, 'w-2', 3, [IMAGE]))?.attempts, 2);
        }));

      it('never hands the same task to two concurrent claims', () =>
        withStore(async (store, clock) => {
          /**
           * Claims concurrently, then one at a time until nothing is left: a store may pass over a row
           * another claim holds for that instant (PostgreSQL's SKIP LOCKED), but never give it out twice.
           */
          const claimEverything = async (claimers: number, prefix: string) => {
            const concurrent = await Promise.all(
              Array.from({ length: claimers }, (_, i) => claim(store, `${prefix}-${i}`)),
            );
            const got = concurrent.flatMap((task) => (task ? [task] : []));
            assert.ok(got.length > 0);
            const late = () => claim(store, `${prefix}-late`);
            for (let task = await late(); task; task = await late()) got.push(task);
            return got;
          };
          const scope = await newScope(store);
          const ids = new Set<string>();
          for (let i = 0; i < 3; i++) ids.add((await addTask(store, scope)).id);
          const first = (await claimEverything(5, 'w')).map((task) => task.id);
          assert.equal(first.length, 3);
          assert.deepEqual(new Set(first), ids);

          // Again with expired leases and pending tasks mixed, and more claimers than tasks.
          clock.now += LEASE + 1;
          for (let i = 0; i < 7; i++) ids.add((await addTask(store, scope)).id);
          const again = await claimEverything(16, 'v');
          assert.equal(again.length, 10);
          assert.deepEqual(new Set(again.map((task) => task.id)), ids);
          for (const task of again) assert.deepEqual(await mustGet(store, task.id), task);
        }));

      it('holds an account at its processing cap: its further tasks stay pending, others are claimed', () =>
        withStore(async (store, clock) => {
          const capped = await newScope(store);
          const other = await newScope(store);
          const claimCapped = (workerId: string) =>
            store.claimTask({ workerId, leaseMs: LEASE, maxAttempts: 3, maxActivePerAccount: 1 });
          const [firstId, secondId, theirsId] = descendingIds(3);
          const first = await addTask(store, capped, TEXT, firstId);
          clock.now += 1;
          const second = await addTask(store, capped, IMAGE, secondId);
          clock.now += 1;
          const theirs = await addTask(store, other, TEXT, theirsId);
          clock.now += 1;
          // The cap is the account's, across environments and models.
          const production = await addTask(store, { ...capped, environment: 'production' }, TEXT);

          const running = await claimCapped('w-1');
          assert.equal(running?.id, first.id);
          assert.equal((await claimCapped('w-2'))?.id, theirs.id, "the capped account's next task waits");
          assert.equal(await claimCapped('w-3'), undefined);
          assert.equal((await mustGet(store, second.id)).status, 'pending');
          assert.equal((await mustGet(store, production.id)).status, 'pending');
          assert.equal(await store.countPendingTasks(), 2);

          // A higher cap, or none, lets the next one through.
          const raised = await store.claimTask({
            workerId: 'w-3',
            leaseMs: LEASE,
            maxAttempts: 3,
            maxActivePerAccount: 2,
          });
          assert.equal(raised?.id, second.id);
          assert.ok(raised && (await store.releaseTask(claimOf(raised))));

          // When the running task ends, the oldest waiting one is claimed.
          assert.ok(running && (await store.completeTask(claimOf(running), 'results/first.mp4')));
          const next = await claimCapped('w-3');
          assert.equal(next?.id, second.id);
          assert.equal(await claimCapped('w-4'), undefined);
          assert.ok(
            next && (await store.failTask(claimOf(next), { code: 'generation_failed', message: 'x' })),
          );
          assert.equal((await claimCapped('w-4'))?.id, production.id);

          // An expired lease is claimed again, cap or not: that replaces the run rather than adding one.
          const added = await addTask(store, capped, TEXT);
          clock.now += LEASE + 1;
          const retried = await claimCapped('w-5');
          assert.equal(retried?.id, theirs.id);
          assert.equal(retried?.attempts, 2);
          const again = await claimCapped('w-5');
          assert.equal(again?.id, production.id);
          assert.equal(again?.attempts, 2);
          assert.equal(await claimCapped('w-5'), undefined);
          assert.equal((await mustGet(store, added.id)).status, 'pending');
        }));

      it('never lets concurrent claims take an account past its cap', () =>
        withStore(async (store) => {
          const scopes = [await newScope(store), await newScope(store), await newScope(store)];
          for (let i = 0; i < 4; i++) for (const scope of scopes) await addTask(store, scope);
          const claimed = await Promise.all(
            Array.from({ length: 10 }, (_, i) =>
              store.claimTask({ workerId: `w-${i}`, leaseMs: LEASE, maxAttempts: 3, maxActivePerAccount: 2 }),
            ),
          );
          const perAccount = new Map<string, number>();
          for (const task of claimed) {
            if (task) perAccount.set(task.accountId, (perAccount.get(task.accountId) ?? 0) + 1);
          }
          for (const [accountId, count] of perAccount)
            assert.ok(count <= 2, `${accountId}: ${count} claimed`);
          // Every slot the cap allows gets filled eventually.
          const late = () =>
            store.claimTask({ workerId: 'w-late', leaseMs: LEASE, maxAttempts: 3, maxActivePerAccount: 2 });
          while (await late());
          assert.equal(await store.countPendingTasks(), 12 - 6);
        }));
    });

    describe('routing across engines', () => {
      const CIRCUIT = { failures: 2, cooldownMs: 10_000 };
      const routeOf = (...steps: string[][]): EngineRoute =>
        steps.map((step) => step.map((engine) => ({ engine, weight: 1 })));
      const routing = (
        routes: ReadonlyMap<ModelId, EngineRoute>,
        caps: Record<string, number> = {},
      ): ClaimRouting => ({
        routes,
        maxConcurrency: new Map(Object.entries(caps)),
        circuit: CIRCUIT,
        random: () => 0,
      });
      const claimRouted = (store: Store, workerId: string, options: ClaimRouting) =>
        store.claimTask({ workerId, leaseMs: LEASE, maxAttempts: 3, routing: options });

      it('records the engine a claim routes the task to, and leaves unrouted models alone', () =>
        withStore(async (store) => {
          const scope = await newScope(store);
          const image = await addTask(store, scope, IMAGE);
          const text = await addTask(store, scope, TEXT);
          const claimed = await claimRouted(store, 'w-1', routing(new Map([[TEXT, routeOf(['gpu'])]])));
          assert.equal(claimed?.id, text.id);
          assert.equal(claimed?.engine, 'gpu');
          assert.equal((await mustGet(store, text.id)).engine, 'gpu');
          assert.equal((await mustGet(store, image.id)).status, 'pending');
          assert.deepEqual(Object.fromEntries((await store.engineStats()).inFlight), { gpu: 1 });
        }));

      it('keeps a task whose upstream job was accepted on its engine through a hand-back and a lapsed lease', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const task = await addTask(store, scope, TEXT);
          const first = await claimRouted(store, 'w-1', routing(new Map([[TEXT, routeOf(['ark'])]])));
          assert.equal(first?.engine, 'ark');
          assert.ok(first);
          const job = { engine: 'ark', id: 'cgt-20261129-1', data: { region: 'ap' }, submittedAt: clock.now };
          assert.equal(await store.recordUpstreamJob(claimOf(first), job), true);
          assert.deepEqual((await mustGet(store, task.id)).upstreamJob, job);
          assert.ok(await store.releaseTask(claimOf(first)));
          // The route now says gpu first: the task stays with ark, which has its job.
          const moved = routing(new Map([[TEXT, routeOf(['gpu'], ['ark'])]]));
          const second = await claimRouted(store, 'w-2', moved);
          assert.equal(second?.engine, 'ark');
          assert.deepEqual(second?.upstreamJob, job);
          clock.now += LEASE + 1;
          const third = await claimRouted(store, 'w-3', moved);
          assert.equal(third?.engine, 'ark', 'a lapsed lease changes nothing either');
          assert.deepEqual(third?.upstreamJob, job);
          assert.equal(await store.recordUpstreamJob(claimOf(first), { ...job, id: 'cgt-other' }), false);
          assert.deepEqual((await mustGet(store, task.id)).upstreamJob, job, 'a stale claim writes nothing');
        }));

      it("hands out each failed task's upstream job once, for its engines, and never a completed task's", () =>
        withStore(async (store) => {
          const scope = await newScope(store);
          const options = routing(new Map([[TEXT, routeOf(['ark'])]]));
          const jobs: string[] = [];
          for (let i = 0; i < 3; i++) {
            await addTask(store, scope, TEXT);
            const task = await claimRouted(store, `w-${i}`, options);
            assert.ok(task);
            const job = { engine: 'ark', id: `cgt-${i}`, submittedAt: 1 };
            assert.ok(await store.recordUpstreamJob(claimOf(task), job));
            if (i === 0) assert.ok(await store.completeTask(claimOf(task), 'r'));
            else assert.ok(await store.failTask(claimOf(task), { code: 'timeout', message: 'late' }));
            jobs.push(task.id);
          }
          assert.deepEqual(await store.takeEndedUpstreamJobs(['gpu'], 10), [], 'only the engines asked for');
          const taken = await store.takeEndedUpstreamJobs(['gpu', 'ark'], 10);
          assert.deepEqual(
            taken.map(({ taskId, job }) => [taskId, job.id]).sort(),
            [
              [jobs[1], 'cgt-1'],
              [jobs[2], 'cgt-2'],
            ].sort(),
          );
          assert.deepEqual(await store.takeEndedUpstreamJobs(['ark'], 10), [], 'each once');
          assert.equal((await mustGet(store, jobs[1] ?? '')).upstreamJob, null);
          assert.equal(
            (await mustGet(store, jobs[0] ?? '')).upstreamJob?.id,
            'cgt-0',
            'a completed task keeps its job',
          );
        }));

      it("finds a processing task by its upstream job's id on its engine, and no other", () =>
        withStore(async (store) => {
          const scope = await newScope(store);
          const options = routing(new Map([[TEXT, routeOf(['ark'])]]));
          const tasks = [];
          for (let i = 0; i < 2; i++) {
            await addTask(store, scope, TEXT);
            const task = await claimRouted(store, `w-${i}`, options);
            assert.ok(task);
            tasks.push(task);
          }
          const [running, ended] = tasks as [TaskRecord, TaskRecord];
          assert.equal(await store.findUpstreamJobTask('ark', 'cgt-1'), undefined, 'no job stored yet');
          assert.ok(
            await store.recordUpstreamJob(claimOf(running), { engine: 'ark', id: 'cgt-1', submittedAt: 1 }),
          );
          assert.ok(
            await store.recordUpstreamJob(claimOf(ended), { engine: 'ark', id: 'cgt-2', submittedAt: 1 }),
          );
          assert.equal(await store.findUpstreamJobTask('ark', 'cgt-1'), running.id);
          assert.equal(await store.findUpstreamJobTask('fal', 'cgt-1'), undefined, 'another engine’s job');
          assert.equal(await store.findUpstreamJobTask('ark', 'cgt-3'), undefined);
          assert.ok(await store.completeTask(claimOf(ended), 'r'));
          assert.equal(await store.findUpstreamJobTask('ark', 'cgt-2'), undefined, 'an ended task’s job');
        }));

      it("still hands out a failed task's upstream job once after the task is deleted, by its client or by retention", () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const options = routing(new Map([[TEXT, routeOf(['ark'])]]));
          const ids: string[] = [];
          for (let i = 0; i < 2; i++) {
            await addTask(store, scope, TEXT);
            const task = await claimRouted(store, `w-${i}`, options);
            assert.ok(task);
            assert.ok(
              await store.recordUpstreamJob(claimOf(task), {
                engine: 'ark',
                id: `cgt-gone-${i}`,
                submittedAt: 1,
              }),
            );
            assert.ok(await store.failTask(claimOf(task), { code: 'cancelled', message: 'by the client' }));
            ids.push(task.id);
          }
          assert.equal((await store.deleteTask(ids[0] ?? '', scope))?.deleted, true);
          clock.now += 1000;
          const expired = await store.deleteExpiredTasks(clock.now, 10);
          assert.deepEqual(
            expired.map((task) => task.id),
            [ids[1]],
            'retention took the other',
          );
          assert.deepEqual(await store.takeEndedUpstreamJobs(['gpu'], 10), [], 'only the engines asked for');
          const taken = await store.takeEndedUpstreamJobs(['ark'], 10);
          assert.deepEqual(
            taken.map(({ taskId, job }) => [taskId, job.id]).sort(),
            [
              [ids[0], 'cgt-gone-0'],
              [ids[1], 'cgt-gone-1'],
            ].sort(),
          );
          assert.deepEqual(await store.takeEndedUpstreamJobs(['ark'], 10), [], 'each once');
        }));

      it('holds max_concurrency across concurrent claims, and frees the slot when a task ends or its lease expires', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          for (let i = 0; i < 6; i++) await addTask(store, scope, TEXT);
          const options = routing(new Map([[TEXT, routeOf(['gpu'])]]), { gpu: 2 });
          const claimed = (
            await Promise.all(Array.from({ length: 5 }, (_, i) => claimRouted(store, `w-${i}`, options)))
          ).filter((task) => task !== undefined);
          assert.equal(claimed.length, 2, 'two slots, however many claim at once');
          assert.equal(await store.countPendingTasks(), 4, 'the rest wait, pending');
          const [first, second] = claimed;
          assert.ok(first && second);
          assert.ok(await store.completeTask(claimOf(first), 'r'));
          const third = await claimRouted(store, 'w-9', options);
          assert.equal(third?.engine, 'gpu');
          assert.equal(await claimRouted(store, 'w-9', options), undefined);
          clock.now += LEASE + 1;
          const replaced = await claimRouted(store, 'w-10', options);
          assert.ok(replaced, 'expired leases hold no slot');
        }));

      it('opens a circuit after the policy count of failures, skips it, then lets one trial task through', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          for (let i = 0; i < 5; i++) await addTask(store, scope, TEXT);
          const options = routing(new Map([[TEXT, routeOf(['ark'], ['gpu'])]]));
          assert.equal((await claimRouted(store, 'w-1', options))?.engine, 'ark');
          await store.recordEngineOutcome('ark', 'unavailable', CIRCUIT);
          assert.equal(
            (await claimRouted(store, 'w-1', options))?.engine,
            'ark',
            'one failure is not enough',
          );
          await store.recordEngineOutcome('ark', 'unavailable', CIRCUIT);
          const stats = await store.engineStats();
          assert.deepEqual(stats.circuits.get('ark'), {
            failures: 2,
            openUntil: clock.now + CIRCUIT.cooldownMs,
            trialUntil: null,
          });
          assert.equal((await claimRouted(store, 'w-1', options))?.engine, 'gpu', 'open: the next step');
          clock.now += CIRCUIT.cooldownMs;
          const trial = await claimRouted(store, 'w-2', options);
          assert.equal(trial?.engine, 'ark', 'after the cool-down, one trial');
          assert.equal((await store.engineStats()).circuits.get('ark')?.trialUntil, clock.now + LEASE);
          assert.equal((await claimRouted(store, 'w-3', options))?.engine, 'gpu', 'only one');
          await store.recordEngineOutcome('ark', 'succeeded', CIRCUIT);
          assert.deepEqual((await store.engineStats()).circuits.get('ark'), {
            failures: 0,
            openUntil: null,
            trialUntil: null,
          });
        }));

      it('knows which models live workers serve, until a worker stops or is not renewed in time', () =>
        withStore(async (store, clock) => {
          assert.deepEqual(await store.servedModels(), new Set());
          await store.registerWorker('w-1', [TEXT], 3000);
          await store.registerWorker('w-2', [TEXT, IMAGE], 3000);
          assert.deepEqual(await store.servedModels(), new Set([TEXT, IMAGE]));
          await store.removeWorker('w-2');
          assert.deepEqual(await store.servedModels(), new Set([TEXT]));
          clock.now += 2000;
          await store.registerWorker('w-1', [IMAGE], 3000);
          clock.now += 2000;
          assert.deepEqual(await store.servedModels(), new Set([IMAGE]), 'renewed, with its new models');
          clock.now += 1000;
          assert.deepEqual(await store.servedModels(), new Set(), 'not renewed in time: gone');
        }));

      it('requeues the tasks of gone workers without counting the attempt, and forgets those workers', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const mine = await addTask(store, scope);
          clock.now += 1;
          const theirs = await addTask(store, scope);
          await store.registerWorker('host-1-aaaaaa', [TEXT], 60_000);
          const claimedMine = await claim(store, 'host-1-aaaaaa');
          const claimedTheirs = await claim(store, 'host-2-bbbbbb');
          assert.equal(claimedMine?.id, mine.id);
          assert.equal(claimedTheirs?.id, theirs.id);
          assert.deepEqual((await store.listLeaseOwners()).sort(), ['host-1-aaaaaa', 'host-2-bbbbbb']);
          assert.equal(await store.requeueOrphanedTasks(['host-1-aaaaaa']), 1);
          const requeued = await mustGet(store, mine.id);
          assert.equal(requeued.status, 'pending');
          assert.equal(requeued.attempts, 0, 'a crash does not use up an attempt');
          assert.equal(requeued.leaseOwner, null);
          assert.equal((await mustGet(store, theirs.id)).status, 'processing');
          assert.deepEqual(await store.servedModels(), new Set(), 'the gone worker serves nothing');
          assert.ok(
            claimedMine && !(await store.completeTask(claimOf(claimedMine), 'r')),
            'its writes are fenced',
          );
          const again = await claim(store, 'host-3-cccccc');
          assert.equal(again?.id, mine.id);
          assert.equal(again?.attempts, 1);
        }));

      it('counts concurrent failures from several processes without losing one', () =>
        withStore(async (store) => {
          const policy = { failures: 100, cooldownMs: 1000 };
          await Promise.all(
            Array.from({ length: 12 }, () => store.recordEngineOutcome('gpu', 'unavailable', policy)),
          );
          assert.equal((await store.engineStats()).circuits.get('gpu')?.failures, 12);
        }));

      it('moves a claimed task to the next engine, under the same caps, and only under its claim', () =>
        withStore(async (store) => {
          const scope = await newScope(store);
          await addTask(store, scope, TEXT);
          await addTask(store, scope, TEXT);
          const route = routeOf(['ark'], ['gpu-a', 'gpu-b']);
          const options = routing(new Map([[TEXT, route]]), { 'gpu-a': 1, 'gpu-b': 1 });
          const first = await claimRouted(store, 'w-1', options);
          const second = await claimRouted(store, 'w-2', options);
          assert.ok(first && second);
          const next = {
            maxConcurrency: options.maxConcurrency,
            circuit: CIRCUIT,
            random: () => 0,
            leaseMs: LEASE,
          };
          assert.deepEqual(await store.rerouteTask(claimOf(first), route, new Set(['ark']), next), {
            kind: 'engine',
            engine: 'gpu-a',
            trial: false,
          });
          assert.equal((await mustGet(store, first.id)).engine, 'gpu-a');
          assert.equal(
            (await store.rerouteTask(claimOf(second), route, new Set(['ark']), next)).kind === 'engine' &&
              (await mustGet(store, second.id)).engine,
            'gpu-b',
          );
          assert.deepEqual(
            await store.rerouteTask(claimOf(second), route, new Set(['ark', 'gpu-b']), next),
            { kind: 'wait' },
            'gpu-a is full',
          );
          assert.deepEqual(
            await store.rerouteTask(claimOf(second), route, new Set(['ark', 'gpu-a', 'gpu-b']), next),
            { kind: 'none' },
          );
          const stale = { ...claimOf(first), attempt: first.attempts + 1 };
          await store.completeTask(claimOf(second), 'r');
          assert.deepEqual(await store.rerouteTask(stale, route, new Set(['ark', 'gpu-a']), next), {
            kind: 'none',
          });
          assert.equal((await mustGet(store, first.id)).engine, 'gpu-a');
        }));
    });

    describe('revisions and batched reads', () => {
      it('raises the revision at every write of status or progress, and at no other write', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const task = await addTask(store, scope);
          const revisionOf = async (id: string) => (await mustGet(store, id)).revision;
          assert.equal(task.revision, 1);
          const first = await claim(store, 'w-1');
          assert.ok(first);
          assert.equal(first.revision, 2);
          assert.equal(await store.reportProgress(claimOf(first), 30), true);
          assert.equal(await revisionOf(task.id), 3);
          // Progress that does not rise is no change of it.
          await store.reportProgress(claimOf(first), 30);
          await store.reportProgress(claimOf(first), 10);
          assert.equal(await store.recordAspectRatio(claimOf(first), '9:16'), true);
          assert.equal(await revisionOf(task.id), 3);
          assert.equal(await store.renewLeases('w-1', [claimOf(first)], LEASE).then((kept) => kept.size), 1);
          assert.equal(await revisionOf(task.id), 3);
          // Handed back, its attempt uncounted: the revision still only grows.
          assert.equal(await store.releaseTask(claimOf(first)), true);
          assert.equal(await revisionOf(task.id), 4);
          const second = await claim(store, 'w-2');
          assert.equal(second?.revision, 5);
          assert.equal(second?.attempts, 1);
          clock.now += LEASE + 1;
          const third = await claim(store, 'w-3');
          assert.ok(third);
          assert.equal(third.revision, 6);
          assert.equal(await store.completeTask(claimOf(third), 'results/r.mp4'), true);
          assert.equal(await revisionOf(task.id), 7);

          const cancelled = await addTask(store, scope);
          assert.equal((await store.cancelTask(cancelled.id, scope))?.task.revision, 2);
          const failed = await addTask(store, scope);
          const failedClaim = await claim(store, 'w-4');
          assert.equal(failedClaim?.id, failed.id);
          assert.ok(failedClaim);
          assert.equal(
            await store.failTask(claimOf(failedClaim), { code: 'timeout', message: 'slow' }),
            true,
          );
          assert.equal(await revisionOf(failed.id), 3);
          const abandoned = await addTask(store, scope);
          assert.equal((await claim(store, 'w-5', 1))?.id, abandoned.id);
          clock.now += LEASE + 1;
          assert.equal(await store.failAbandonedTasks(1), 1);
          assert.equal(await revisionOf(abandoned.id), 3);
          const orphaned = await addTask(store, scope);
          assert.equal((await claim(store, 'host-1-aaaaaa'))?.id, orphaned.id);
          assert.equal(await store.requeueOrphanedTasks(['host-1-aaaaaa']), 1);
          assert.equal(await revisionOf(orphaned.id), 3);
        }));

      it('getTasks reads the tasks of many ids at once, whatever their scope, and leaves unknown ids out', () =>
        withStore(async (store) => {
          const a = await addTask(store, await newScope(store));
          const b = await addTask(store, await newScope(store, 'production'));
          const found = await store.getTasks([a.id, b.id, newTaskId()]);
          assert.deepEqual([...found.keys()].sort(), [a.id, b.id].sort());
          assert.deepEqual(found.get(a.id), await mustGet(store, a.id));
          assert.deepEqual(found.get(b.id), await mustGet(store, b.id));
          assert.equal((await store.getTasks([])).size, 0);
        }));
    });

    describe('fenced writes', () => {
      it('rejects every write from a stale claim and changes nothing', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          await addTask(store, scope);
          const first = await claim(store, 'w-1');
          assert.ok(first);
          await store.reportProgress(claimOf(first), 40);
          clock.now += LEASE + 1;
          const second = await claim(store, 'w-2');
          assert.ok(second);
          await store.reportProgress(claimOf(second), 20);
          const before = await mustGet(store, second.id);
          clock.now += 10;
          const stale: Claim[] = [
            claimOf(first),
            { ...claimOf(second), workerId: 'w-1' },
            { ...claimOf(second), attempt: 1 },
            { ...claimOf(second), attempt: 3 },
            { ...claimOf(second), taskId: newTaskId() },
          ];
          for (const c of stale) {
            const label = JSON.stringify(c);
            assert.deepEqual([...(await store.renewLeases(c.workerId, [c], LEASE * 10))], [], label);
            assert.equal(await store.reportProgress(c, 90), false, label);
            assert.equal(await store.completeTask(c, 'results/x.mp4'), false, label);
            assert.equal(await store.failTask(c, { code: 'generation_failed', message: 'no' }), false, label);
            assert.equal(await store.releaseTask(c), false, label);
            const job = { engine: 'ark', id: 'cgt-stale', submittedAt: clock.now };
            assert.equal(await store.recordUpstreamJob(c, job), false, label);
          }
          assert.deepEqual(await mustGet(store, second.id), before);
          assert.equal(await store.reportProgress(claimOf(second), 50), true);
        }));

      it("renews many of one pool's leases at once, each only while its claim is current", () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          for (let i = 0; i < 4; i++) await addTask(store, scope);
          const mine = [await claim(store, 'w-1'), await claim(store, 'w-1'), await claim(store, 'w-1')];
          const theirs = await claim(store, 'w-2');
          assert.ok(mine.every((task) => task !== undefined) && theirs);
          const [a, b, c] = mine as TaskRecord[];
          assert.ok(a && b && c);
          assert.ok(await store.cancelTask(b.id, scope));
          clock.now += 1000;
          const claims = [
            claimOf(a),
            claimOf(b),
            { ...claimOf(c), attempt: c.attempts + 1 },
            claimOf(theirs),
          ];
          const renewed = await store.renewLeases('w-1', claims, 60_000);
          assert.deepEqual(
            [...renewed],
            [a.id],
            "b was cancelled, c is another attempt, theirs is not w-1's",
          );
          assert.equal((await mustGet(store, a.id)).leaseExpiresAt, clock.now + 60_000);
          assert.equal((await mustGet(store, theirs.id)).leaseExpiresAt, theirs.leaseExpiresAt);
          assert.deepEqual([...(await store.renewLeases('w-1', [], 60_000))], []);
        }));

      it('renews the lease from now', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          await addTask(store, scope);
          const task = await claim(store);
          assert.ok(task);
          clock.now += 20_000;
          assert.deepEqual(
            [...(await store.renewLeases(task.leaseOwner ?? '', [claimOf(task)], 60_000))],
            [task.id],
          );
          // A heartbeat is not a change clients see: only the lease moves, updatedAt stays put.
          assert.deepEqual(await mustGet(store, task.id), { ...task, leaseExpiresAt: clock.now + 60_000 });
          clock.now += 59_000;
          assert.equal(await claim(store, 'w-other'), undefined);
        }));

      it('raises progress, never lowers it, and never stores 100 before completion', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          await addTask(store, scope);
          const task = await claim(store);
          assert.ok(task);
          const c = claimOf(task);
          clock.now += 100;
          assert.equal(await store.reportProgress(c, 30), true);
          let current = await mustGet(store, task.id);
          assert.equal(current.progress, 30);
          assert.equal(current.updatedAt, clock.now);
          const raisedAt = clock.now;
          clock.now += 100;
          assert.equal(await store.reportProgress(c, 10), true);
          assert.equal(await store.reportProgress(c, 30), true);
          current = await mustGet(store, task.id);
          assert.equal(current.progress, 30);
          assert.equal(current.updatedAt, raisedAt, 'a report that changes nothing leaves updatedAt');
          assert.equal(await store.reportProgress(c, 31.9), true);
          current = await mustGet(store, task.id);
          assert.equal(current.progress, 31);
          assert.equal(current.updatedAt, clock.now);
          assert.equal(await store.reportProgress(c, 100), true);
          assert.equal((await mustGet(store, task.id)).progress, 99);
          assert.equal(await store.reportProgress(c, 250), true);
          current = await mustGet(store, task.id);
          assert.equal(current.progress, 99);
          assert.equal(current.status, 'processing');
        }));

      it('completes a task: progress 100, result key, completion time, lease cleared', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const created = await addTask(store, scope);
          const task = await claim(store);
          assert.ok(task);
          clock.now += 5000;
          assert.equal(await store.completeTask(claimOf(task), 'results/r.mp4'), true);
          const done = await mustGet(store, task.id);
          assert.deepEqual(done, {
            ...created,
            status: 'completed',
            progress: 100,
            revision: 3,
            resultKey: 'results/r.mp4',
            attempts: 1,
            leaseOwner: null,
            leaseExpiresAt: null,
            updatedAt: clock.now,
            completedAt: clock.now,
            startedAt: task.updatedAt,
          });
          assert.equal(await store.completeTask(claimOf(task), 'results/other.mp4'), false);
          assert.equal(await store.failTask(claimOf(task), { code: 'timeout', message: 'late' }), false);
          assert.equal(await store.releaseTask(claimOf(task)), false);
          clock.now += LEASE * 100;
          assert.equal(await claim(store), undefined);
          assert.equal(await store.failAbandonedTasks(1), 0);
          assert.deepEqual(await mustGet(store, task.id), done);
        }));

      it("keeps the task's cost, the one its usage record reserved", () =>
        withStore(async (store) => {
          const scope = await newScope(store);
          const id = newTaskId();
          const created = await store.createTask({
            ...scope,
            id,
            model: TEXT,
            params: PARAMS,
            costMicros: 750_000,
          });
          assert.equal(created.costMicros, 750_000);
          assert.equal((await mustGet(store, id)).costMicros, 750_000);
          const [usage] = await store.listUsage(scope.accountId, { start: 0, end: T0 + 1, groupBy: 'model' });
          assert.equal(usage?.costMicros, 750_000);
        }));

      it("measures the model's recent runs from claim to completion: completed ones only, newest first", () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          /** A task of `model` claimed now and ended `ms` later; the clock is left at its end. */
          const run = async (model: ModelId, ms: number, end: 'complete' | 'fail' = 'complete') => {
            const created = await addTask(store, scope, model);
            const claimed = await claim(store, 'w', 3, [model]);
            assert.ok(claimed);
            assert.equal(claimed.id, created.id);
            assert.equal(claimed.startedAt, clock.now);
            clock.now += ms;
            if (end === 'complete') assert.ok(await store.completeTask(claimOf(claimed), 'results/r.mp4'));
            else assert.ok(await store.failTask(claimOf(claimed), { code: 'timeout', message: 'late' }));
            clock.now += 1;
          };
          await run(TEXT, 9_000);
          const since = clock.now;
          await run(TEXT, 3_000);
          await run(IMAGE, 60_000);
          await run(TEXT, 4_000, 'fail');
          await run(TEXT, 5_000);
          await addTask(store, scope, TEXT);
          const pending = await claim(store, 'w', 3, [TEXT]);
          assert.ok(pending, 'a run still going counts for nothing');
          assert.deepEqual(await store.recentRunTimes(TEXT, { since, limit: 10 }), [5_000, 3_000]);
          assert.deepEqual(await store.recentRunTimes(TEXT, { since, limit: 1 }), [5_000]);
          assert.deepEqual(await store.recentRunTimes(TEXT, { since: 0, limit: 10 }), [5_000, 3_000, 9_000]);
          assert.deepEqual(await store.recentRunTimes(IMAGE, { since, limit: 10 }), [60_000]);
          assert.deepEqual(
            await store.recentRunTimes('videogen-2.0-fast-text-to-video', { since: 0, limit: 10 }),
            [],
          );
        }));

      it('times a task handed back and claimed again from its last claim', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const created = await addTask(store, scope);
          const first = await claim(store, 'w-1');
          assert.equal(first?.startedAt, T0);
          clock.now = T0 + LEASE + 1;
          const second = await claim(store, 'w-2');
          assert.ok(second);
          assert.equal(second.id, created.id);
          assert.equal(second.startedAt, T0 + LEASE + 1);
          clock.now += 2_000;
          assert.ok(await store.completeTask(claimOf(second), 'results/r.mp4'));
          assert.deepEqual(await store.recentRunTimes(TEXT, { since: 0, limit: 10 }), [2_000]);
        }));

      it('fails a task with its error; a failed task is never claimed', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          await addTask(store, scope);
          const task = await claim(store);
          assert.ok(task);
          await store.reportProgress(claimOf(task), 42);
          clock.now += 7000;
          const error = { code: 'asset_fetch_failed', message: 'image_urls[0] returned 404.' } as const;
          assert.equal(await store.failTask(claimOf(task), error), true);
          const failed = await mustGet(store, task.id);
          assert.equal(failed.status, 'failed');
          assert.deepEqual(failed.error, error);
          assert.equal(failed.completedAt, clock.now);
          assert.equal(failed.updatedAt, clock.now);
          assert.equal(failed.resultKey, null);
          assert.equal(failed.leaseOwner, null);
          assert.equal(failed.leaseExpiresAt, null);
          assert.equal(failed.progress, 42);
          clock.now += LEASE * 100;
          assert.equal(await claim(store), undefined);
          assert.equal(await store.countPendingTasks(), 0);
        }));

      it('releases a task back to the queue without counting the attempt', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          await addTask(store, scope);
          const task = await claim(store, 'w-1');
          assert.ok(task);
          clock.now += 300;
          assert.equal(await store.releaseTask(claimOf(task)), true);
          const released = await mustGet(store, task.id);
          assert.equal(released.status, 'pending');
          assert.equal(released.attempts, 0);
          assert.equal(released.leaseOwner, null);
          assert.equal(released.leaseExpiresAt, null);
          assert.equal(released.updatedAt, clock.now);
          assert.equal(await store.countPendingTasks(), 1);
          assert.deepEqual([...(await store.renewLeases(task.leaseOwner ?? '', [claimOf(task)], LEASE))], []);
          const again = await claim(store, 'w-2');
          assert.equal(again?.id, task.id);
          assert.equal(again?.attempts, 1);
        }));
    });

    describe('abandoned tasks', () => {
      it('fails expired tasks that used their last attempt, with worker_lost', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const task = await addTask(store, scope);
          for (let attempt = 1; attempt <= 3; attempt++) {
            assert.equal((await claim(store, `w-${attempt}`, 3))?.attempts, attempt);
            assert.equal(await store.failAbandonedTasks(3), 0, 'the lease is live');
            clock.now += LEASE + 1;
          }
          const lastClaim: Claim = { taskId: task.id, attempt: 3, workerId: 'w-3' };
          assert.equal(await store.failAbandonedTasks(3), 1);
          const failed = await mustGet(store, task.id);
          assert.equal(failed.status, 'failed');
          assert.equal(failed.error?.code, 'worker_lost');
          assert.match(failed.error?.message ?? '', /stopped responding 3 times/);
          assert.equal(failed.completedAt, clock.now);
          assert.equal(failed.updatedAt, clock.now);
          assert.equal(failed.leaseOwner, null);
          assert.equal(await store.failAbandonedTasks(3), 0);
          assert.equal(await store.completeTask(lastClaim, 'results/late.mp4'), false);
          assert.equal(await claim(store, 'w-4', 3), undefined);
        }));

      it('leaves live leases and expired tasks with attempts left alone', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const expired = await addTask(store, scope);
          await claim(store, 'w-1');
          clock.now += LEASE + 1;
          const live = await addTask(store, scope);
          // maxAttempts 1 passes over the expired task, so this claims the new one.
          assert.equal((await claim(store, 'w-2', 1))?.id, live.id);
          const before = [await mustGet(store, expired.id), await mustGet(store, live.id)];
          assert.equal(await store.failAbandonedTasks(2), 0);
          assert.deepEqual([await mustGet(store, expired.id), await mustGet(store, live.id)], before);
          assert.equal(await store.failAbandonedTasks(1), 1);
          assert.equal((await mustGet(store, expired.id)).status, 'failed');
          assert.deepEqual(await mustGet(store, live.id), before[1]);
        }));

      it('counts each task it fails', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const a = await addTask(store, scope);
          const b = await addTask(store, scope);
          await claim(store, 'w-1', 1);
          await claim(store, 'w-1', 1);
          clock.now += LEASE + 1;
          const c = await addTask(store, scope);
          await claim(store, 'w-2', 1);
          assert.equal(await store.failAbandonedTasks(2), 0, 'attempts left under maxAttempts 2');
          assert.equal(await store.failAbandonedTasks(1), 2);
          assert.equal((await mustGet(store, a.id)).status, 'failed');
          assert.equal((await mustGet(store, b.id)).status, 'failed');
          assert.equal((await mustGet(store, a.id)).error?.message.includes('stopped responding'), true);
          const live = await mustGet(store, c.id);
          assert.equal(live.status, 'processing');
          assert.equal(live.leaseOwner, 'w-2');
        }));
    });

    describe('listing, cancelling and deleting', () => {
      it("lists a scope's tasks newest first in pages, with filters", () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const other = await newScope(store);
          const created: TaskRecord[] = [];
          for (let i = 0; i < 5; i++) {
            clock.now = T0 + i * 1000;
            created.push(await addTask(store, scope, i % 2 === 0 ? TEXT : IMAGE));
          }
          // Two tasks in the same millisecond: the id breaks the tie, and a page boundary between them holds.
          clock.now = T0 + 4000;
          created.push(await addTask(store, scope));
          await addTask(store, other);
          const newestFirst = [...created].sort(
            (a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1),
          );

          const seen: string[] = [];
          let after: { createdAt: number; id: string } | undefined;
          for (let page = 0; page < 10; page++) {
            const { tasks, hasMore } = await store.listTasks(scope, {
              limit: 2,
              ...(after ? { after } : {}),
            });
            seen.push(...tasks.map((t) => t.id));
            const last = tasks.at(-1);
            if (!hasMore || !last) break;
            after = { createdAt: last.createdAt, id: last.id };
          }
          assert.deepEqual(
            seen,
            newestFirst.map((t) => t.id),
            'every task once, newest first, none of the other scope',
          );

          const images = await store.listTasks(scope, { limit: 100, model: IMAGE });
          assert.deepEqual(
            images.tasks.map((t) => t.model),
            [IMAGE, IMAGE],
          );
          const window = await store.listTasks(scope, {
            limit: 100,
            createdAfter: T0 + 1000,
            createdBefore: T0 + 3000,
          });
          assert.deepEqual(
            window.tasks.map((t) => t.createdAt),
            [T0 + 2000, T0 + 1000],
          );
          await claim(store);
          const processing = await store.listTasks(scope, { limit: 100, status: 'processing' });
          assert.equal(processing.tasks.length, 1);
          assert.equal(processing.hasMore, false);
        }));

      it('pages deep through many tasks of one creation time, with filters, skipping and repeating none', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const other = await newScope(store);
          const ids: string[] = [];
          const add = async (at: number, count: number) => {
            clock.now = at;
            for (let i = 0; i < count; i++) {
              ids.push((await addTask(store, scope, i % 3 === 0 ? IMAGE : TEXT)).id);
              if (i % 4 === 0) await addTask(store, other, IMAGE);
            }
          };
          await add(T0, 10);
          await add(T0 + 1000, 60);
          await add(T0 + 2000, 10);
          // The 30 oldest of both scopes are claimed: the first 13, and 17 of the tied ones in id order, so the
          // tied tasks are of both statuses.
          for (let i = 0; i < 30; i++) assert.ok(await claim(store, 'worker-1', 3));
          const tasks = await Promise.all(ids.map((id) => mustGet(store, id)));

          const filters: Omit<TaskListQuery, 'limit' | 'after'>[] = [
            {},
            { model: IMAGE },
            { status: 'processing' },
            { status: 'pending', model: TEXT },
            { createdAfter: T0 + 1000, createdBefore: T0 + 1001 },
            { createdAfter: T0 + 1, createdBefore: T0 + 2000 },
            { createdBefore: T0 + 1000 },
          ];
          for (const filter of filters) {
            const label = JSON.stringify(filter);
            const expected = tasks.filter(
              (task) =>
                (!filter.status || task.status === filter.status) &&
                (!filter.model || task.model === filter.model) &&
                (filter.createdAfter === undefined || task.createdAt >= filter.createdAfter) &&
                (filter.createdBefore === undefined || task.createdAt < filter.createdBefore),
            );
            const whole = await store.listTasks(scope, { ...filter, limit: 100 });
            assert.equal(whole.hasMore, false, label);
            assert.deepEqual(
              new Set(whole.tasks.map((task) => task.id)),
              new Set(expected.map((task) => task.id)),
              `${label}: the scope's matching tasks`,
            );
            for (const [i, task] of whole.tasks.entries()) {
              const before = whole.tasks[i - 1];
              assert.ok(!before || before.createdAt >= task.createdAt, `${label}: newest first`);
            }
            for (const limit of [1, 7]) {
              const paged: string[] = [];
              let after: { createdAt: number; id: string } | undefined;
              for (let page = 0; page <= 80; page++) {
                const { tasks: got, hasMore } = await store.listTasks(scope, {
                  ...filter,
                  limit,
                  ...(after ? { after } : {}),
                });
                paged.push(...got.map((task) => task.id));
                const last = got.at(-1);
                if (!hasMore || !last) break;
                after = { createdAt: last.createdAt, id: last.id };
              }
              assert.deepEqual(
                paged,
                whole.tasks.map((task) => task.id),
                `${label}, ${limit} a page: every task once, in the order of one whole page`,
              );
            }
          }

          const newest = tasks.find((task) => task.createdAt === T0 + 2000);
          assert.ok(newest);
          assert.deepEqual(
            await store.listTasks(scope, {
              limit: 100,
              createdBefore: T0 + 1000,
              after: { createdAt: newest.createdAt, id: newest.id },
            }),
            await store.listTasks(scope, { limit: 100, createdBefore: T0 + 1000 }),
            'a cursor later than created_before leaves the window whole',
          );
        }));

      it('cancels pending and processing tasks once, fencing the worker out, and leaves final ones', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const started = await addTask(store, scope);
          clock.now += 1;
          const queued = await addTask(store, scope);
          const claimed = await claim(store);
          assert.equal(claimed?.id, started.id);
          clock.now += 500;
          const cancelled = await store.cancelTask(started.id, scope);
          assert.equal(cancelled?.cancelled, true);
          assert.equal(cancelled?.task.status, 'failed');
          assert.deepEqual(cancelled?.task.error, { code: 'cancelled', message: 'The task was cancelled.' });
          assert.equal(cancelled?.task.completedAt, clock.now);
          assert.equal(
            await store.completeTask(claimOf(claimed), 'results/x.mp4'),
            false,
            'the worker is fenced out',
          );
          assert.equal(await store.reportProgress(claimOf(claimed), 50), false);

          const again = await store.cancelTask(started.id, scope);
          assert.equal(again?.cancelled, false, 'a final task is not cancelled twice');
          assert.equal(
            (await store.cancelTask(queued.id, scope))?.cancelled,
            true,
            'a pending task is cancelled',
          );
          assert.equal(await claim(store), undefined, 'a cancelled task is never claimed');
          assert.equal(
            await store.cancelTask(queued.id, await newScope(store)),
            undefined,
            'other scopes see nothing',
          );
        }));

      it('deletes final tasks with their callback log, and refuses running ones', () =>
        withStore(async (store) => {
          const scope = await newScope(store);
          const task = await store.createTask({
            ...scope,
            id: newTaskId(),
            model: TEXT,
            params: { ...PARAMS, callback_url: 'https://hooks.example.com/x' },
          });
          const claimed = await claim(store);
          assert.ok(claimed);
          assert.equal((await store.deleteTask(task.id, scope))?.deleted, false, 'a processing task stays');
          assert.ok(await store.completeTask(claimOf(claimed), 'results/x.mp4'));
          assert.ok((await store.listDeliveries(task.id)).length > 0);
          assert.equal(await store.deleteTask(task.id, await newScope(store)), undefined);
          const deleted = await store.deleteTask(task.id, scope);
          assert.equal(deleted?.deleted, true);
          assert.equal(deleted?.task.resultKey, 'results/x.mp4');
          assert.equal(await store.getTask(task.id), undefined);
          assert.deepEqual(await store.listDeliveries(task.id), []);
          assert.equal(await store.deleteTask(task.id, scope), undefined);
        }));
    });

    describe('idempotent creation', () => {
      it('creates once per key and scope, replays the same request, refuses another, and expires', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const task = (id = newTaskId()) => ({ ...scope, id, model: TEXT, params: PARAMS });
          const key = { key: 'k-1', requestHash: 'hash-a', since: T0 - 1 };
          const first = await store.createTaskOnce(task(), key);
          const again = await store.createTaskOnce(task(), key);
          assert.ok(
            first.outcome === 'created' && again.outcome === 'replayed',
            `${first.outcome}, ${again.outcome}`,
          );
          assert.equal(again.task.id, first.task.id);
          assert.equal(
            (await store.createTaskOnce(task(), { ...key, requestHash: 'hash-b' })).outcome,
            'conflict',
          );
          const elsewhere = await store.createTaskOnce({ ...task(), ...(await newScope(store)) }, key);
          assert.equal(elsewhere.outcome, 'created', 'keys belong to a scope');

          clock.now = T0 + 1000;
          const expired = await store.createTaskOnce(task(), {
            ...key,
            requestHash: 'hash-b',
            since: T0 + 1,
          });
          assert.equal(expired.outcome, 'created', 'an expired key makes a new task');
          assert.equal((await store.listTasks(scope, { limit: 100 })).tasks.length, 2);
        }));

      it('makes one task of concurrent creations with one key', () =>
        withStore(async (store) => {
          const scope = await newScope(store);
          const results = await Promise.all(
            Array.from({ length: 20 }, () =>
              store.createTaskOnce(
                { ...scope, id: newTaskId(), model: TEXT, params: PARAMS },
                { key: 'race', requestHash: 'h', since: 0 },
              ),
            ),
          );
          assert.equal(results.filter((r) => r.outcome === 'created').length, 1);
          assert.equal(results.filter((r) => r.outcome === 'replayed').length, 19);
          assert.equal((await store.listTasks(scope, { limit: 100 })).tasks.length, 1);
        }));
    });

    describe('retention', () => {
      it('deletes final tasks that ended before the cut-off, oldest first, in batches', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const ended: TaskRecord[] = [];
          for (let i = 0; i < 3; i++) {
            const task = await store.createTask({
              ...scope,
              id: newTaskId(),
              model: TEXT,
              params: { ...PARAMS, callback_url: 'https://hooks.example.com/x' },
            });
            const claimed = await claim(store);
            assert.equal(claimed?.id, task.id);
            clock.now += 1000;
            assert.ok(await store.completeTask(claimOf(claimed), `results/${task.id}.mp4`));
            ended.push(task);
          }
          const running = await addTask(store, scope);
          await claim(store);
          const cutOff = clock.now;
          assert.deepEqual(
            (await store.deleteExpiredTasks(cutOff, 2)).map((t) => t.id),
            ended.slice(0, 2).map((t) => t.id),
          );
          assert.deepEqual(await store.listDeliveries(ended[0]?.id ?? ''), []);
          assert.deepEqual(
            (await store.deleteExpiredTasks(cutOff, 2)).map((t) => t.id),
            [],
            'the last ended at the cut-off',
          );
          assert.equal((await store.deleteExpiredTasks(cutOff + 1, 10)).length, 1);
          assert.ok(await store.getTask(running.id), 'a running task is never expired');
        }));
    });

    describe('uploaded files', () => {
      it('records a file for its scope only', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const file = {
            id: 'file-0123456789abcdef0123456789abcdef',
            accountId: scope.accountId,
            environment: scope.environment,
            kind: 'image' as const,
            contentType: 'image/png',
            filename: 'ünïcödé.png',
            bytes: 3_000_000_000,
          };
          assert.deepEqual(await store.createFile(file), { ...file, createdAt: clock.now });
          assert.deepEqual(await store.getFile(file.id, scope), { ...file, createdAt: clock.now });
          assert.equal(await store.getFile(file.id, await newScope(store)), undefined);
          assert.equal(await store.getFile(file.id, { ...scope, environment: 'production' }), undefined);
          assert.deepEqual(await store.deleteExpiredFiles(clock.now, 10), [], 'created at the cut-off: kept');
          assert.deepEqual(
            (await store.deleteExpiredFiles(clock.now + 1, 10)).map((f) => f.id),
            [file.id],
          );
          assert.equal(await store.getFile(file.id, scope), undefined);
        }));
    });

    describe('timestamps', () => {
      it('updatedAt follows every state change; createdAt never moves', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const created = await addTask(store, scope);
          const seen: Array<[number, number]> = [];
          const record = async () => {
            const task = await mustGet(store, created.id);
            seen.push([task.createdAt, task.updatedAt]);
          };
          clock.now = T0 + 100;
          const task = await claim(store);
          assert.ok(task);
          await record();
          clock.now = T0 + 200;
          await store.reportProgress(claimOf(task), 50);
          await record();
          clock.now = T0 + 300;
          await store.releaseTask(claimOf(task));
          await record();
          clock.now = T0 + 400;
          const again = await claim(store);
          assert.ok(again);
          await record();
          clock.now = T0 + 500;
          await store.completeTask(claimOf(again), 'results/t.mp4');
          await record();
          assert.deepEqual(seen, [
            [T0, T0 + 100],
            [T0, T0 + 200],
            [T0, T0 + 300],
            [T0, T0 + 400],
            [T0, T0 + 500],
          ]);
        }));
    });

    deliveryStoreConformance(name, open);
    usageStoreConformance(name, open);
  });
}
