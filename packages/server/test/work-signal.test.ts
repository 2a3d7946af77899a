import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { MAX_HINT_LENGTH, type WorkSignal, type WorkTopic } from '../src/ports/work-signal.js';
import { LocalWorkSignal } from '../src/store/local-work-signal.js';
import { PgStore } from '../src/store/pg/pg-store.js';
import { channelName, PgWorkSignal, type PgWorkSignalOptions } from '../src/store/pg/pg-work-signal.js';
import { freshSchemas, postgresSuite, TEST_DATABASE_URL } from './helpers/postgres.js';
import { until } from './helpers/until.js';

const postgres = await postgresSuite();

/** A listener that counts its calls and can be awaited for the next few. */
function counter() {
  let calls = 0;
  const waiting: { count: number; resolve: () => void }[] = [];
  const listener = () => {
    calls++;
    for (const w of waiting.filter((w) => calls >= w.count)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve();
    }
  };
  return {
    listener,
    get calls() {
      return calls;
    },
    /** Resolves once the listener has been called `count` times in all; fails after `ms`. */
    async reach(count: number, ms = 20_000): Promise<void> {
      if (calls >= count) return;
      const reached = new Promise<void>((resolve) => waiting.push({ count, resolve }));
      const timeout = delay(ms, undefined, { ref: false }).then(() => {
        throw new Error(`listener called ${calls} times, waited for ${count}`);
      });
      await Promise.race([reached, timeout]);
    },
  };
}

describe('LocalWorkSignal', () => {
  it('calls every listener of the topic, and only of that topic, each time', async () => {
    const signal: WorkSignal = new LocalWorkSignal();
    const tasks = [counter(), counter()];
    const deliveries = counter();
    for (const c of tasks) signal.subscribe('tasks', c.listener);
    signal.subscribe('deliveries', deliveries.listener);
    await signal.notify('tasks');
    await signal.notify('tasks');
    assert.deepEqual(
      tasks.map((c) => c.calls),
      [2, 2],
    );
    assert.equal(deliveries.calls, 0);
    await signal.notify('deliveries');
    assert.equal(deliveries.calls, 1);
    await signal.close();
  });

  it('stops calling a listener once it unsubscribes', async () => {
    const signal = new LocalWorkSignal();
    const kept = counter();
    const dropped = counter();
    signal.subscribe('tasks', kept.listener);
    const unsubscribe = signal.subscribe('tasks', dropped.listener);
    await signal.notify('tasks');
    unsubscribe();
    unsubscribe();
    await signal.notify('tasks');
    assert.equal(kept.calls, 2);
    assert.equal(dropped.calls, 1);
  });

  it('reports a listener that throws and still calls the others', async () => {
    const errors: unknown[] = [];
    const signal = new LocalWorkSignal({ onError: (error) => errors.push(error) });
    const after = counter();
    signal.subscribe('tasks', () => {
      throw new Error('listener broke');
    });
    signal.subscribe('tasks', after.listener);
    await signal.notify('tasks');
    assert.equal(after.calls, 1);
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]), /listener broke/);
  });

  it('passes a hint to the listeners, and none on a catch-up', async () => {
    const signal = new LocalWorkSignal();
    const heard: (string | undefined)[] = [];
    signal.subscribe('polls', (hint) => heard.push(hint));
    await signal.notify('polls', 'task-1');
    await signal.notify('polls');
    signal.deliver();
    await signal.notify('polls', 'x'.repeat(MAX_HINT_LENGTH + 1));
    assert.deepEqual(heard, ['task-1', undefined, undefined]);
  });

  it('does nothing once closed', async () => {
    const signal = new LocalWorkSignal();
    const c = counter();
    signal.subscribe('tasks', c.listener);
    await signal.close();
    await signal.notify('tasks');
    signal.subscribe('tasks', c.listener)();
    await signal.notify('tasks');
    assert.equal(c.calls, 0);
  });
});

describe('channelName', () => {
  it('keeps within PostgreSQL’s 63-byte identifier limit and apart per namespace', () => {
    assert.equal(channelName('tasks'), 'videogen_tasks');
    assert.equal(channelName('deliveries', 'vg_a'), 'videogen_deliveries_vg_a');
    const long = 'x'.repeat(63);
    assert.ok(Buffer.byteLength(channelName('deliveries', long)) <= 63);
    assert.notEqual(channelName('tasks', long), channelName('tasks', `${long}y`));
  });
});

describe('PgWorkSignal', postgres, () => {
  const signals: PgWorkSignal[] = [];
  let raw: pg.Client;
  before(async () => {
    raw = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await raw.connect();
  });
  after(async () => {
    await Promise.all(signals.map((signal) => signal.close()));
    await raw.end();
  });

  function open(options: Partial<PgWorkSignalOptions> & { namespace: string }): PgWorkSignal {
    const signal = new PgWorkSignal({
      connectionString: TEST_DATABASE_URL,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
      ...options,
    });
    signals.push(signal);
    return signal;
  }

  const namespace = () => `t_${randomBytes(6).toString('hex')}`;

  // PostgreSQL delivers notifications in the order they were committed, and `notify` resolves once its
  // pg_notify has been. So once a listener has heard a later notification (a barrier, on 'cancellations',
  // which these tests do not otherwise use), every earlier one has reached it or never will: counts read then
  // are final, without waiting to see that nothing else comes.

  it('wakes a listener of another instance, for its topic only', async () => {
    const ns = namespace();
    const sender = open({ namespace: ns });
    const receiver = open({ namespace: ns });
    const tasks = counter();
    const deliveries = counter();
    const barrier = counter();
    receiver.subscribe('tasks', tasks.listener);
    receiver.subscribe('deliveries', deliveries.listener);
    receiver.subscribe('cancellations', barrier.listener);
    await receiver.listening();
    // Listening began with one catch-up call each.
    await tasks.reach(1);
    await deliveries.reach(1);
    await barrier.reach(1);

    await sender.notify('tasks');
    await tasks.reach(2);
    await sender.notify('deliveries');
    await sender.notify('deliveries');
    await deliveries.reach(3);
    await sender.notify('cancellations');
    await barrier.reach(2);
    assert.deepEqual([tasks.calls, deliveries.calls, barrier.calls], [2, 3, 2]);
  });

  it('carries each hint to another instance, uncoalesced, and calls its own listeners once with it', async () => {
    const ns = namespace();
    const sender = open({ namespace: ns });
    const receiver = open({ namespace: ns });
    const heard: (string | undefined)[] = [];
    const own: (string | undefined)[] = [];
    const [atReceiver, atSender] = [counter(), counter()];
    const barriers = [atReceiver, atSender];
    receiver.subscribe('polls', (hint) => heard.push(hint));
    sender.subscribe('polls', (hint) => own.push(hint));
    receiver.subscribe('cancellations', atReceiver.listener);
    sender.subscribe('cancellations', atSender.listener);
    await Promise.all([receiver.listening(), sender.listening()]);
    for (const barrier of barriers) await barrier.reach(1);
    // Listening began with a catch-up call, without a hint.
    assert.deepEqual([heard, own], [[undefined], [undefined]]);

    await Promise.all([sender.notify('polls', 'task-a'), sender.notify('polls', 'task-b')]);
    // From a third instance, committed after both: each listening session hears it after them (and the echo).
    await open({ namespace: ns }).notify('cancellations');
    for (const barrier of barriers) await barrier.reach(2);
    assert.deepEqual(heard.slice(1).sort(), ['task-a', 'task-b']);
    assert.deepEqual(own.slice(1).sort(), ['task-a', 'task-b'], 'once each: the echo is not delivered');
  });

  it('wakes its own listeners at once, and once, not again on PostgreSQL’s echo', async () => {
    const ns = namespace();
    const signal = open({ namespace: ns });
    const tasks = counter();
    const barrier = counter();
    signal.subscribe('tasks', tasks.listener);
    signal.subscribe('cancellations', barrier.listener);
    await signal.listening();
    await tasks.reach(1);
    await barrier.reach(1);
    await signal.notify('tasks');
    assert.equal(tasks.calls, 2, 'called before notify resolved');
    // The barrier comes from another instance, committed after the echo: delivered after it.
    await open({ namespace: ns }).notify('cancellations');
    await barrier.reach(2);
    assert.equal(tasks.calls, 2, 'the echo woke nobody');
    assert.equal(barrier.calls, 2);
  });

  it('shares one NOTIFY among the calls made before it is sent, and sends one more for calls made while it is in flight', async () => {
    const ns = namespace();
    const sender = open({ namespace: ns });
    const receiver = open({ namespace: ns });
    const tasks = counter();
    const barrier = counter();
    receiver.subscribe('tasks', tasks.listener);
    receiver.subscribe('cancellations', barrier.listener);
    await receiver.listening();
    await tasks.reach(1);
    await barrier.reach(1);

    // Fifty calls in one turn: one NOTIFY.
    await Promise.all(Array.from({ length: 50 }, () => sender.notify('tasks')));
    await sender.notify('cancellations');
    await barrier.reach(2);
    assert.equal(tasks.calls, 2, 'the fifty calls were heard once');

    // A call made once the first NOTIFY is on its way (its send starts a microtask after the call, and its
    // answer needs I/O) is answered by a second one, sent after the first has been answered.
    const first = sender.notify('tasks');
    await Promise.resolve();
    const second = sender.notify('tasks');
    assert.notEqual(first, second);
    await Promise.all([first, second]);
    await sender.notify('cancellations');
    await barrier.reach(3);
    assert.equal(tasks.calls, 4, 'two NOTIFYs, one after the other');
  });

  it('sends a throttled topic at most once a gap: the first call at once, all calls within the gap as one at its end', async () => {
    const ns = namespace();
    // Long beside one turn of the event loop, where the calls below are made: only the sends wait for it.
    const sender = open({ namespace: ns, minGapMs: { changes: 1000 } });
    const receiver = open({ namespace: ns });
    const changes = counter();
    const ownChanges = counter();
    const barrier = counter();
    const tasks = counter();
    receiver.subscribe('changes', changes.listener);
    receiver.subscribe('tasks', tasks.listener);
    receiver.subscribe('cancellations', barrier.listener);
    sender.subscribe('changes', ownChanges.listener);
    await Promise.all([receiver.listening(), sender.listening()]);
    await Promise.all([changes.reach(1), barrier.reach(1), tasks.reach(1)]);

    await sender.notify('changes');
    const later = Array.from({ length: 20 }, () => sender.notify('changes'));
    assert.ok(ownChanges.calls >= 21, "the sender's own listeners hear every call at once");
    await Promise.all(later);
    await sender.notify('cancellations');
    await barrier.reach(2);
    assert.equal(changes.calls, 3, 'two NOTIFYs for twenty-one calls: the first, and the one after the gap');

    // Other topics are not throttled.
    await sender.notify('tasks');
    await sender.notify('tasks');
    await sender.notify('cancellations');
    await barrier.reach(3);
    assert.equal(tasks.calls, 3);
  });

  it('lets a throttled send go when it closes, without sending it', async () => {
    const sender = open({ namespace: namespace(), minGapMs: { changes: 60_000 } });
    await sender.notify('changes');
    const held = sender.notify('changes');
    await sender.close();
    await held;
  });

  it('keeps namespaces apart', async () => {
    const sender = open({ namespace: namespace() });
    const ns = namespace();
    const elsewhere = open({ namespace: ns });
    const tasks = counter();
    const barrier = counter();
    elsewhere.subscribe('tasks', tasks.listener);
    elsewhere.subscribe('cancellations', barrier.listener);
    await elsewhere.listening();
    await tasks.reach(1);
    await barrier.reach(1);
    await sender.notify('tasks');
    // The barrier comes in the listener's own namespace, committed after the other namespace's notification.
    await open({ namespace: ns }).notify('cancellations');
    await barrier.reach(2);
    assert.equal(tasks.calls, 1, 'the other namespace woke nobody');
    assert.equal(barrier.calls, 2);
  });

  it('reconnects after its connection is killed, calls every listener once, and hears again', async () => {
    const ns = namespace();
    const applicationName = `vg-signal-${ns}`;
    const errors: unknown[] = [];
    const sender = open({ namespace: ns });
    const receiver = open({ namespace: ns, applicationName, onError: (error) => errors.push(error) });
    const tasks = counter();
    const deliveries = counter();
    const barrier = counter();
    receiver.subscribe('tasks', tasks.listener);
    receiver.subscribe('deliveries', deliveries.listener);
    receiver.subscribe('cancellations', barrier.listener);
    await receiver.listening();
    await tasks.reach(1);
    await deliveries.reach(1);
    await barrier.reach(1);

    const { rows } = await raw.query<{ killed: boolean }>(
      'select pg_terminate_backend(pid) as killed from pg_stat_activity where application_name = $1',
      [applicationName],
    );
    assert.deepEqual(rows, [{ killed: true }]);
    // Notifications sent while it is away are lost; the one catch-up call per listener on reconnecting stands
    // in for them. (None is sent here: whether one sent now arrives depends on how fast the reconnection is.)
    await tasks.reach(2);
    await deliveries.reach(2);
    await receiver.listening();
    assert.ok(errors.length >= 1, 'the lost connection was reported');
    assert.deepEqual([tasks.calls, deliveries.calls, barrier.calls], [2, 2, 2], 'one catch-up call each');

    await sender.notify('tasks');
    await tasks.reach(3);
    await sender.notify('cancellations');
    await barrier.reach(3);
    assert.deepEqual([tasks.calls, deliveries.calls, barrier.calls], [3, 2, 3], 'heard again, once');
  });

  it('never rejects when PostgreSQL is unreachable, reports it, and stops retrying once closed', async () => {
    // Counts the attempts to connect to the unreachable port: a retry's timer starts one synchronously.
    const connect = pg.Client.prototype.connect;
    let attempts = 0;
    pg.Client.prototype.connect = function (this: pg.Client, ...args: unknown[]) {
      if (this.port === 1) attempts++;
      return (connect as (...args: unknown[]) => unknown).apply(this, args);
    } as typeof connect;
    try {
      const errors: unknown[] = [];
      const signal = new PgWorkSignal({
        connectionString: 'postgres://postgres@127.0.0.1:1/test',
        reconnect: { initialDelayMs: 10, maxDelayMs: 20 },
        onError: (error) => errors.push(error),
      });
      const tasks = counter();
      signal.subscribe('tasks', tasks.listener);
      await signal.notify('tasks');
      assert.equal(tasks.calls, 1, 'listeners in this process are still woken');
      await until(() => errors.length >= 3 && attempts >= 2, 'a failed notify and two failed connections');
      await signal.close();
      const tried = attempts;
      const reported = errors.length;
      // A retry timer set before the close expires within 25 ms (20 ms, jitter included). Timers fire in the
      // order they expire, so by the time this later one fires, any such retry would have started.
      await delay(100);
      assert.equal(attempts, tried, 'no attempt to connect after the close');
      assert.ok(errors.length <= reported + 1, 'at most the attempt under way is reported');
      await assert.rejects(signal.listening(), /closed/);
    } finally {
      pg.Client.prototype.connect = connect;
    }
  });

  describe('from PgStore.createWorkSignal', () => {
    const schema = freshSchemas();

    it('signals between stores sharing a schema, not to other schemas', async () => {
      const shared = schema();
      const separate = schema();
      const stores = [shared, shared, separate].map(
        (name) => new PgStore({ connectionString: TEST_DATABASE_URL, schema: name, poolSize: 2 }),
      );
      const [a, b, other] = stores.map((store) => store.createWorkSignal());
      assert.ok(a && b && other);
      try {
        const heard = new Map<string, ReturnType<typeof counter>>();
        const barrier = counter();
        for (const [name, signal] of [
          ['b', b],
          ['other', other],
        ] as const) {
          const c = counter();
          heard.set(name, c);
          // Both before listening starts, which calls every listener subscribed by then once.
          signal.subscribe('deliveries' satisfies WorkTopic, c.listener);
          if (name === 'other') signal.subscribe('cancellations', barrier.listener);
          await signal.listening();
          await c.reach(1);
        }
        await barrier.reach(1);
        await a.notify('deliveries');
        await heard.get('b')?.reach(2);
        // The barrier comes from a store of the other schema, committed after a's notification.
        const otherSender = new PgStore({
          connectionString: TEST_DATABASE_URL,
          schema: separate,
          poolSize: 1,
        });
        const sending = otherSender.createWorkSignal();
        try {
          assert.ok(sending);
          await sending.notify('cancellations');
          await barrier.reach(2);
        } finally {
          await sending?.close();
          await otherSender.close();
        }
        assert.equal(heard.get('other')?.calls, 1, 'the other schema heard nothing');
        assert.equal(barrier.calls, 2);
      } finally {
        await Promise.all([a, b, other].map((signal) => signal.close()));
        await Promise.all(stores.map((store) => store.close()));
      }
    });
  });
});
