/**
 * Dashboard sign-in under a flood of guesses (issue 33, item 16): attempts from one client address are limited
 * before any password is hashed, and the store's record of failures stays bounded.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  addressSubject,
  DashboardSessions,
  DEFAULT_SIGN_IN_LIMITS,
  type PasswordHasher,
} from '../src/accounts/dashboard-sessions.js';
import { ApiError } from '../src/domain/errors.js';
import { openDatabase, prepare } from '../src/store/sqlite/sqlite-handles.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

const T0 = Date.UTC(2026, 10, 20);
const LIMITS = { ...DEFAULT_SIGN_IN_LIMITS, attemptsPerAddress: 5 };

/** A hasher that counts its calls; its hashes are the password, reversed. */
class CountingHasher implements PasswordHasher {
  hashes = 0;
  verifications = 0;

  async hash(password: string): Promise<string> {
    this.hashes += 1;
    return [...password].reverse().join('');
  }

  async verify(passwordHash: string, password: string): Promise<boolean> {
    this.verifications += 1;
    return passwordHash === [...password].reverse().join('');
  }
}

describe('dashboard sign-in limits', () => {
  let dir: string;
  let files = 0;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'videogen-sign-in-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function setUp() {
    const path = join(dir, `store-${++files}.db`);
    const clock = { now: T0 };
    const store = new SqliteStore({ path, now: () => clock.now });
    await store.migrate();
    const hasher = new CountingHasher();
    await store.createOwnedAccount({
      email: 'ada@example.com',
      passwordHash: await hasher.hash('the password'),
    });
    hasher.hashes = 0;
    const sessions = new DashboardSessions(store, {
      limits: LIMITS,
      now: () => clock.now,
      passwords: hasher,
    });
    const counter = openDatabase(path);
    return {
      clock,
      hasher,
      sessions,
      failureRows: () =>
        (prepare(counter, 'select count(*) as n from sign_in_failures').get() as { n: number }).n,
      async close() {
        counter.close();
        await store.close();
      },
    };
  }

  /** What a sign-in ended with: the error's code and Retry-After, or `signed_in`. */
  async function outcome(
    sessions: DashboardSessions,
    email: string,
    password: string,
    address: string,
  ): Promise<{ code: string; retryAfter?: number }> {
    try {
      await sessions.signIn(email, password, address);
      return { code: 'signed_in' };
    } catch (error) {
      assert.ok(error instanceof ApiError, String(error));
      const retryAfter = error.retryAfterSeconds;
      return { code: error.code, ...(retryAfter === undefined ? {} : { retryAfter }) };
    }
  }

  it('refuses attempts from an address past its limit before hashing, and records no failure for them', async () => {
    const setup = await setUp();
    try {
      const codes: string[] = [];
      for (let i = 0; i < 12; i++) {
        const answer = await outcome(setup.sessions, `guess-${i}@example.com`, 'a guess', '203.0.113.7');
        codes.push(answer.code);
        if (answer.code === 'rate_limited') {
          assert.ok(
            answer.retryAfter && answer.retryAfter >= 1 && answer.retryAfter <= 60,
            `${answer.retryAfter}`,
          );
        }
      }
      assert.deepEqual(codes, [...Array(5).fill('invalid_credentials'), ...Array(7).fill('rate_limited')]);
      // Five verifications and the one decoy hash they shared; nothing for the seven refused.
      assert.equal(setup.hasher.verifications, 5);
      assert.equal(setup.hasher.hashes, 1);
      assert.equal(setup.failureRows(), 5);

      // Even the right password, from that address, until its minute ends.
      assert.equal(
        (await outcome(setup.sessions, 'ada@example.com', 'the password', '203.0.113.7')).code,
        'rate_limited',
      );
      // Another address is not held up; the same address is, written IPv4-mapped.
      assert.equal(
        (await outcome(setup.sessions, 'ada@example.com', 'the password', '198.51.100.1')).code,
        'signed_in',
      );
      assert.equal(
        (await outcome(setup.sessions, 'ada@example.com', 'the password', '::ffff:203.0.113.7')).code,
        'rate_limited',
      );
      assert.equal(setup.hasher.verifications, 6);

      setup.clock.now += 60_000;
      assert.equal(
        (await outcome(setup.sessions, 'ada@example.com', 'the password', '203.0.113.7')).code,
        'signed_in',
      );
    } finally {
      await setup.close();
    }
  });

  it('counts an IPv6 /64 as one address', async () => {
    const setup = await setUp();
    try {
      const codes: string[] = [];
      for (let i = 0; i < 6; i++) {
        const answer = await outcome(
          setup.sessions,
          `guess-${i}@example.com`,
          'a guess',
          `2001:db8:1:2::${i + 1}`,
        );
        codes.push(answer.code);
      }
      assert.deepEqual(codes, [...Array(5).fill('invalid_credentials'), 'rate_limited']);
      assert.equal(
        (await outcome(setup.sessions, 'ada@example.com', 'the password', '2001:db8:1:3::1')).code,
        'signed_in',
      );
      assert.equal(addressSubject('2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd'), '2001:db8:1:2::/64');
      assert.equal(addressSubject('2001:db8::1'), '2001:db8::/64');
      assert.equal(addressSubject('::1'), '::/64');
      assert.equal(addressSubject('::ffff:192.0.2.1'), '192.0.2.1');
    } finally {
      await setup.close();
    }
  });

  it('keeps the failures of the last window only: the table does not grow past what the limits let in', async () => {
    const setup = await setUp();
    try {
      // Many addresses guessing random emails, each up to its limit, minute after minute for an hour.
      for (let minute = 0; minute < 60; minute++) {
        for (let address = 1; address <= 3; address++) {
          for (let i = 0; i < 7; i++) {
            await outcome(
              setup.sessions,
              `m${minute}-a${address}-${i}@example.com`,
              'x',
              `192.0.2.${address}`,
            );
          }
        }
        // Failures of the 15-minute window, and of the minute at most between two forgettings.
        assert.ok(setup.failureRows() <= 3 * 5 * 16, `${setup.failureRows()} rows after minute ${minute}`);
        setup.clock.now += 60_000;
      }
      assert.ok(setup.failureRows() >= 3 * 5 * 15, `${setup.failureRows()} rows`);
      assert.equal(setup.hasher.verifications, 60 * 3 * 5);
    } finally {
      await setup.close();
    }
  });

  it('still locks an email out after five failures, whatever the address', async () => {
    const setup = await setUp();
    try {
      for (let i = 0; i < 5; i++) {
        const answer = await outcome(setup.sessions, 'ada@example.com', `guess ${i}`, `198.51.100.${i + 1}`);
        assert.equal(answer.code, 'invalid_credentials');
      }
      const verified = setup.hasher.verifications;
      const locked = await outcome(setup.sessions, 'ada@example.com', 'the password', '198.51.100.9');
      assert.equal(locked.code, 'rate_limited');
      assert.equal(setup.hasher.verifications, verified);
    } finally {
      await setup.close();
    }
  });
});
