/**
 * The `openai` and `comfyui` examples of docs/engines/ (openai.md, comfyui.md), run as written against the strict fakes of
 * test/fakes/ (video-servers.ts, comfyui-server.ts): only the servers' addresses change. Each `openai`
 * example routes all six model IDs, and each model ID completes through it; the ComfyUI example renders
 * with the workflow the docs ship (docs/workflows/ltxv-t2v-api.json).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { MODEL_IDS } from '../src/domain/models.js';
import { createEngines, routeEngines } from '../src/engines/create-engines.js';
import { parseEnginesConfig } from '../src/engines/engines-file.js';
import { FakeComfyUi } from './fakes/comfyui-server.js';
import { FakeVideoServer } from './fakes/video-servers.js';
import { docsExample } from './helpers/docs-examples.js';
import { type GridAssets, writeGridAssets } from './helpers/engine-grid.js';
import { assertContractVideo, makeJob, renderContext } from './helpers/render-jobs.js';

const DOCS_DIR = fileURLToPath(new URL('../../../../docs/', import.meta.url));
const ENV = { OPENAI_API_KEY: 'sk-proj-docs-example-0123456789', VLLM_API_KEY: 'vllm-docs-example-key' };

let dir: string;
let assets: GridAssets;
const fakes: FakeVideoServer[] = [];

async function fake(
  options: Omit<Parameters<typeof FakeVideoServer.start>[0], 'cacheDir' | 'picture'>,
): Promise<FakeVideoServer> {
  const server = await FakeVideoServer.start({
    ...options,
    cacheDir: join(dir, 'cache'),
    picture: { colour: '0x2060a0' },
  });
  fakes.push(server);
  return server;
}

/** Renders one job of each model ID through the example, with the engines' addresses replaced by `servers`. */
async function runExample(name: string, servers: Record<string, FakeVideoServer>): Promise<void> {
  const example = await docsExample(name);
  for (const [engine, server] of Object.entries(servers)) {
    const options = example.engines[engine];
    assert.ok(options, `the example has an engine ${engine}`);
    options.base_url = server.url;
    options.poll_interval_ms = 10;
  }
  const config = parseEnginesConfig(example, join(dir, `${name}.yaml`), ENV);
  const router = routeEngines(config, createEngines(config));
  assert.deepEqual(router.models().sort(), [...MODEL_IDS].sort(), 'the example routes all six model IDs');
  for (const [index, model] of MODEL_IDS.entries()) {
    const mode = model.includes('text') ? 'text' : 'images';
    const job = makeJob(dir, {
      model,
      quality: (['480p', '720p'] as const)[index % 2],
      ratio: (['16:9', '9:16', '1:1'] as const)[index % 3],
      images: mode === 'text' ? [] : [assets.wide],
    });
    const engine = router.engineFor(model);
    assert.ok(engine);
    await engine.render(job, renderContext());
    await assertContractVideo(job);
  }
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-engine-examples-'));
  assets = await writeGridAssets(dir);
});

after(async () => {
  await Promise.all(fakes.map((server) => server.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('the openai examples of docs/engines/openai.md', () => {
  it('OpenAI Sora 2', async () => {
    const openai = await fake({ kind: 'openai', apiKey: ENV.OPENAI_API_KEY });
    await runExample('openai-sora', { sora: openai });
    assert.equal(openai.creates.length, 6);
  });

  it('SGLang Diffusion with Wan 2.2, a T2V and an I2V server', async () => {
    const t2v = await fake({ kind: 'sglang', task: 'T2V' });
    const i2v = await fake({ kind: 'sglang', task: 'I2V', servedModel: 'Wan-AI/Wan2.2-I2V-A14B-Diffusers' });
    await runExample('sglang-wan', { 'sglang-t2v': t2v, 'sglang-i2v': i2v });
    assert.deepEqual([t2v.creates.length, i2v.creates.length], [2, 4]);
  });

  it('vLLM-Omni with Wan 2.2', async () => {
    const vllm = await fake({ kind: 'vllm-omni', apiKey: ENV.VLLM_API_KEY });
    await runExample('vllm-omni-wan', { 'vllm-wan': vllm });
    assert.equal(vllm.creates.length, 6);
  });
});

describe('the comfyui example of docs/engines/comfyui.md', () => {
  it('LTX-Video with the shipped workflow, at 480p 16:9 and 1080p 21:9', async () => {
    const comfy = await FakeComfyUi.start();
    try {
      const example = await docsExample('comfyui-ltx');
      const options = example.engines['comfy-ltx'];
      assert.ok(options);
      options.base_url = comfy.baseUrl;
      // The workflow path is relative to the engines file: here, the docs folder that ships it.
      const config = parseEnginesConfig(example, join(DOCS_DIR, 'engines.yaml'), ENV);
      const router = routeEngines(config, createEngines(config));
      const engine = router.engineFor('videogen-2.0-fast-text-to-video');
      assert.ok(engine);
      for (const [quality, ratio] of [
        ['480p', '16:9'],
        ['1080p', '21:9'],
      ] as const) {
        const job = makeJob(dir, { model: 'videogen-2.0-fast-text-to-video', quality, ratio });
        await engine.render(job, renderContext());
        await assertContractVideo(job);
      }
    } finally {
      await comfy.close();
    }
  });
});
