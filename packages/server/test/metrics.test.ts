/** `GET /metrics` in Prometheus text format: HTTP latency by route, task counters, queue gauges from the store. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Api } from './helpers/api.js';
import { startTestService, type TestService } from './helpers/test-service.js';

let server: TestService;
let api: Api;
/** Added to the store's clock: a test moves time on instead of waiting for it. */
let clockOffsetMs = 0;

before(async () => {
  server = await startTestService(
    { VIDEOGEN_WORKER_CONCURRENCY: '1' },
    { now: () => Date.now() + clockOffsetMs },
  );
  api = new Api(server.url, (await server.newKey()).key);
});
after(() => server.close());

/** The value of one sample, by metric name and exact label set as prom-client prints it. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function scrape(): Promise<string> {
  const response = await fetch(`${server.url}/metrics`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return response.text();
}

describe('GET /metrics', () => {
  it('counts requests by route pattern, tasks by model and outcome, and render time', async () => {
    const { body: task } = await api.create({
      model: 'videogen-2.0-fast-text-to-video',
      prompt: 'metrics',
      duration: 4,
      quality: '480p',
    });
    await api.get('task-unified-AAAAAAAAAAAAAAAAAAAAAAAAAA');
    const final = await api.waitForFinal(task.id, 60_000);
    assert.equal(final.status, 'completed');
    const text = await scrape();
    const model = 'model="videogen-2.0-fast-text-to-video"';
    assert.equal(
      sample(
        text,
        'videogen_http_request_duration_seconds_count',
        'method="POST",route="/v1/videos/generations",status_code="200"',
      ),
      1,
    );
    assert.equal(
      sample(
        text,
        'videogen_http_request_duration_seconds_count',
        'method="GET",route="/v1/tasks/:task_id",status_code="404"',
      ),
      1,
      'labelled by the route pattern, never the task id',
    );
    assert.ok(!text.includes(task.id), 'no task id in any label');
    assert.equal(sample(text, 'videogen_tasks_created_total', model), 1);
    assert.equal(
      sample(text, 'videogen_tasks_finished_total', `${model},status="completed",error_code=""`),
      1,
    );
    assert.equal(sample(text, 'videogen_task_run_duration_seconds_count', model), 1);
    assert.ok((sample(text, 'videogen_task_run_duration_seconds_sum', model) ?? 0) > 0);
    assert.equal(sample(text, 'videogen_queue_depth'), 0);
    assert.equal(sample(text, 'videogen_queue_oldest_pending_age_seconds'), 0);
    assert.equal(sample(text, 'videogen_expired_leases'), 0);
    assert.ok((sample(text, 'videogen_process_resident_memory_bytes') ?? 0) > 0);
  });

  it('shows queue depth, oldest pending age and unfinished tasks by model from the store', async () => {
    await server.service.pool?.stop(0);
    const created = [];
    for (const model of [
      'videogen-2.0-text-to-video',
      'videogen-2.0-text-to-video',
      'videogen-2.0-fast-text-to-video',
    ]) {
      created.push((await api.create({ model, prompt: 'queued' })).body);
    }
    clockOffsetMs += 1100;
    const text = await scrape();
    assert.equal(sample(text, 'videogen_queue_depth'), 3);
    assert.ok((sample(text, 'videogen_queue_oldest_pending_age_seconds') ?? 0) >= 1);
    assert.equal(sample(text, 'videogen_tasks', 'status="pending",model="videogen-2.0-text-to-video"'), 2);
    assert.equal(
      sample(text, 'videogen_tasks', 'status="pending",model="videogen-2.0-fast-text-to-video"'),
      1,
    );
    assert.equal(created.length, 3);
  });
});
