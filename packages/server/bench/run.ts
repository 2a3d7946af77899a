/**
 * Benchmarks, each printed as a ratio against a baseline measured in the same run:
 * 1. polling: GET /v1/tasks/{id} (auth + store read + presentation) vs a bare Fastify route answering the same JSON;
 * 2. end to end: creation to `completed` for a 5 s 720p fast text task, vs the render alone (engine.render);
 * 3. callbacks (bench/webhooks.ts): completion → receiver latency and delivery throughput, vs plain undici POSTs.
 * Run with `npm run bench` (`BENCH_SECONDS` sets each autocannon run's length, default 10).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import { pino } from 'pino';
import { createApiKey } from '../src/api-keys.js';
import { loadConfig } from '../src/config.js';
import { frameSize } from '../src/domain/frame-size.js';
import { parseGenerationRequest } from '../src/domain/generation-request.js';
import { LocalEngine } from '../src/engines/local/local-engine.js';
import { OUTPUT_FPS } from '../src/ports/engine.js';
import { startService } from '../src/service.js';
import { webhookBenchmarks } from './webhooks.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);

async function load(url: string, headers: Record<string, string>): Promise<number> {
  const result = await autocannon({ url, headers, connections: 20, duration: seconds });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

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
    // The rate limiter stays on, so its cost is part of the polling path, but autocannon never reaches it.
    VIDEOGEN_RATE_LIMIT_PER_MINUTE: '1000000000',
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

    const polledBody = await (
      await fetch(`${service.publicUrl}/v1/tasks/${task.id}`, { headers: auth })
    ).text();
    const bare = Fastify();
    bare.get('/bare', async (_request, reply) => reply.type('application/json').send(polledBody));
    await bare.listen({ host: '127.0.0.1', port: 0 });
    const bareAddress = bare.server.address();
    const barePort = typeof bareAddress === 'object' && bareAddress ? bareAddress.port : 0;

    const baseline = await load(`http://127.0.0.1:${barePort}/bare`, {});
    const polling = await load(`${service.publicUrl}/v1/tasks/${task.id}`, auth);
    await bare.close();

    rows.push(
      [
        'polling GET /v1/tasks/{id}',
        `${polling.toFixed(0)} req/s`,
        `bare Fastify route ${baseline.toFixed(0)} req/s`,
        (polling / baseline).toFixed(2),
      ],
      [
        'create → completed, 5 s 720p fast text',
        `${endToEndMs.toFixed(0)} ms`,
        `engine render alone ${renderMs.toFixed(0)} ms`,
        (endToEndMs / renderMs).toFixed(2),
      ],
    );
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
