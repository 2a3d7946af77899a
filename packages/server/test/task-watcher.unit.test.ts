/**
 * TaskWatcher: every watch of the process answered by one read of all their tasks, woken by the change signal
 * (a slow poll besides), each watch handed the states newer than the last it had, in order, once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newTaskId } from '../src/domain/identifiers.js';
import type { TaskRecord, TaskStatus } from '../src/domain/task.js';
import { TaskWatcher } from '../src/tasks/task-watcher.js';
import { generationParams } from './helpers/generation-params.js';
import { until } from './helpers/until.js';

/** Far longer than any test here waits: a watch that depends on the poll would time out. */
const NEVER_MS = 600_000;

function record(id: string, revision: number, status: TaskStatus = 'pending', progress = 0): TaskRecord {
  return {
    id,
    accountId: 'acct_1',
    environment: 'development',
    model: 'videogen-2.0-text-to-video',
    status,
    progress,
    revision,
    params: generationParams({ prompt: 'a kite', seed: 1 }),
    error: null,
    resultKey: null,
    attempts: 0,
    leaseOwner: null,
    leaseExpiresAt: null,
    createdAt: 0,
    updatedAt: 0,
    completedAt: null,
    engine: null,
    upstreamJob: null,
    startedAt: null,
    costMicros: null,
  };
}

/** A store of tasks in memory whose reads are counted, and a change signal the test fires by hand. */
function fakes() {
  const tasks = new Map<string, TaskRecord>();
  const reads: (readonly string[])[] = [];
  const listeners = new Set<() => void>();
  return {
    tasks,
    reads,
    listeners,
    read: async (ids: readonly string[]) => {
      reads.push([...ids]);
      return new Map(
        ids.flatMap((id) => (tasks.has(id) ? [[id, tasks.get(id) as TaskRecord] as const] : [])),
      );
    },
    subscribe: (listener: () => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    signal: () => {
      for (const listener of listeners) listener();
    },
  };
}

/** Takes the watch's states as they come, in the background. */
function collect(states: AsyncIterable<TaskRecord>) {
  const seen: TaskRecord[] = [];
  const done = (async () => {
    for await (const state of states) seen.push(state);
  })();
  return { seen, done };
}

// A watch that never ends fails the file rather than hanging it.
describe('TaskWatcher', { timeout: 60_000 }, () => {
  it('reads every watched task in one read per wake-up, however many watches there are', async () => {
    const store = fakes();
    const watcher = new TaskWatcher({ read: store.read, fallbackMs: 5, minGapMs: 0 });
    const ids = Array.from({ length: 50 }, () => newTaskId());
    for (const id of ids) store.tasks.set(id, record(id, 1));
    const stop = new AbortController();
    // Started in one turn of the event loop: every watch is open before the first read.
    const watches = ids.map((id) => collect(watcher.watch(id, 1, stop.signal)));
    await until(() => store.reads.length >= 10, 'ten polls');
    stop.abort();
    await Promise.all(watches.map((watch) => watch.done));
    // Per stream every 250 ms, 50 watches made 50 reads a tick; here each read is one for all of them.
    for (const read of store.reads) assert.deepEqual([...read].sort(), [...ids].sort());
    assert.ok(
      watches.every((watch) => watch.seen.length === 0),
      'nothing changed, nothing handed out',
    );
    assert.equal(watcher.size, 0);
  });

  it('hands a signalled change to its watches at once, with no poll, and ends after the final state', async () => {
    const store = fakes();
    const watcher = new TaskWatcher({
      read: store.read,
      subscribe: store.subscribe,
      fallbackMs: NEVER_MS,
      minGapMs: 0,
    });
    const id = newTaskId();
    store.tasks.set(id, record(id, 1));
    const stop = new AbortController();
    const first = collect(watcher.watch(id, 1, stop.signal));
    const second = collect(watcher.watch(id, 1, stop.signal));
    // The read every new watch makes (a change may have come between the caller's read and the watch).
    await until(() => store.reads.length >= 1, 'the first read');
    assert.equal(store.listeners.size, 1, 'one subscription for every watch');

    store.tasks.set(id, record(id, 2, 'processing', 0));
    store.tasks.set(id, record(id, 3, 'processing', 40));
    store.signal();
    await until(() => first.seen.length === 1 && second.seen.length === 1, 'the change');
    // Two changes between two reads arrive as the newer.
    assert.deepEqual(
      first.seen.map((state) => [state.revision, state.progress]),
      [[3, 40]],
    );

    store.tasks.set(id, record(id, 4, 'completed', 100));
    store.signal();
    await Promise.all([first.done, second.done]);
    for (const watch of [first, second]) {
      assert.deepEqual(
        watch.seen.map((state) => state.revision),
        [3, 4],
      );
    }
    assert.equal(watcher.size, 0);
    assert.equal(store.listeners.size, 0, 'unsubscribed once nothing is watched');
  });

  it('hands out nothing at or below the revision a watch starts after', async () => {
    const store = fakes();
    const watcher = new TaskWatcher({
      read: store.read,
      subscribe: store.subscribe,
      fallbackMs: NEVER_MS,
      minGapMs: 0,
    });
    const id = newTaskId();
    store.tasks.set(id, record(id, 5, 'processing', 20));
    const watch = collect(watcher.watch(id, 5, new AbortController().signal));
    await until(() => store.reads.length >= 1, 'the first read');
    store.tasks.set(id, record(id, 6, 'failed', 20));
    store.signal();
    await watch.done;
    assert.deepEqual(
      watch.seen.map((state) => state.revision),
      [6],
    );
  });

  it('reads again after a read that a signal came during', async () => {
    const store = fakes();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let calls = 0;
    const watcher = new TaskWatcher({
      read: async (ids) => {
        calls += 1;
        // The first read answers the state from before the change, after the change has been signalled.
        const answer = await store.read(ids);
        if (calls === 1) await held;
        return answer;
      },
      subscribe: store.subscribe,
      fallbackMs: NEVER_MS,
      minGapMs: 0,
    });
    const id = newTaskId();
    store.tasks.set(id, record(id, 1));
    const watch = collect(watcher.watch(id, 1, new AbortController().signal));
    await until(() => calls === 1, 'the first read');
    store.tasks.set(id, record(id, 2, 'failed'));
    store.signal();
    release();
    await watch.done;
    assert.deepEqual(
      watch.seen.map((state) => state.revision),
      [2],
    );
  });

  it('ends a watch when its signal fires, or when its task is gone', async () => {
    const store = fakes();
    const watcher = new TaskWatcher({
      read: store.read,
      subscribe: store.subscribe,
      fallbackMs: NEVER_MS,
      minGapMs: 0,
    });
    const kept = newTaskId();
    const deleted = newTaskId();
    store.tasks.set(kept, record(kept, 1));
    store.tasks.set(deleted, record(deleted, 1));
    const stop = new AbortController();
    const stopped = collect(watcher.watch(kept, 1, stop.signal));
    const gone = collect(watcher.watch(deleted, 1, new AbortController().signal));
    await until(() => store.reads.length >= 1, 'the first read');
    stop.abort();
    await stopped.done;
    store.tasks.delete(deleted);
    store.signal();
    await gone.done;
    assert.deepEqual([stopped.seen, gone.seen], [[], []]);
    assert.equal(watcher.size, 0);
  });
});
