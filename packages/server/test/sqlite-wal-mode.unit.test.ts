/**
 * `retriedWhileBusy`, which switches a new SQLite file to WAL mode: SQLite refuses the switch as busy, without
 * its busy handler, while another process opening the same new file holds a lock (seen as "database is locked"
 * when four processes started together on a new data directory).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { retriedWhileBusy } from '../src/store/sqlite/sqlite-wal-mode.js';

function sqliteError(code: string): Error {
  return Object.assign(new Error(code === 'SQLITE_BUSY' ? 'database is locked' : code), { code });
}

describe('retriedWhileBusy', () => {
  it('tries again while SQLite answers busy, and returns what the action does', () => {
    let calls = 0;
    const mode = retriedWhileBusy(() => {
      calls += 1;
      if (calls < 3) throw sqliteError('SQLITE_BUSY');
      return 'wal';
    }, 5000);
    assert.equal(mode, 'wal');
    assert.equal(calls, 3);
  });

  it('gives up with the busy error once the timeout has passed', () => {
    let at = 0;
    let calls = 0;
    assert.throws(
      () =>
        retriedWhileBusy(
          () => {
            calls += 1;
            at += 1000;
            throw sqliteError('SQLITE_BUSY');
          },
          5000,
          () => at,
        ),
      /database is locked/,
    );
    assert.equal(calls, 5);
  });

  it('throws any other error at once', () => {
    let calls = 0;
    assert.throws(
      () =>
        retriedWhileBusy(() => {
          calls += 1;
          throw sqliteError('SQLITE_CORRUPT');
        }, 5000),
      /SQLITE_CORRUPT/,
    );
    assert.equal(calls, 1);
  });
});
