/**
 * The worked example of docs/engines/ark.md for each Seedance
 * model, run as written (only `base_url` points at the strict Ark fake, and the key is the fake's): the whole service with that engines file, a task of each
 * model the file routes, sent to Ark as the model it names with the request's values, and completed.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FakeArkServer } from './fakes/ark-server.js';
import { Api } from './helpers/api.js';
import { docsExample } from './helpers/docs-examples.js';
import { startTestService } from './helpers/test-service.js';

const KEY = 'ark-test-8Hs3Kd7Lq2Wm5Zx9Cv1Bn4Pt';

let dir: string;
let ark: FakeArkServer;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-ark-docs-'));
  ark = await FakeArkServer.start({ apiKey: KEY, cacheDir: join(dir, 'cache') });
});

after(async () => {
  await ark?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Case {
  readonly body: Record<string, unknown>;
  /** What Ark must be asked for. */
  readonly sent: Record<string, unknown>;
}

/** Runs the example `name` and a task of each case; the example's one engine must name `arkModel`. */
async function runExample(name: string, arkModel: string, cases: readonly Case[]): Promise<void> {
  const example = await docsExample(name);
  const engines = Object.values(example.engines);
  assert.equal(engines.length, 1);
  assert.equal(engines[0]?.model, arkModel);
  for (const engine of engines) Object.assign(engine, { base_url: ark.baseUrl, poll_interval_ms: 10 });
  const file = join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify(example).replaceAll('$' + '{ARK_API_KEY}', KEY));
  const service = await startTestService({ VIDEOGEN_ENGINES_FILE: file, VIDEOGEN_WORKER_CONCURRENCY: '1' });
  try {
    const api = new Api(service.url, (await service.newKey()).key);
    for (const { body, sent } of cases) {
      const created = await api.create(body);
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const task = await api.waitForFinal(created.body.id, 60_000);
      assert.equal(task.status, 'completed', JSON.stringify(task.error));
      const create = ark.creates.at(-1)?.body ?? {};
      assert.equal(create.model, arkModel);
      for (const [field, value] of Object.entries(sent)) assert.deepEqual(create[field], value, field);
    }
  } finally {
    await service.close();
  }
}

describe('the docs’ Ark section: a worked example per Seedance model, run as written', () => {
  it('2.0 mini behind the standard IDs: 720p asked is made at 720p', async () => {
    await runExample('ark-seedance-mini', 'dreamina-seedance-2-0-mini-260615', [
      {
        body: { model: 'videogen-2.0-text-to-video', prompt: 'a kite', quality: '720p', duration: 6 },
        sent: { resolution: '720p', duration: 6, ratio: '16:9' },
      },
    ]);
  });

  it('2.5 as models of its own: 24 s, and web search, which the six IDs could not ask for', async () => {
    await runExample('ark-seedance-25', 'dreamina-seedance-2-5-260628', [
      {
        body: {
          model: 'seedance-2.5-text-to-video',
          prompt: 'a drone flight along a coast at dawn',
          duration: 24,
          quality: '480p',
          web_search: true,
        },
        sent: { resolution: '480p', duration: 24, tools: [{ type: 'web_search' }] },
      },
    ]);
  });

  it('1.5 pro as a model of its own: an image model of 4 to 12 s, with its seed', async () => {
    const image = `data:image/png;base64,${(await pngOf(640, 480)).toString('base64')}`;
    await runExample('ark-seedance-15-pro', 'seedance-1-5-pro-251215', [
      {
        body: {
          model: 'seedance-1.5-pro',
          prompt: 'the scene slowly comes alive',
          image_urls: [image],
          duration: 12,
          seed: 77,
        },
        sent: { duration: 12, seed: 77 },
      },
    ]);
  });
});

async function pngOf(width: number, height: number): Promise<Buffer> {
  const { createCanvas } = await import('@napi-rs/canvas');
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  context.fillStyle = '#3a7d6e';
  context.fillRect(0, 0, width, height);
  return canvas.encode('png');
}
