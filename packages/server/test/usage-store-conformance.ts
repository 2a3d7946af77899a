/**
 * Usage records and budgets every `Store` must keep: a reservation made with the task, settled when it completes,
 * released when it fails or is cancelled, kept when retention deletes the task; sums by day, model and key; and
 * monthly limits that hold under concurrent creations. Called from `storeConformance` with the same `open`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GenerationParams } from '../src/domain/generation-request.js';
import { newTaskId } from '../src/domain/identifiers.js';
import type { ModelId } from '../src/domain/models.js';
import type { Environment, TaskRecord, TaskScope } from '../src/domain/task.js';
import { BudgetExceeded, NO_LIMITS, type UsageLimits } from '../src/domain/usage.js';
import type { Claim, NewTask, Store, UsageQuery } from '../src/ports/store.js';
import { type Clock, storeHarness, T0 } from './helpers/store-harness.js';

const LEASE = 30_000;
const DAY = 86_400_000;
const TEXT: ModelId = 'videogen-2.0-text-to-video';
const FAST: ModelId = 'videogen-2.0-fast-text-to-video';
/** T0 is 2023-11-14T22:13:20Z: its month starts 2023-11-01 and the next on 2023-12-01. */
const NEXT_MONTH = Date.UTC(2023, 11, 1);

const params = (duration: number, overrides: Partial<GenerationParams> = {}): GenerationParams => ({
  prompt: 'usage',
  image_urls: [],
  video_urls: [],
  audio_urls: [],
  duration,
  quality: '720p',
  aspect_ratio: '16:9',
  seed: 1,
  callback_url: null,
  generate_audio: false,
  ...overrides,
});

const WHOLE_MONTH: UsageQuery = { start: Date.UTC(2023, 10, 1), end: NEXT_MONTH, groupBy: 'model' };

export function usageStoreConformance(name: string, open: (clock: Clock) => Promise<Store>): void {
  const withStore = storeHarness(open);

  async function newScope(store: Store, environment: Environment = 'development'): Promise<TaskScope> {
    return { accountId: (await store.createAccount()).id, environment };
  }

  async function newKey(store: Store, scope: TaskScope, limits?: UsageLimits): Promise<string> {
    const n = Math.random().toString(36).slice(2);
    const key = await store.createApiKey({
      accountId: scope.accountId,
      name: 'k',
      environment: scope.environment,
      prefix: `p_${n}`,
      hash: `h_${n}`,
      ...(limits ? { limits } : {}),
    });
    return key.id;
  }

  function task(scope: TaskScope, duration: number, extra: Partial<NewTask> = {}): NewTask {
    return { ...scope, id: newTaskId(), model: TEXT, params: params(duration), ...extra };
  }

  async function claimed(store: Store): Promise<Claim> {
    const claimedTask = await store.claimTask({ workerId: 'w', leaseMs: LEASE, maxAttempts: 1 });
    assert.ok(claimedTask?.leaseOwner);
    return { taskId: claimedTask.id, attempt: claimedTask.attempts, workerId: claimedTask.leaseOwner };
  }

  async function runToEnd(store: Store, made: TaskRecord, outcome: 'complete' | 'fail'): Promise<void> {
    const claim = await claimed(store);
    assert.equal(claim.taskId, made.id);
    const ended =
      outcome === 'complete'
        ? await store.completeTask(claim, `results/${made.id}.mp4`)
        : await store.failTask(claim, { code: 'generation_failed', message: 'no' });
    assert.equal(ended, true);
  }

  describe(`Usage and budgets: ${name}`, () => {
    it('reserves at creation, settles at completion, and releases on failure and cancellation', () =>
      withStore(async (store, clock) => {
        const scope = await newScope(store);
        const completed = await store.createTask(task(scope, 7, { costMicros: 700_000 }));
        assert.deepEqual(await store.listUsage(scope.accountId, WHOLE_MONTH), [
          { key: TEXT, state: 'reserved', tasks: 1, videoSeconds: 7, costMicros: 700_000 },
        ]);
        clock.now = T0 + 1000;
        await runToEnd(store, completed, 'complete');
        const failed = await store.createTask(task(scope, 5, { costMicros: 500_000 }));
        await runToEnd(store, failed, 'fail');
        const cancelled = await store.createTask(task(scope, 6));
        assert.equal((await store.cancelTask(cancelled.id, scope))?.cancelled, true);
        const abandoned = await store.createTask(task(scope, 4));
        await claimed(store);
        clock.now += LEASE;
        assert.equal(await store.failAbandonedTasks(1), 1);
        assert.deepEqual(await store.listUsage(scope.accountId, WHOLE_MONTH), [
          { key: TEXT, state: 'settled', tasks: 1, videoSeconds: 7, costMicros: 700_000 },
        ]);
        assert.equal((await store.getTask(abandoned.id))?.status, 'failed');
      }));

    it('keeps usage when retention deletes the task', () =>
      withStore(async (store, clock) => {
        const scope = await newScope(store);
        const made = await store.createTask(task(scope, 9));
        await runToEnd(store, made, 'complete');
        clock.now = T0 + 10_000;
        assert.equal((await store.deleteExpiredTasks(clock.now, 10)).length, 1);
        assert.equal(await store.getTask(made.id), undefined);
        assert.deepEqual(await store.listUsage(scope.accountId, WHOLE_MONTH), [
          { key: TEXT, state: 'settled', tasks: 1, videoSeconds: 9, costMicros: null },
        ]);
      }));

    it('sums by day, model and API key, in the range and environment asked', () =>
      withStore(async (store, clock) => {
        const scope = await newScope(store);
        const production: TaskScope = { ...scope, environment: 'production' };
        const keyA = await newKey(store, scope);
        const keyB = await newKey(store, scope);
        const made: TaskRecord[] = [];
        const create = async (at: number, extra: Partial<NewTask>, duration: number, on = scope) => {
          clock.now = at;
          made.push(await store.createTask(task(on, duration, extra)));
        };
        await create(T0, { apiKeyId: keyA, costMicros: 100 }, 4);
        await create(T0 + 1, { apiKeyId: keyA, model: FAST }, 5);
        await create(T0 + DAY, { apiKeyId: keyB, costMicros: 250 }, 6);
        await create(T0 + DAY + 1, {}, 8);
        await create(T0 + 2, { apiKeyId: keyA }, 10, production);
        // Another account's usage is not this one's.
        await store.createTask(task(await newScope(store), 15));
        for (let n = 0; n < made.length + 1; n++) {
          assert.equal(await store.completeTask(await claimed(store), 'results/x.mp4'), true);
        }
        clock.now = T0 + DAY + 2;
        const reservedOnly = await store.createTask(task(scope, 11));

        const day = (d: number) => new Date(T0 + d * DAY).toISOString().slice(0, 10);
        const development = { ...WHOLE_MONTH, environment: 'development' as const };
        const byKey = <Row extends { key: string | null; state: string }>(rows: Row[]) =>
          [...rows].sort((a, b) => `${a.key}${a.state}`.localeCompare(`${b.key}${b.state}`));
        assert.deepEqual(byKey(await store.listUsage(scope.accountId, { ...development, groupBy: 'day' })), [
          { key: day(0), state: 'settled', tasks: 2, videoSeconds: 9, costMicros: 100 },
          { key: day(1), state: 'reserved', tasks: 1, videoSeconds: 11, costMicros: null },
          { key: day(1), state: 'settled', tasks: 2, videoSeconds: 14, costMicros: 250 },
        ]);
        assert.deepEqual(
          byKey(await store.listUsage(scope.accountId, { ...WHOLE_MONTH, groupBy: 'model' })),
          [
            { key: FAST, state: 'settled', tasks: 1, videoSeconds: 5, costMicros: null },
            { key: TEXT, state: 'reserved', tasks: 1, videoSeconds: 11, costMicros: null },
            { key: TEXT, state: 'settled', tasks: 4, videoSeconds: 28, costMicros: 350 },
          ],
        );
        assert.deepEqual(
          byKey(await store.listUsage(scope.accountId, { ...development, groupBy: 'api_key' })),
          byKey([
            { key: keyA, state: 'settled', tasks: 2, videoSeconds: 9, costMicros: 100 },
            { key: keyB, state: 'settled', tasks: 1, videoSeconds: 6, costMicros: 250 },
            { key: null, state: 'settled', tasks: 1, videoSeconds: 8, costMicros: null },
            { key: null, state: 'reserved', tasks: 1, videoSeconds: 11, costMicros: null },
          ]),
        );
        // [start, end): the first day only.
        assert.deepEqual(
          byKey(
            await store.listUsage(scope.accountId, {
              ...development,
              start: T0,
              end: T0 + DAY,
              groupBy: 'model',
            }),
          ),
          [
            { key: FAST, state: 'settled', tasks: 1, videoSeconds: 5, costMicros: null },
            { key: TEXT, state: 'settled', tasks: 1, videoSeconds: 4, costMicros: 100 },
          ],
        );
        assert.equal(reservedOnly.status, 'pending');
      }));

    it('stores, changes and clears the limits of accounts and keys; a rotated key keeps its limits', () =>
      withStore(async (store) => {
        const scope = await newScope(store);
        assert.deepEqual(await store.getAccountLimits(scope.accountId), NO_LIMITS);
        const limits: UsageLimits = { monthlyVideoSeconds: 600, monthlyBudgetMicros: 12_500_000 };
        assert.equal(await store.setAccountLimits(scope.accountId, limits), true);
        assert.deepEqual(await store.getAccountLimits(scope.accountId), limits);
        assert.equal(await store.setAccountLimits('acct_none', limits), false);
        assert.equal(await store.getAccountLimits('acct_none'), undefined);

        const keyId = await newKey(store, scope, { monthlyVideoSeconds: 60, monthlyBudgetMicros: null });
        assert.deepEqual((await store.listApiKeys(scope.accountId))[0]?.limits, {
          monthlyVideoSeconds: 60,
          monthlyBudgetMicros: null,
        });
        const changed = await store.setApiKeyLimits(keyId, limits, scope.accountId);
        assert.deepEqual(changed?.limits, limits);
        assert.equal(await store.setApiKeyLimits(keyId, limits, 'acct_other'), undefined);
        const rotation = await store.rotateApiKey(keyId, scope.accountId, { prefix: 'p2', hash: 'h2' }, 0);
        assert.deepEqual(rotation?.created.limits, limits);
        assert.deepEqual((await store.setApiKeyLimits('p2', NO_LIMITS))?.limits, NO_LIMITS);
      }));

    it('refuses a creation past the account limit, naming the limit, the use and the reset; keeps nothing', () =>
      withStore(async (store, clock) => {
        const scope = await newScope(store);
        await store.setAccountLimits(scope.accountId, { monthlyVideoSeconds: 20, monthlyBudgetMicros: null });
        const first = await store.createTask(task(scope, 10));
        await runToEnd(store, first, 'complete');
        await store.createTask(task(scope, 8));
        const refused = task(scope, 5);
        await assert.rejects(store.createTask(refused), (error: unknown) => {
          assert.ok(error instanceof BudgetExceeded);
          assert.deepEqual(error.refusal, {
            holder: 'account',
            measure: 'video_seconds',
            limit: 20,
            used: 18,
            needed: 5,
            resetsAt: NEXT_MONTH,
          });
          return true;
        });
        assert.equal(await store.getTask(refused.id), undefined);
        // Exactly up to the limit passes.
        await store.createTask(task(scope, 2));
        await assert.rejects(store.createTask(task(scope, 1)), BudgetExceeded);
        // A new month starts from nothing.
        clock.now = NEXT_MONTH;
        await store.createTask(task(scope, 15));
      }));

    it("holds a key's limit and a cost budget; an unpriced task is held to seconds only", () =>
      withStore(async (store) => {
        const scope = await newScope(store);
        const limited = await newKey(store, scope, { monthlyVideoSeconds: 10, monthlyBudgetMicros: null });
        const other = await newKey(store, scope);
        await store.createTask(task(scope, 8, { apiKeyId: limited }));
        await assert.rejects(
          store.createTask(task(scope, 4, { apiKeyId: limited })),
          (error: unknown) => error instanceof BudgetExceeded && error.refusal.holder === 'api_key',
        );
        // The key's limit is the key's alone.
        await store.createTask(task(scope, 15, { apiKeyId: other }));

        await store.setAccountLimits(scope.accountId, {
          monthlyVideoSeconds: null,
          monthlyBudgetMicros: 1_000_000,
        });
        await store.createTask(task(scope, 4, { apiKeyId: other, costMicros: 600_000 }));
        await assert.rejects(
          store.createTask(task(scope, 4, { apiKeyId: other, costMicros: 500_000 })),
          (error: unknown) =>
            error instanceof BudgetExceeded &&
            error.refusal.measure === 'cost' &&
            error.refusal.used === 600_000 &&
            error.refusal.needed === 500_000 &&
            error.refusal.limit === 1_000_000,
        );
        await store.createTask(task(scope, 4, { apiKeyId: other, costMicros: 400_000 }));
        await store.createTask(task(scope, 4, { apiKeyId: other, costMicros: null }));
      }));

    it('a refused idempotent creation keeps neither the task nor the key', () =>
      withStore(async (store) => {
        const scope = await newScope(store);
        await store.setAccountLimits(scope.accountId, { monthlyVideoSeconds: 5, monthlyBudgetMicros: null });
        const once = { key: 'k1', requestHash: 'h', since: 0 };
        await assert.rejects(store.createTaskOnce(task(scope, 6), once), BudgetExceeded);
        await store.setAccountLimits(scope.accountId, NO_LIMITS);
        const made = await store.createTaskOnce(task(scope, 6), once);
        assert.equal(made.outcome, 'created');
      }));

    it('20 concurrent creations against a limit that allows 10 make exactly 10 tasks', () =>
      withStore(async (store) => {
        const scope = await newScope(store);
        const key = await newKey(store, scope, { monthlyVideoSeconds: 50, monthlyBudgetMicros: null });
        await store.setAccountLimits(scope.accountId, { monthlyVideoSeconds: 55, monthlyBudgetMicros: null });
        const outcomes = await Promise.allSettled(
          Array.from({ length: 20 }, (_, i) =>
            i % 2 === 0
              ? store.createTask(task(scope, 5, { apiKeyId: key }))
              : store.createTaskOnce(task(scope, 5, { apiKeyId: key }), {
                  key: `k${i}`,
                  requestHash: 'h',
                  since: 0,
                }),
          ),
        );
        const made = outcomes.filter((outcome) => outcome.status === 'fulfilled');
        const refused = outcomes.filter(
          (outcome) => outcome.status === 'rejected' && outcome.reason instanceof BudgetExceeded,
        );
        assert.equal(made.length, 10);
        assert.equal(refused.length, 10);
        assert.equal((await store.listTasks(scope, { limit: 100 })).tasks.length, 10);
        assert.deepEqual(await store.listUsage(scope.accountId, WHOLE_MONTH), [
          { key: TEXT, state: 'reserved', tasks: 10, videoSeconds: 50, costMicros: null },
        ]);
      }));
  });
}
