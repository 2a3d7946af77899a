/**
 * Models the operator defines in the engines file (docs/engines/README.md#models-of-your-own), over real HTTP with the
 * local engine: their own limits refuse and default, an alias answers as its model, `/v1/models`, the task list,
 * usage and prices follow the catalogue the server has.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { UsageReport } from '../src/domain/usage-report.js';
import type { PublicModel, PublicModelList } from '../src/models/model-list.js';
import type { PublicTaskList } from '../src/tasks/task-service.js';
import { Api } from './helpers/api.js';
import { mp4Facts } from './helpers/mp4-facts.js';
import { startTestService, type TestService } from './helpers/test-service.js';

const ENGINES_FILE = `
engines:
  wan-box:
    type: local
models:
  videogen-2.0-fast-text-to-video:
    route: local
    aliases: [seedance-2.0-fast-text-to-video]
  wan-2.2:
    route: wan-box
    mode: text
    fast: true
    durations: [4, 6, 8]
    default_duration: 6
    qualities: [480p, 720p]
    aspect_ratios: ["16:9", "9:16"]
    aliases: [wan]
  wan-2.2-i2v:
    mode: image
    image_urls: { min: 1, max: 1 }
prices:
  currency: USD
  models:
    wan-2.2: { 480p: 0.01, 720p: 0.02 }
`;

let dir: string;
let server: TestService;
let api: Api;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-operator-models-'));
  const enginesFile = join(dir, 'engines.yaml');
  await writeFile(enginesFile, ENGINES_FILE);
  server = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '2', VIDEOGEN_ENGINES_FILE: enginesFile });
  api = new Api(server.url, (await server.newKey()).key);
});
after(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

async function download(url: string, name: string): Promise<string> {
  const response = await fetch(url);
  assert.equal(response.status, 200);
  const path = join(dir, name);
  await writeFile(path, Buffer.from(await response.arrayBuffer()));
  return path;
}

describe('models the operator defines', () => {
  it('are listed after the six, with their own limits and aliases', async () => {
    const { status, body } = await api.request<PublicModelList>('GET', '/v1/models');
    assert.equal(status, 200);
    assert.deepEqual(body.data.map((model) => model.id).slice(6), ['wan-2.2', 'wan-2.2-i2v']);
    const wan = body.data.find((model) => model.id === 'wan-2.2') as PublicModel;
    assert.deepEqual(
      [wan.mode, wan.fast, wan.aliases, wan.durations, wan.qualities, wan.aspect_ratios, wan.inputs],
      ['text', true, ['wan'], [4, 6, 8], ['480p', '720p'], ['16:9', '9:16'], {}],
    );
    const i2v = body.data.find((model) => model.id === 'wan-2.2-i2v') as PublicModel;
    assert.deepEqual(i2v.inputs, { image_urls: { min: 1, max: 1 } });
    assert.equal(i2v.available, false, 'no engine of this file serves it');
    const seedance = body.data.find((model) => model.id === 'videogen-2.0-fast-text-to-video') as PublicModel;
    assert.deepEqual(seedance.aliases, ['seedance-2.0-fast-text-to-video']);

    const byAlias = await api.request<PublicModel>('GET', '/v1/models/wan');
    assert.equal(byAlias.status, 200);
    assert.equal(byAlias.body.id, 'wan-2.2');
  });

  it("refuse what the model does not take, naming the model's own limits", async () => {
    const refusals: [Record<string, unknown>, string, RegExp][] = [
      [{ duration: 5 }, 'duration', /duration must be one of 4, 6, 8 seconds for wan-2\.2/],
      [{ quality: '1080p' }, 'quality', /quality must be one of 480p, 720p for wan-2\.2/],
      [{ aspect_ratio: '1:1' }, 'aspect_ratio', /aspect_ratio must be one of 16:9, 9:16 for wan-2\.2/],
      [{ image_urls: ['https://example.com/a.png'] }, 'image_urls', /not accepted by wan-2\.2/],
    ];
    for (const [extra, param, message] of refusals) {
      const { status, body } = await api.create({ model: 'wan', prompt: 'a kite', ...extra });
      assert.equal(status, 400, JSON.stringify(body));
      assert.equal(body.error.param, param);
      assert.match(body.error.message, message);
    }
    const twoImages = await api.create({
      model: 'wan-2.2-i2v',
      prompt: 'a kite',
      image_urls: ['https://example.com/a.png', 'https://example.com/b.png'],
    });
    assert.equal(twoImages.status, 400);
    assert.match(twoImages.body.error.message, /image_urls takes at most 1 entries for wan-2\.2-i2v/);
    const unknown = await api.create({ model: 'wan-3', prompt: 'a kite' });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.code, 'model_not_found');
    assert.match(unknown.body.error.message, /wan-2\.2, wan-2\.2-i2v\.$/);
  });

  it('render by an alias as their model, with their defaults, and cost their price', async () => {
    const created = await api.create({ model: 'wan', prompt: 'a red kite over the sea', quality: '480p' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.deepEqual(
      [created.body.model, created.body.duration, created.body.quality, created.body.aspect_ratio],
      ['wan-2.2', 6, '480p', '16:9'],
    );
    const alias = await api.create({
      model: 'seedance-2.0-fast-text-to-video',
      prompt: 'a kite',
      duration: 4,
    });
    assert.equal(alias.body.model, 'videogen-2.0-fast-text-to-video');

    const done = await api.waitForFinal(created.body.id);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    const facts = await mp4Facts(await download(done.results?.[0] as string, 'wan.mp4'));
    assert.ok(Math.abs(facts.duration - 6) < 0.1, `duration ${facts.duration}`);
    assert.deepEqual([facts.video?.width, facts.video?.height], [854, 480]);
    assert.equal((await api.waitForFinal(alias.body.id)).status, 'completed');

    const list = await api.request<PublicTaskList>('GET', '/v1/tasks?model=wan');
    assert.deepEqual(
      list.body.data.map((task) => task.id),
      [created.body.id],
    );
    const usage = await api.request<UsageReport>('GET', '/v1/usage?group_by=model');
    const wan = usage.body.data.find((bucket) => bucket.key === 'wan-2.2');
    assert.deepEqual([wan?.tasks, wan?.video_seconds, wan?.cost], [1, 6, 0.06]);
  });
});
