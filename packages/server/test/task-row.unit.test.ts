/** A stored task row read back: the params JSON of tasks from before `generate_audio` existed. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toTaskRecord, toTaskRow } from '../src/store/task-row.js';
import { generationParams } from './helpers/generation-params.js';

const NOW = 1_763_812_345_000;

function row(params: Record<string, unknown>) {
  const stored = toTaskRow(
    {
      id: 'task-unified-x',
      accountId: 'acct',
      environment: 'development',
      model: 'videogen-2.0-text-to-video',
      params: generationParams(),
    },
    NOW,
  );
  return { ...stored, params: JSON.stringify(params) };
}

describe('task rows', () => {
  it('keeps generate_audio as stored, both ways', () => {
    for (const value of [true, false]) {
      const params = generationParams({ generate_audio: value });
      assert.equal(toTaskRecord(row({ ...params })).params.generate_audio, value);
    }
  });

  it('reads a task stored before generate_audio as false: its engine was asked for no sound', () => {
    const older: Record<string, unknown> = { ...generationParams() };
    delete older.generate_audio;
    const record = toTaskRecord(row(older));
    assert.equal(record.params.generate_audio, false);
    assert.deepEqual(record.params, { ...older, generate_audio: false });
  });
});
