/**
 * The worked example of docs/engines/local.md, run as written over real HTTP: a named `local` engine standing in
 * for a model server renders a model of the operator's own within its limits, and the built-in one a built-in ID.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import type { PublicModel } from '../src/models/model-list.js';
import { Api } from './helpers/api.js';
import { docsExample } from './helpers/docs-examples.js';
import { mp4Facts } from './helpers/mp4-facts.js';
import { startTestService, type TestService } from './helpers/test-service.js';

let dir: string;
let server: TestService;
let api: Api;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-local-example-'));
  const file = join(dir, 'engines.yaml');
  await writeFile(file, stringify(await docsExample('local-stand-in')));
  server = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '2', VIDEOGEN_ENGINES_FILE: file });
  api = new Api(server.url, (await server.newKey()).key);
});
after(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

async function renderedFacts(body: Record<string, unknown>): Promise<Awaited<ReturnType<typeof mp4Facts>>> {
  const created = await api.create(body);
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const done = await api.waitForFinal(created.body.id);
  assert.equal(done.status, 'completed', JSON.stringify(done));
  const response = await fetch(done.results?.[0] as string);
  assert.equal(response.status, 200);
  const path = join(dir, `${created.body.id}.mp4`);
  await writeFile(path, Buffer.from(await response.arrayBuffer()));
  return mp4Facts(path);
}

describe('the local example of docs/engines/local.md', () => {
  it("serves the stand-in's model with the limits the file gives it, and refuses what they leave out", async () => {
    const { status, body } = await api.request<PublicModel>('GET', '/v1/models/wan-2.2');
    assert.equal(status, 200);
    assert.deepEqual(
      [body.mode, body.durations, body.qualities, body.aspect_ratios, body.available],
      ['text', [4, 6, 8], ['480p', '720p'], ['16:9', '9:16'], true],
    );
    const refused = await api.create({ model: 'wan-2.2', prompt: 'a kite', quality: '1080p' });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.param, 'quality');
  });

  it('renders a task of the model of its own and one of the built-in ID', async () => {
    const wan = await renderedFacts({
      model: 'wan-2.2',
      prompt: 'a red kite over green hills',
      duration: 6,
      quality: '480p',
      aspect_ratio: '9:16',
    });
    assert.ok(Math.abs(wan.duration - 6) < 0.1, `duration ${wan.duration}`);
    assert.deepEqual([wan.video?.width, wan.video?.height], [480, 854]);
    const builtIn = await renderedFacts({
      model: 'videogen-2.0-text-to-video',
      prompt: 'a paper boat on a pond',
      duration: 4,
      quality: '480p',
    });
    assert.ok(Math.abs(builtIn.duration - 4) < 0.1, `duration ${builtIn.duration}`);
    assert.deepEqual([builtIn.video?.width, builtIn.video?.height], [854, 480]);
  });
});
