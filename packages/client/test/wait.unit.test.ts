/**
 * `waitForTask` against injected answers (no server): a task deleted while it is awaited, and an `onProgress`
 * that throws, neither of which may be taken for a broken stream.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NotFoundError, type Task, VideogenClient } from '../src/index.js';
import { apiErrorResponse, jsonResponse, recordingFetch } from './helpers/recording-fetch.js';

const baseUrl = 'http://127.0.0.1:1';
const apiKey = 'vg_dev_x';

const processing: Task = {
  id: 'task-unified-x',
  object: 'video.generation.task',
  model: 'videogen-2.0-text-to-video',
  status: 'processing',
  progress: 40,
  created_at: 1763812345,
  updated_at: 1763812346,
  duration: 5,
  quality: '720p',
  aspect_ratio: '16:9',
  seed: 1,
  return_last_frame: false,
  generate_audio: true,
  task_info: { can_cancel: true, estimated_time: 12, video_duration: 5 },
  usage: { video_seconds: 5 },
};

/** An event stream of `tasks`, left open unless `end`. */
function eventStream(tasks: readonly Task[], end: boolean): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      tasks.forEach((task, index) => {
        controller.enqueue(
          encoder.encode(`event: task\nid: ${index + 1}\ndata: ${JSON.stringify(task)}\n\n`),
        );
      });
      if (end) controller.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

describe('waitForTask (injected answers)', () => {
  it('throws NotFoundError when the task is deleted while it is awaited, without falling back to polling', async () => {
    // The stream stops short of a final state (the server could no longer read the task); reopened, 404.
    const recorder = recordingFetch((_request, attempt) =>
      attempt === 1
        ? eventStream([processing], true)
        : apiErrorResponse(404, 'task_not_found', 'not_found_error'),
    );
    const client = new VideogenClient({ baseUrl, apiKey, fetch: recorder.fetch });
    const seen: Task[] = [];
    await assert.rejects(
      client.waitForTask(processing.id, { onProgress: (task) => seen.push(task) }),
      (error: unknown) => error instanceof NotFoundError && error.code === 'task_not_found',
    );
    assert.deepEqual(recorder.paths(), [
      `GET /v1/tasks/${processing.id}/events`,
      `GET /v1/tasks/${processing.id}/events`,
    ]);
    assert.deepEqual(seen, [processing]);
  });

  it("rejects with onProgress's own error at once, rather than reopening the stream", async () => {
    const recorder = recordingFetch(() => eventStream([processing], false));
    const client = new VideogenClient({ baseUrl, apiKey, fetch: recorder.fetch });
    const mistake = new RangeError('a bug in the caller');
    for (const method of ['events', 'auto'] as const) {
      recorder.sent.length = 0;
      await assert.rejects(
        client.waitForTask(processing.id, {
          method,
          // Only so that a regression fails rather than hangs (generous: a loaded machine is slow).
          signal: AbortSignal.timeout(60_000),
          onProgress: () => {
            throw mistake;
          },
        }),
        (error: unknown) => error === mistake,
      );
      assert.equal(recorder.sent.length, 1, `${method}: one stream, not reopened`);
    }
  });

  it('polls no faster than every 100 ms, whatever interval it is given', async () => {
    const times: number[] = [];
    const recorder = recordingFetch((_request, attempt) => {
      times.push(performance.now());
      return jsonResponse(
        200,
        attempt < 4
          ? processing
          : { ...processing, status: 'failed', error: { code: 'cancelled', message: 'x' } },
      );
    });
    const client = new VideogenClient({ baseUrl, apiKey, fetch: recorder.fetch });
    const final = await client.waitForTask(processing.id, {
      method: 'poll',
      pollInterval: 0,
      maxPollInterval: 0,
    });
    assert.equal(final.status, 'failed');
    assert.equal(times.length, 4);
    for (let i = 1; i < times.length; i++) {
      const gap = (times[i] ?? 0) - (times[i - 1] ?? 0);
      assert.ok(gap >= 95, `request ${i + 1} came ${gap.toFixed(1)} ms after the one before`);
    }
  });
});
