/** The engines file's `prices`: parsed into micro-units per second, checked, and a task's cost from them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { costMicros } from '../src/domain/prices.js';
import { EnginesFileError, parseEnginesConfig } from '../src/engines/engines-file.js';

const TEXT = 'videogen-2.0-text-to-video';
const models = { [TEXT]: 'local' };

describe('prices in the engines file', () => {
  it('keeps amounts per second exactly, in micro-units, and prices a task by model, quality and duration', () => {
    const config = parseEnginesConfig(
      { models, prices: { currency: 'USD', models: { [TEXT]: { '480p': 0.05, '1080p': 0.2 } } } },
      'engines.yaml',
    );
    assert.equal(config.prices?.currency, 'USD');
    assert.deepEqual(config.prices?.perSecond.get(TEXT), { '480p': 50_000, '1080p': 200_000 });
    assert.equal(costMicros(config.prices, TEXT, '1080p', 15), 3_000_000);
    assert.equal(costMicros(config.prices, TEXT, '720p', 15), null);
    assert.equal(costMicros(config.prices, 'videogen-2.0-fast-text-to-video', '480p', 5), null);
    assert.equal(costMicros(undefined, TEXT, '480p', 5), null);
  });

  it('is optional', () => {
    assert.equal(parseEnginesConfig({ models }, 'engines.yaml').prices, undefined);
  });

  it('refuses a currency that is not a code, a model that does not exist, a quality or amount that cannot be', () => {
    for (const prices of [
      { currency: 'dollars', models: {} },
      { currency: 'USD', models: { 'videogen-9': { '480p': 1 } } },
      { currency: 'USD', models: { [TEXT]: { '4k': 1 } } },
      { currency: 'USD', models: { [TEXT]: { '480p': -1 } } },
      { currency: 'USD' },
    ]) {
      assert.throws(
        () => parseEnginesConfig({ models, prices }, 'engines.yaml'),
        (error: unknown) => error instanceof EnginesFileError && /prices/.test(error.message),
        JSON.stringify(prices),
      );
    }
  });
});
