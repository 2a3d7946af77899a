/**
 * Benchmarks, each printed as a ratio against a baseline measured in the same run:
 * 1. end to end: creation to `completed` for a 5 s 720p fast text task, vs the render alone (engine.render);
 * 2. callbacks (bench/webhooks.ts): completion → receiver latency and delivery throughput, vs plain undici POSTs.
 * Polling and creation throughput are bench/hot-paths.ts. Run with `npm run bench`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createApiKey } from '../src/accounts/api-keys.js';
import { loadConfig } from '../src/config.js';
import { frameSize } from '../src/domain/frame-size.js';
import { parseGenerationRequest } from '../src/domain/generation-request.js';
import { LocalEngine } from '../src/engines/local/local-engine.js';
import { OUTPUT_FPS } from '../src/ports/engine.js';
import { startService } from '../src/service.js';
import { webhookBenchmarks } from './webhooks.js';

async function timeRender(): Promise<number> {
  const workDir = await mkdtemp(join(tmpdir(), 'videogen-bench-'));
  try {
    const { model, params } = parseGenerationRequest({
      model: 'videogen-2.0-fast-text-to-video',
      prompt: 'a red kite over green hills',
      seed: 1,
    });
    const started = performance.now();
    await new LocalEngine().render(
      {
        taskId: 'bench',
        model,
        params,
        frame: frameSize('720p', '16:9'),
        fps: OUTPUT_FPS,
        images: [],
        videos: [],
        audios: [],
        outputPath: join(workDir, 'out.mp4'),
        workDir,
      },
      { signal: new AbortController().signal, deadline: Date.now() + 600_000, onProgress: () => {} },
    );
    return performance.now() - started;
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'videogen-bench-'));
  const config = loadConfig({
    VIDEOGEN_DATA_DIR: dataDir,
    VIDEOGEN_PORT: '0',
    VIDEOGEN_WORKER_CONCURRENCY: '1',
  });
  const service = await startService(config, pino({ level: 'warn' }));
  const { key } = await createApiKey(service.store, { name: 'bench', environment: 'development' });
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const rows: string[][] = [];

  try {
    // End to end first, while the machine is quiet.
    const renderMs = await timeRender();
    const started = performance.now();
    const created = await fetch(`${service.publicUrl}/v1/videos/generations`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        model: 'videogen-2.0-fast-text-to-video',
        prompt: 'a red kite over green hills',
        seed: 1,
      }),
    });
    const task = (await created.json()) as { id: string; status: string };
    let status = task.status;
    while (status !== 'completed' && status !== 'failed') {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const polled = await fetch(`${service.publicUrl}/v1/tasks/${task.id}`, { headers: auth });
      status = ((await polled.json()) as { status: string }).status;
    }
    const endToEndMs = performance.now() - started;
    if (status !== 'completed') throw new Error('bench task failed');

    rows.push([
      'create → completed, 5 s 720p fast text',
      `${endToEndMs.toFixed(0)} ms`,
      `engine render alone ${renderMs.toFixed(0)} ms`,
      (endToEndMs / renderMs).toFixed(2),
    ]);
  } finally {
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  // Callbacks use a store and receiver of their own, so they run once the service has closed.
  rows.push(...(await webhookBenchmarks()));
  console.log('| benchmark | measured | baseline (same run) | ratio |');
  console.log('|---|---|---|---|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}

await main();
