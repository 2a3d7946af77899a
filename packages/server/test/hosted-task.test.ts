/**
 * The life of a task on a hosted provider (engines/hosted/hosted-task.ts), with scripted provider calls:
 * progress, success, failures and refusals, and an upstream cancel on every other way out. And the
 * creation-time check of a request's inputs against the engine it is routed to, down to the HTTP answer.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ANY_INPUT, unsupportedInput } from '../src/domain/engine-capabilities.js';
import { TaskFailure } from '../src/domain/errors.js';
import type { GenerationParams } from '../src/domain/generation-request.js';
import { getModel } from '../src/domain/models.js';
import { type HostedStatus, type HostedTaskSteps, runHostedTask } from '../src/engines/hosted/hosted-task.js';
import { Api, type ErrorBody } from './helpers/api.js';
import { generationParams } from './helpers/generation-params.js';
import { startTestService } from './helpers/test-service.js';

interface Script {
  readonly steps: HostedTaskSteps<string>;
  readonly cancelled: string[];
  readonly polled: string[];
  readonly submissions: number;
  readonly polls: number;
}

/** A provider whose polls answer `statuses` in turn (the last one again once they run out). */
function provider(statuses: readonly (HostedStatus<string> | Error)[]): Script {
  const cancelled: string[] = [];
  const polled: string[] = [];
  let polls = 0;
  let submissions = 0;
  return {
    cancelled,
    polled,
    get polls() {
      return polls;
    },
    get submissions() {
      return submissions;
    },
    steps: {
      submit: async () => ({ id: `up-${++submissions}` }),
      poll: async ({ id }) => {
        polled.push(id);
        const status = statuses[Math.min(polls++, statuses.length - 1)];
        if (status instanceof Error) throw status;
        return status as HostedStatus<string>;
      },
      cancel: async ({ id }) => {
        cancelled.push(id);
      },
    },
  };
}

function options(overrides: { signal?: AbortSignal; deadline?: number; progress?: number[] } = {}) {
  const progress = overrides.progress ?? [];
  return {
    label: 'test engine "p"',
    signal: overrides.signal ?? new AbortController().signal,
    deadline: overrides.deadline ?? Date.now() + 60_000,
    pollIntervalMs: 1,
    onProgress: (fraction: number) => progress.push(fraction),
  };
}

async function failure(promise: Promise<unknown>): Promise<TaskFailure> {
  const error = await promise.then(
    () => assert.fail('expected a failure'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof TaskFailure, String(error));
  return error;
}

describe('a hosted task', () => {
  it('follows the provider to its result, reporting its progress, and cancels nothing', async () => {
    const script = provider([
      { state: 'queued' },
      { state: 'running', progress: 0.25 },
      { state: 'running', progress: 0.75 },
      { state: 'succeeded', result: 'https://provider.test/video.mp4' },
    ]);
    const progress: number[] = [];
    assert.equal(await runHostedTask(script.steps, options({ progress })), 'https://provider.test/video.mp4');
    assert.deepEqual(progress, [0.25, 0.75]);
    assert.deepEqual(script.cancelled, []);
  });

  it('fails with upstream_refused for a refusal and upstream_error for a failure, cancelling nothing', async () => {
    const refused = provider([
      { state: 'failed', failure: { refused: true, message: 'the prompt was flagged' } },
    ]);
    const refusal = await failure(runHostedTask(refused.steps, options()));
    assert.equal(refusal.code, 'upstream_refused');
    assert.equal(refusal.message, 'test engine "p": the prompt was flagged');
    const failed = provider([{ state: 'failed', failure: { refused: false, message: 'GPU lost' } }]);
    assert.equal((await failure(runHostedTask(failed.steps, options()))).code, 'upstream_error');
    assert.deepEqual([...refused.cancelled, ...failed.cancelled], []);
  });

  it('cancels upstream when the time limit runs out, and fails with timeout', async () => {
    const script = provider([{ state: 'running', progress: 0.5 }]);
    const timedOut = await failure(runHostedTask(script.steps, options({ deadline: Date.now() + 20 })));
    assert.equal(timedOut.code, 'timeout');
    assert.deepEqual(script.cancelled, ['up-1']);
  });

  it('cancels upstream when aborted, and rejects with the reason', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled by the client');
    const script = provider([{ state: 'queued' }]);
    const running = runHostedTask(script.steps, options({ signal: controller.signal }));
    while (script.polls === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort(reason);
    await assert.rejects(running, (error) => error === reason);
    assert.deepEqual(script.cancelled, ['up-1']);
  });

  it('calls onAccepted once, after submit has resolved with the id and before the first poll', async () => {
    const script = provider([
      { state: 'running' },
      { state: 'succeeded', result: 'https://provider.test/v.mp4' },
    ]);
    const events: string[] = [];
    const { submit, poll } = script.steps;
    const steps: HostedTaskSteps<string> = {
      ...script.steps,
      submit: async () => {
        events.push('submit');
        const id = await submit();
        events.push('submitted');
        return id;
      },
      poll: (id) => {
        events.push('poll');
        return poll(id);
      },
    };
    await runHostedTask(steps, {
      ...options(),
      onAccepted: (job) => {
        events.push(`accepted ${job.id}`);
      },
    });
    assert.deepEqual(events, ['submit', 'submitted', 'accepted up-1', 'poll', 'poll']);
  });

  it('does not call onAccepted when submit rejects', async () => {
    const refused = new TaskFailure(
      'upstream_unavailable',
      'test engine "p": POST answered HTTP 503 (gave up)',
    );
    const script = provider([{ state: 'queued' }]);
    const accepted: string[] = [];
    const steps: HostedTaskSteps<string> = {
      ...script.steps,
      submit: async () => {
        throw refused;
      },
    };
    const error = await runHostedTask(steps, {
      ...options(),
      onAccepted: () => {
        accepted.push('accepted');
      },
    }).catch((caught: unknown) => caught);
    assert.equal(error, refused);
    assert.deepEqual(accepted, []);
    assert.equal(script.polls, 0);
    assert.deepEqual(script.cancelled, [], 'nothing to cancel without an id');
  });

  it('leaves the job running upstream when the stop hands it over, and cancels it when it does not', async () => {
    for (const handsOver of [true, false]) {
      const controller = new AbortController();
      const script = provider([{ state: 'running' }]);
      const running = runHostedTask(script.steps, {
        ...options({ signal: controller.signal }),
        handsOver: () => handsOver,
      });
      while (script.polls === 0) await new Promise((resolve) => setImmediate(resolve));
      controller.abort(new Error('shutdown'));
      await assert.rejects(running);
      assert.deepEqual(script.cancelled, handsOver ? [] : ['up-1'], `handsOver ${handsOver}`);
    }
  });

  it('resumes the job an earlier run submitted: polls it to its end, submits nothing, accepts nothing', async () => {
    const script = provider([
      { state: 'running' },
      { state: 'succeeded', result: 'https://provider.test/v.mp4' },
    ]);
    const accepted: string[] = [];
    const result = await runHostedTask(script.steps, {
      ...options(),
      resume: { id: 'up-earlier' },
      onAccepted: (job) => {
        accepted.push(job.id);
      },
    });
    assert.equal(result, 'https://provider.test/v.mp4');
    assert.equal(script.submissions, 0);
    assert.deepEqual(script.polled, ['up-earlier', 'up-earlier']);
    assert.deepEqual(accepted, []);
  });

  it('cancels upstream when the provider stops answering', async () => {
    const gone = new TaskFailure('upstream_unavailable', 'test engine "p": GET answered HTTP 503 (gave up)');
    const script = provider([{ state: 'running' }, gone]);
    assert.equal(await runHostedTask(script.steps, options()).catch((error: unknown) => error), gone);
    assert.deepEqual(script.cancelled, ['up-1']);
  });
});

describe('the inputs a routed engine takes', () => {
  const params = (fields: Partial<GenerationParams>): GenerationParams =>
    generationParams({ seed: 1, ...fields });
  const noAudio = { ...ANY_INPUT, lastFrame: false, referenceAudios: 0, referenceImages: 4 };

  it('refuses what the engine cannot take, naming the field, the engine and the limit', () => {
    const reference = getModel('videogen-2.0-reference-to-video');
    assert.deepEqual(
      unsupportedInput(reference, params({ image_urls: ['a'], audio_urls: ['b'] }), noAudio, 'veo'),
      {
        param: 'audio_urls',
        message:
          'videogen-2.0-reference-to-video is rendered by the engine "veo", which takes no reference audio files; this request has 1.',
      },
    );
    const images = params({ image_urls: ['1', '2', '3', '4', '5'] });
    assert.match(
      unsupportedInput(reference, images, noAudio, 'veo')?.message ?? '',
      /at most 4 reference images/,
    );
    const image = getModel('videogen-2.0-image-to-video');
    assert.equal(
      unsupportedInput(image, params({ image_urls: ['a', 'b'] }), noAudio, 'veo')?.param,
      'image_urls',
    );
  });

  it('takes what the engine can', () => {
    const image = getModel('videogen-2.0-image-to-video');
    assert.equal(unsupportedInput(image, params({ image_urls: ['a'] }), noAudio, 'veo'), undefined);
    const reference = getModel('videogen-2.0-reference-to-video');
    const all = params({ image_urls: ['a'], video_urls: ['b'], audio_urls: ['c'] });
    assert.equal(unsupportedInput(reference, all, ANY_INPUT, 'local'), undefined);
  });
});

describe('creation refuses what the routed engine cannot take', () => {
  it('answers 400 input_not_supported naming the field and the engine, and creates no task', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'videogen-routed-inputs-'));
    const engines = join(dir, 'engines.yaml');
    await writeFile(
      engines,
      [
        'engines:',
        '  veo:',
        '    type: gemini',
        '    api_key: test-key',
        '    model: veo-3.1-generate-preview',
        '  veo-dropping:',
        '    type: gemini',
        '    api_key: test-key',
        '    model: veo-3.1-generate-preview',
        '    unsupported_inputs: drop',
        'models:',
        '  videogen-2.0-reference-to-video: veo',
        '  videogen-2.0-fast-reference-to-video: veo-dropping',
        '',
      ].join('\n'),
    );
    const server = await startTestService({ VIDEOGEN_ENGINES_FILE: engines });
    try {
      const api = new Api(server.url, (await server.newKey()).key);
      const request = {
        prompt: 'a lighthouse',
        image_urls: ['https://example.com/a.png'],
        audio_urls: ['https://example.com/a.wav'],
      };
      const refused = await api.create({ model: 'videogen-2.0-reference-to-video', ...request });
      assert.equal(refused.status, 400);
      const error = (refused.body as unknown as ErrorBody).error;
      assert.equal(error.code, 'input_not_supported');
      assert.equal(error.param, 'audio_urls');
      assert.match(error.message, /rendered by the engine "veo", which takes no reference audio files/);
      assert.equal((await api.request<{ data: unknown[] }>('GET', '/v1/tasks')).body.data.length, 0);

      const dropped = await api.create({ model: 'videogen-2.0-fast-reference-to-video', ...request });
      assert.equal(dropped.status, 200, 'with unsupported_inputs: drop the request is taken');
    } finally {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
