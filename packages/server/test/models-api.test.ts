/**
 * `GET /v1/models`: every model ID with what it takes as routed, and whether it can run now — a live worker
 * serving it, and some engine of its route whose circuit is not open.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MODEL_IDS } from '../src/domain/models.js';
import type { PublicModel, PublicModelList } from '../src/models/model-list.js';
import { Api } from './helpers/api.js';
import { startTestService, type TestService } from './helpers/test-service.js';
import { until } from './helpers/until.js';

let dir: string;
const services: TestService[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-models-'));
});
after(async () => {
  for (const service of services) await service.close();
  await rm(dir, { recursive: true, force: true });
});

async function start(env: Record<string, string>): Promise<{ test: TestService; api: Api }> {
  const test = await startTestService(env);
  services.push(test);
  const { key } = await test.newKey();
  return { test, api: new Api(test.url, key) };
}

async function models(api: Api): Promise<PublicModelList> {
  const { status, body } = await api.request<PublicModelList>('GET', '/v1/models');
  assert.equal(status, 200, JSON.stringify(body));
  return body;
}

/** The list once `ready` holds for it: the worker pool registers itself as it starts. */
async function modelsOnce(api: Api, ready: (list: PublicModelList) => boolean): Promise<PublicModelList> {
  return until(
    async () => {
      const list = await models(api);
      return ready(list) ? list : undefined;
    },
    'the model list waited for',
    { intervalMs: 20 },
  );
}

const byId = (list: PublicModelList, id: string): PublicModel => {
  const model = list.data.find((m) => m.id === id);
  assert.ok(model, id);
  return model;
};

describe('GET /v1/models', () => {
  it('lists the six model IDs with the catalogue, available once a worker serves them', async () => {
    const { test, api } = await start({ VIDEOGEN_WORKER_CONCURRENCY: '1' });
    const list = await modelsOnce(api, (l) => l.data.every((m) => m.available));
    assert.equal(list.object, 'list');
    assert.deepEqual(
      list.data.map((m) => m.id),
      [...MODEL_IDS],
    );
    assert.deepEqual(byId(list, 'videogen-2.0-text-to-video'), {
      id: 'videogen-2.0-text-to-video',
      object: 'model',
      created: 1_767_225_600,
      owned_by: 'videogen',
      mode: 'text',
      fast: false,
      aliases: [],
      inputs: {},
      durations: [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
      qualities: ['480p', '720p', '1080p'],
      aspect_ratios: ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9', 'adaptive'],
      generate_audio: true,
      web_search: false,
      asset_ids: false,
      available: true,
    });
    assert.deepEqual(byId(list, 'videogen-2.0-fast-image-to-video').inputs, {
      image_urls: { min: 1, max: 2 },
    });
    assert.deepEqual(byId(list, 'videogen-2.0-reference-to-video').inputs, {
      image_urls: { min: 0, max: 9 },
      video_urls: { min: 0, max: 3 },
      audio_urls: { min: 0, max: 3 },
    });
    const one = await api.request<PublicModel>('GET', '/v1/models/videogen-2.0-fast-text-to-video');
    assert.equal(one.status, 200);
    assert.equal(one.body.fast, true);
    const unknown = await api.request<{ error: { code: string } }>('GET', '/v1/models/videogen-3');
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.code, 'model_not_found');
    const anonymous = await new Api(test.url).request('GET', '/v1/models');
    assert.equal(anonymous.status, 401);
  });

  it('says no model can run while no worker serves it', async () => {
    const { api } = await start({ VIDEOGEN_WORKER_CONCURRENCY: '0' });
    const list = await models(api);
    for (const model of list.data) {
      assert.equal(model.available, false, model.id);
      assert.match(model.unavailable_reason ?? '', /No worker serving this model is running/);
    }
  });

  it('narrows the inputs and sound to what the routed engines take, and reports an open circuit', async () => {
    const file = join(dir, 'engines.yaml');
    await writeFile(
      file,
      [
        'engines:',
        '  turbo:',
        '    type: runway',
        // Never called here: listing models asks no provider.
        '    base_url: http://127.0.0.1:9',
        '    api_key: key_not_used',
        '    model: gen4_turbo',
        '  seedance:',
        '    type: ark',
        '    base_url: http://127.0.0.1:9',
        '    api_key: key_not_used',
        '    model: dreamina-seedance-2-0-260128',
        'models:',
        '  videogen-2.0-image-to-video: [local, turbo]',
        '  videogen-2.0-fast-image-to-video: local',
        '  videogen-2.0-fast-text-to-video: seedance',
        '  videogen-2.0-reference-to-video: seedance',
        'routing:',
        '  circuit_breaker: { failures: 1, cooldown_seconds: 3600 }',
        '',
      ].join('\n'),
    );
    const { test, api } = await start({ VIDEOGEN_ENGINES_FILE: file, VIDEOGEN_WORKER_CONCURRENCY: '1' });
    const list = await modelsOnce(api, (l) => byId(l, 'videogen-2.0-image-to-video').available);
    // Either engine may render a task of the route, and gen4_turbo takes no last frame.
    assert.deepEqual(byId(list, 'videogen-2.0-image-to-video').inputs, { image_urls: { min: 1, max: 1 } });
    assert.deepEqual(byId(list, 'videogen-2.0-fast-image-to-video').inputs, {
      image_urls: { min: 1, max: 2 },
    });
    // gen4_turbo makes no sound (Runway takes no `audio` for it); the local engine makes its own soundtrack.
    assert.equal(byId(list, 'videogen-2.0-image-to-video').generate_audio, false);
    assert.equal(byId(list, 'videogen-2.0-fast-image-to-video').generate_audio, true);
    // Seedance 2.0 on Ark searches the web for a text task and takes ids of Ark's asset library; a route with
    // another engine beside Ark does neither, as no model routed elsewhere does.
    assert.deepEqual(
      [
        'videogen-2.0-fast-text-to-video',
        'videogen-2.0-reference-to-video',
        'videogen-2.0-image-to-video',
      ].map((id) => [byId(list, id).web_search, byId(list, id).asset_ids]),
      [
        [true, true],
        [false, true],
        [false, false],
      ],
    );
    assert.equal(byId(list, 'videogen-2.0-text-to-video').web_search, false, 'routed elsewhere');
    assert.equal(byId(list, 'videogen-2.0-text-to-video').available, false, 'not in the engines file');
    assert.equal(
      byId(list, 'videogen-2.0-text-to-video').generate_audio,
      true,
      'routed elsewhere: not known',
    );

    const circuit = { failures: 1, cooldownMs: 3_600_000 };
    await test.service.store.recordEngineOutcome('local', 'unavailable', circuit);
    const half = byId(await models(api), 'videogen-2.0-image-to-video');
    assert.equal(half.available, true, 'turbo is still there');
    await test.service.store.recordEngineOutcome('turbo', 'unavailable', circuit);
    const closed = byId(await models(api), 'videogen-2.0-image-to-video');
    assert.equal(closed.available, false);
    assert.match(closed.unavailable_reason ?? '', /circuit open/);
    assert.equal(
      byId(await models(api), 'videogen-2.0-fast-image-to-video').available,
      false,
      'local is open',
    );

    // Creation follows the list (every circuit is open now, so these tasks only wait).
    const image = { prompt: 'a kite', image_urls: ['https://example.com/kite.png'] };
    const silent = { model: 'videogen-2.0-image-to-video', ...image };
    const refused = await api.request<{ error: { code: string; param: string; message: string } }>(
      'POST',
      '/v1/videos/generations',
      { body: { ...silent, generate_audio: true } },
    );
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 'input_not_supported');
    assert.equal(refused.body.error.param, 'generate_audio');
    assert.match(refused.body.error.message, /engine "turbo", which makes no sound of its own/);
    const created = async (body: object): Promise<boolean> => {
      const answer = await api.request<{ generate_audio: boolean }>('POST', '/v1/videos/generations', {
        body,
      });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body.generate_audio;
    };
    assert.equal(await created(silent), false, 'left out on a route without sound: false');
    assert.equal(await created({ ...silent, generate_audio: false }), false);
    const sounding = { model: 'videogen-2.0-fast-image-to-video', ...image };
    assert.equal(await created(sounding), true, 'left out on a route with sound: true');
    assert.equal(await created({ ...sounding, generate_audio: false }), false);
  });
});
