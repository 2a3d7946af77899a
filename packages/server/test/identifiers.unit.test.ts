import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  apiKeyDisplayPrefix,
  hashApiKey,
  isTaskId,
  looksLikeApiKey,
  newApiKey,
  newTaskId,
} from '../src/domain/identifiers.js';

describe('identifiers', () => {
  it('task ids: task-unified- and 26 base32 characters, never repeating', () => {
    const ids = new Set(Array.from({ length: 2000 }, newTaskId));
    assert.equal(ids.size, 2000);
    for (const id of ids) assert.ok(isTaskId(id), id);
  });

  it('every position of the task id suffix varies (randomness is spread over it)', () => {
    const ids = Array.from({ length: 500 }, () => newTaskId().slice('task-unified-'.length));
    for (let i = 0; i < 26; i++) assert.ok(new Set(ids.map((id) => id[i])).size > 8, `position ${i}`);
  });

  it('API keys: environment prefix and 40 base62 characters', () => {
    const dev = newApiKey('development');
    const prod = newApiKey('production');
    assert.match(dev, /^vg_dev_[0-9A-Za-z]{40}$/);
    assert.match(prod, /^vg_prod_[0-9A-Za-z]{40}$/);
    assert.ok(looksLikeApiKey(dev) && looksLikeApiKey(prod));
    assert.notEqual(newApiKey('development'), dev);
    assert.equal(apiKeyDisplayPrefix(prod), prod.slice(0, 14));
    assert.equal(hashApiKey(dev).length, 64);
    assert.notEqual(hashApiKey(dev), hashApiKey(prod));
  });
});
