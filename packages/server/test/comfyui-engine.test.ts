import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FormData, Response, request } from 'undici';
import { WebSocket } from 'ws';
import { TaskFailure } from '../src/domain/errors.js';
import { ComfyUiEngine } from '../src/engines/comfyui/comfyui-engine.js';
import type { ComfyUiOptions } from '../src/engines/comfyui/comfyui-options.js';
import { SamplingProgress } from '../src/engines/comfyui/sampling-progress.js';
import { type Workflow, WorkflowTemplate } from '../src/engines/comfyui/workflow-template.js';
import { createOutboundAgent } from '../src/outbound/outbound-agent.js';
import { RunStopped } from '../src/runner/run-stopped.js';
import { FakeComfyUi } from './fakes/comfyui-server.js';
import { writeTestImage } from './helpers/media-fixtures.js';
import { mp4Facts } from './helpers/mp4-facts.js';
import {
  assertContractVideo,
  assertProgressRisesToOne,
  jobMaker,
  renderContext,
} from './helpers/render-jobs.js';

const FIXTURES = fileURLToPath(new URL('../../test/fixtures/', import.meta.url));
/** Wan 2.2 14B text-to-video (two KSamplerAdvanced), saved by VideoHelperSuite's VHS_VideoCombine. */
const TEXT_WORKFLOW = 'comfyui-text-workflow.json';
/** LTX-Video first and last frame (LTXVImgToVideo + LTXVAddGuide), saved by core SaveVideo. */
const IMAGE_WORKFLOW = 'comfyui-image-workflow.json';
/** LTX-Video text-to-video (EmptyLTXVLatentVideo, SamplerCustom, CreateVideo, SaveVideo). */
const LTXV_WORKFLOW = 'comfyui-ltxv-text-workflow.json';
const API_KEY = 'sk-comfy-very-secret-key';
const WAN_HIGH_NOISE = 'wan2.2_t2v_high_noise_14B_fp8_scaled.safetensors';

type Json = Record<string, unknown>;

let dir: string;
let comfy: FakeComfyUi;
/** The service's agent for model servers (`openEngines`), so that the progress socket's upgrade goes through it too. */
const modelServers = createOutboundAgent();
const images: { red: string; blue: string } = { red: '', blue: '' };

/** This file's jobs: 2 s of a paper boat, seed 1234. */
const comfyJob = jobMaker(() => dir, {
  taskPrefix: 'task-comfy',
  prompt: 'a paper boat drifting down a rainy street',
  duration: 2,
  seed: 1234,
});

function engine(options: Partial<ComfyUiOptions> = {}, name = 'ltx'): ComfyUiEngine {
  return new ComfyUiEngine(
    name,
    { type: 'comfyui', base_url: comfy.baseUrl, workflow: TEXT_WORKFLOW, poll_interval_ms: 20, ...options },
    { baseDir: FIXTURES, dispatcher: modelServers },
  );
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

function failure(code: TaskFailure['code'], pattern: RegExp) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof TaskFailure, `a TaskFailure: ${String(error)}`);
    assert.equal(error.code, code);
    assert.match(error.message, pattern);
    assert.ok(!error.message.includes(API_KEY), 'the API key stays out of messages');
    return true;
  };
}

/** A direct HTTP call to the fake ComfyUI. */
async function call(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; json: () => Json }> {
  // A form goes as its encoded bytes, as the engine sends it (upstream-request.ts says why).
  const form = body instanceof FormData ? new Response(body) : undefined;
  const response = await request(`${comfy.baseUrl}${path}`, {
    method,
    headers: form ? { ...headers, 'content-type': form.headers.get('content-type') ?? '' } : headers,
    body: form
      ? Buffer.from(await form.arrayBuffer())
      : body === undefined || typeof body === 'string'
        ? body
        : JSON.stringify(body),
  });
  const text = await response.body.text();
  return { status: response.statusCode, text, json: () => JSON.parse(text) as Json };
}

/** A fixture workflow with its placeholders filled as the engine fills them for a 480p 16:9, 2 s job. */
function filledWorkflow(file: string): Record<string, Json> {
  const template = WorkflowTemplate.load(join(FIXTURES, file));
  const filled: Workflow = template.fill(
    new Map<string, string | number>(
      Object.entries({
        prompt: 'a lighthouse at dusk',
        negative_prompt: '',
        seed: 7,
        width: 854,
        height: 480,
        fps: 24,
        duration: 2,
        frames: 48,
        length: 48,
        frames_plus_one: 49,
      }),
    ),
  );
  return structuredClone(filled) as unknown as Record<string, Json>;
}

/** What the fake ComfyUI's save nodes wrote: node, size, frames, fps (file names below, counters go on). */
function savedShapes(): Json[] {
  return comfy.savedVideos.map(({ node, width, height, frames, fps }) => ({
    node,
    width,
    height,
    frames,
    fps,
  }));
}

function inputsOf(workflow: Record<string, Json>, id: string): Json {
  return workflow[id]?.inputs as Json;
}

/** The LTX-Video text-to-video fixture, filled. */
function ltxvPrompt(): Record<string, Json> {
  return filledWorkflow(LTXV_WORKFLOW);
}

interface NodeErrors {
  readonly errors: Json[];
  readonly dependent_outputs: string[];
  readonly class_type: string;
}

/** POSTs a prompt the fake must refuse with 400; resolves with its answer. */
async function refusal(prompt: unknown): Promise<Json> {
  const answer = await call('POST', '/prompt', { prompt, client_id: 'test' });
  assert.equal(answer.status, 400, answer.text);
  return answer.json();
}

describe('comfyui engine', () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'videogen-comfyui-'));
    comfy = await FakeComfyUi.start();
    images.red = join(dir, 'red.png');
    images.blue = join(dir, 'blue.jpg');
    await Promise.all([
      writeTestImage(images.red, { width: 320, height: 180, colour: [220, 30, 40] }),
      writeTestImage(images.blue, { width: 320, height: 180, colour: [30, 60, 220] }),
    ]);
  });

  after(async () => {
    await modelServers.close();
    await comfy.close();
    await rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => comfy.reset());

  it('runs a text workflow: placeholders filled, progress over both samplers, the video conformed', async () => {
    // Behind an authenticating proxy (ComfyUI has no auth of its own), with latent previews on.
    comfy.proxy.bearer = API_KEY;
    comfy.previews = true;
    const job = comfyJob();
    const ctx = renderContext();
    await engine({ api_key: API_KEY }).render(job, ctx);
    await assertContractVideo(job);

    const [prompt] = comfy.prompts;
    assert.ok(prompt);
    const nodes = prompt.workflow;
    assert.equal(
      nodes['2']?.inputs.text,
      'a paper boat drifting down a rainy street, cinematic, high detail',
    );
    assert.equal(nodes['3']?.inputs.text, '');
    assert.deepEqual(nodes['4']?.inputs, { width: 854, height: 480, length: 49, batch_size: 1 });
    assert.equal(nodes['5']?.inputs.noise_seed, 1234);
    assert.deepEqual(nodes['5']?.inputs.positive, ['2', 0], 'links are left alone');
    assert.equal(nodes['12']?.inputs.frame_rate, 24);
    assert.equal(nodes['12']?.inputs.filename_prefix, 'videogen_1234_48f');
    // What ComfyUI wrote: Wan's latent is /8 and 4n+1, so 854 became 848; the engine made it 854x480 again.
    assert.deepEqual(savedShapes(), [{ node: '12', width: 848, height: 480, frames: 49, fps: 24 }]);
    assert.match(comfy.savedVideos[0]?.file ?? '', /^videogen_1234_48f_\d{5}\.mp4$/);

    assertProgressRisesToOne(ctx.progress, { strictly: true });
    assert.ok(
      ctx.progress.includes(0.45),
      `the first sampler fills half the sampling share: ${ctx.progress}`,
    );
    assert.ok(
      ctx.progress.some((p) => p > 0.45 && p < 0.9),
      `the second sampler moves progress on: ${ctx.progress}`,
    );
    assert.ok(ctx.progress.some((p) => p < 0.45));

    assert.ok(comfy.authorizations.length >= 3);
    assert.ok(
      comfy.authorizations.every((value) => value === `Bearer ${API_KEY}`),
      'every call has the key',
    );
    assert.deepEqual(comfy.socketAuthorizations, [`Bearer ${API_KEY}`]);
    assert.equal(comfy.interrupts.length, 0);
  });

  it('uploads the images an image workflow uses and puts their names in it', async () => {
    const job = comfyJob({ model: 'videogen-2.0-image-to-video', images: [images.red, images.blue] });
    await engine({ workflow: IMAGE_WORKFLOW }).render(job, renderContext());
    await assertContractVideo(job);

    const [prompt] = comfy.prompts;
    assert.ok(prompt);
    const first = prompt.workflow['2']?.inputs.image;
    const last = prompt.workflow['3']?.inputs.image;
    assert.equal(typeof first, 'string');
    // ComfyUI echoes the subfolder the upload asked for: none, so the files sit in input/ itself.
    assert.match(String(first), /^videogen-task-comfy-\d+-image-1\.png$/);
    assert.match(String(last), /^videogen-task-comfy-\d+-image-2\.jpg$/);
    assert.deepEqual(comfy.uploads.get(String(first)), await readFile(images.red));
    assert.deepEqual(comfy.uploads.get(String(last)), await readFile(images.blue));
    assert.equal(comfy.uploads.size, 2);
    assert.equal(prompt.workflow['5']?.inputs.length, 49);
    // LTX-Video floors the size to /32 (854 → 832), and LTXVCropGuides took the last-frame guide off again.
    assert.deepEqual(savedShapes(), [{ node: '8', width: 832, height: 480, frames: 49, fps: 24 }]);
    assert.match(comfy.savedVideos[0]?.file ?? '', /^video\/videogen_\d{5}_\.mp4$/);
  });

  it('a workflow needing a last image the request lacks is invalid_asset, before anything is sent', async () => {
    const job = comfyJob({ model: 'videogen-2.0-image-to-video', images: [images.red] });
    await assert.rejects(
      engine({ workflow: IMAGE_WORKFLOW }).render(job, renderContext()),
      failure('invalid_asset', /comfyui engine "ltx": .*\{\{last_image\}\}.* has 1/),
    );
    assert.equal(comfy.uploads.size, 0);
    assert.equal(comfy.prompts.length, 0);
  });

  it('takes the output node it is told to, and says so when it has no file', async () => {
    const job = comfyJob();
    await assert.rejects(
      engine({ output_node: '7' }).render(job, renderContext()),
      failure('upstream_error', /output node 7 produced no file/),
    );
    assert.equal(await exists(job.outputPath), false);
    const chosen = comfyJob({ duration: 1 });
    await engine({ output_node: '12' }).render(chosen, renderContext());
    await assertContractVideo(chosen);
  });

  it('an execution_error on the socket is upstream_error with its message', async () => {
    comfy.gpu.failNode = {
      node: '6',
      type: 'torch.OutOfMemoryError',
      message: 'Allocation on device 0 would exceed allowed memory. (out of memory)',
    };
    const job = comfyJob();
    await assert.rejects(
      engine({ api_key: API_KEY }).render(job, renderContext()),
      failure(
        'upstream_error',
        /^comfyui engine "ltx": the workflow failed in node 6 \(KSamplerAdvanced\): torch\.OutOfMemoryError: .*out of memory/,
      ),
    );
    assert.equal(await exists(job.outputPath), false);
    const [prompt] = comfy.prompts;
    assert.ok(prompt);
    const entry = await comfy.settled(prompt.id);
    assert.deepEqual(entry.status && (entry.status as Json).status_str, 'error');
  });

  it('a workflow ComfyUI refuses (HTTP 400 with node_errors) is upstream_error naming the problem', async () => {
    comfy.uninstallModel('diffusion_models', WAN_HIGH_NOISE);
    await assert.rejects(
      engine({ api_key: API_KEY }).render(comfyJob(), renderContext()),
      failure(
        'upstream_error',
        /refused the workflow: Prompt outputs failed validation; node 1 \(UNETLoader\): Value not in list: unet_name: 'wan2\.2_t2v_high_noise_14B_fp8_scaled\.safetensors' not in \['wan2\.2_t2v_low_noise_14B_fp8_scaled\.safetensors'\]/,
      ),
    );
    assert.equal(comfy.prompts.length, 0);
  });

  it('a node ComfyUI does not have (a custom node not installed) is upstream_error naming it', async () => {
    const workflow = join(dir, 'custom-node-workflow.json');
    const nodes = JSON.parse(await readFile(join(FIXTURES, IMAGE_WORKFLOW), 'utf8')) as Record<string, Json>;
    nodes['1'] = {
      class_type: 'LTXVLoader',
      inputs: { ckpt_name: 'ltx-video-2b-v0.9.5.safetensors', dtype: 'bfloat16' },
    };
    await writeFile(workflow, JSON.stringify(nodes));
    await assert.rejects(
      engine({ workflow }).render(comfyJob({ images: [images.red, images.blue] }), renderContext()),
      failure(
        'upstream_error',
        /refused the workflow: Cannot execute because node LTXVLoader does not exist\.: Node ID '#1'$/,
      ),
    );
    assert.equal(comfy.prompts.length, 0);
  });

  it('an output ComfyUI drops at validation (it runs the others) is named when no video comes', async () => {
    const workflow = join(dir, 'bad-format-workflow.json');
    const nodes = JSON.parse(await readFile(join(FIXTURES, TEXT_WORKFLOW), 'utf8')) as Record<string, Json>;
    (nodes['12']?.inputs as Json).format = 'video/h264-mp5';
    await writeFile(workflow, JSON.stringify(nodes));
    await assert.rejects(
      engine({ workflow }).render(comfyJob({ duration: 1 }), renderContext()),
      failure(
        'upstream_error',
        /produced no video file \(only videogen-preview_\d+_\.png.*\).* ComfyUI did not run the outputs that failed its validation: node 12 \(VHS_VideoCombine\): Value not in list: format: 'video\/h264-mp5' not in \['image\/gif', 'image\/webp', .*'video\/h264-mp4', .*\]$/,
      ),
    );
    const [prompt] = comfy.prompts;
    assert.ok(prompt, 'ComfyUI accepted the prompt for its other output');
    assert.deepEqual(Object.keys((await comfy.settled(prompt.id)).outputs as Json), ['9']);
  });

  it('a proxy refusing the key is upstream_error, and the key is not in the message', async () => {
    comfy.proxy.bearer = API_KEY;
    await assert.rejects(
      engine({ api_key: `${API_KEY}-wrong` }).render(comfyJob(), renderContext()),
      (error: unknown) => {
        assert.ok(error instanceof TaskFailure);
        assert.equal(error.code, 'upstream_error');
        assert.match(
          error.message,
          /^comfyui engine "ltx": POST \/prompt answered HTTP 401: 401 Unauthorized$/,
        );
        assert.ok(!error.message.includes(API_KEY));
        return true;
      },
    );
    assert.equal(comfy.prompts.length, 0);
  });

  it('falls back to polling /history when a proxy refuses the websocket', async () => {
    comfy.proxy.refuseWebSockets = true;
    const job = comfyJob();
    const ctx = renderContext();
    await engine().render(job, ctx);
    await assertContractVideo(job);
    assertProgressRisesToOne(ctx.progress, { strictly: true });
    assert.deepEqual(comfy.socketAuthorizations, [], 'no socket was accepted');

    // Another seed: the same prompt again would come from ComfyUI's cache without running anything.
    comfy.gpu.failNode = { node: '6', type: 'torch.OutOfMemoryError', message: 'CUDA out of memory.' };
    await assert.rejects(
      engine().render(comfyJob({ seed: 99 }), renderContext()),
      failure('upstream_error', /failed in node 6 \(KSamplerAdvanced\): torch\.OutOfMemoryError/),
    );
  });

  it('falls back to polling /history when a proxy cuts the websocket mid-run', async () => {
    comfy.proxy.cutWebSocketAfterNode = '5';
    const job = comfyJob({ duration: 1 });
    const ctx = renderContext();
    await engine().render(job, ctx);
    await assertContractVideo(job);
    assertProgressRisesToOne(ctx.progress, { strictly: true });
    assert.equal(comfy.socketAuthorizations.length, 1, 'the socket was open at first');
  });

  it('a prompt deleted from the queue before it ran is upstream_error, with or without the socket', async () => {
    // Another job holds the GPU; someone clears our prompt from the queue (POST /queue {delete}).
    comfy.gpu.paused = true;
    const deleteWhenQueued = (): Promise<void> =>
      comfy.waitFor('queued').then(async ([id]) => {
        assert.equal((await call('POST', '/queue', { delete: [id] })).status, 200);
      });
    const pattern = /^comfyui engine "ltx": prompt [0-9a-f-]+ left the ComfyUI queue without a result/;
    const deleted = deleteWhenQueued();
    await assert.rejects(engine().render(comfyJob(), renderContext()), failure('upstream_error', pattern));
    await deleted;
    comfy.proxy.refuseWebSockets = true;
    const deletedAgain = deleteWhenQueued();
    await assert.rejects(engine().render(comfyJob(), renderContext()), failure('upstream_error', pattern));
    await deletedAgain;
  });

  it('an abort while the prompt is being queued still cancels it once ComfyUI names it', async () => {
    comfy.gpu.stallNode = { node: '6' };
    const release = comfy.holdPromptRequests();
    const received = comfy.waitFor('prompt-received');
    const controller = new AbortController();
    const reason = new Error('cancelled while queueing');
    const render = engine().render(comfyJob(), renderContext(controller.signal));
    await received;
    controller.abort(reason);
    // ComfyUI has not answered (its answer is held): the render does not wait for it.
    await assert.rejects(render, (error: unknown) => error === reason);
    assert.equal(comfy.prompts.length, 0, 'ComfyUI had not answered yet');
    const interrupted = comfy.waitFor('interrupt');
    release();
    const [body] = await interrupted;
    const [prompt] = comfy.prompts;
    assert.ok(prompt, 'the prompt reached the queue');
    assert.deepEqual(comfy.queueCalls, [{ delete: [prompt.id] }]);
    assert.deepEqual(body, { prompt_id: prompt.id });
    assert.deepEqual(comfy.interrupts, [{ prompt_id: prompt.id }]);
  });

  // The sampler stalls until it is interrupted: the render can only end because the abort was acted on (a
  // render that ignored it would never end; the test's time limit fails it).
  it('an abort mid-run interrupts the prompt on the server and rejects with the reason', {
    timeout: 120_000,
  }, async () => {
    comfy.gpu.stallNode = { node: '6' };
    const controller = new AbortController();
    const reason = new Error('cancelled by the test');
    const ctx = renderContext(controller.signal);
    const job = comfyJob();
    const render = engine().render(job, {
      ...ctx,
      onProgress: (fraction) => {
        ctx.onProgress(fraction);
        if (fraction >= 0.45) controller.abort(reason);
      },
    });
    await assert.rejects(render, (error: unknown) => error === reason);
    const [prompt] = comfy.prompts;
    assert.ok(prompt);
    assert.deepEqual(comfy.queueCalls, [{ delete: [prompt.id] }]);
    assert.deepEqual(comfy.interrupts, [{ prompt_id: prompt.id }]);
    assert.equal(await exists(job.outputPath), false);
    const entry = await comfy.settled(prompt.id);
    const messages = (entry.status as { messages: [string, Json][] }).messages;
    assert.equal(messages.at(-1)?.[0], 'execution_interrupted', 'ComfyUI stopped the run');
  });

  it('past the time limit (the runner aborts with RunStopped timeout) it interrupts the prompt', async () => {
    comfy.gpu.stallNode = { node: '6' };
    const controller = new AbortController();
    const job = comfyJob();
    const limit = new RunStopped('timeout');
    const ctx = renderContext(controller.signal);
    // The deadline passes while the sampler is stuck; the runner then aborts.
    let expired = false;
    Object.defineProperty(ctx, 'deadline', { get: () => (expired ? Date.now() - 1 : Date.now() + 60_000) });
    void comfy.waitFor('stalled').then(() => {
      expired = true;
      controller.abort(limit);
    });
    await assert.rejects(engine().render(job, ctx), (error: unknown) => error === limit);
    const [prompt] = comfy.prompts;
    assert.ok(prompt);
    assert.deepEqual(comfy.interrupts, [{ prompt_id: prompt.id }]);
  });

  it('a prompt ComfyUI answers from its cache (nothing runs, no progress) still gives the video', async () => {
    const first = comfyJob({ duration: 1 });
    await engine().render(first, renderContext());
    const again = comfyJob({ duration: 1 });
    const ctx = renderContext();
    await engine().render(again, ctx);
    await assertContractVideo(again);
    assertProgressRisesToOne(ctx.progress, { strictly: true });
    const [, second] = comfy.prompts;
    assert.ok(second);
    const entry = await comfy.settled(second.id);
    const messages = (entry.status as { messages: [string, Json][] }).messages;
    const cached = messages.find(([type]) => type === 'execution_cached')?.[1].nodes as string[];
    assert.deepEqual(
      [...cached].sort(),
      Object.keys(second.workflow).sort(),
      'every node came from the cache',
    );
    assert.equal(comfy.savedVideos.length, 1, 'no new file was written');
  });

  it('renders an LTX-Video text-to-video workflow to exactly the requested size: 480p 16:9 and 1080p 21:9', async () => {
    const wide = comfyJob({ quality: '480p', ratio: '16:9' });
    await engine({ workflow: LTXV_WORKFLOW }).render(wide, renderContext());
    const wideFacts = await assertContractVideo(wide);
    assert.deepEqual([wideFacts.video?.width, wideFacts.video?.height], [854, 480]);

    const cinema = comfyJob({ quality: '1080p', ratio: '21:9', duration: 1 });
    await engine({ workflow: LTXV_WORKFLOW }).render(cinema, renderContext());
    const cinemaFacts = await assertContractVideo(cinema);
    assert.deepEqual([cinemaFacts.video?.width, cinemaFacts.video?.height], [2520, 1080]);

    const [widePrompt, cinemaPrompt] = comfy.prompts;
    assert.deepEqual(widePrompt?.workflow['6']?.inputs, {
      width: 854,
      height: 480,
      length: 49,
      batch_size: 1,
    });
    assert.deepEqual(cinemaPrompt?.workflow['6']?.inputs, {
      width: 2520,
      height: 1080,
      length: 25,
      batch_size: 1,
    });
    // What ComfyUI returned: LTX-Video's /32 and 8n+1 grid, at CreateVideo's fps, which the engine conformed.
    assert.deepEqual(savedShapes(), [
      { node: '12', width: 832, height: 480, frames: 49, fps: 24 },
      { node: '12', width: 2496, height: 1056, frames: 25, fps: 24 },
    ]);
    const raw = await mp4Facts(join(comfy.outputDir, comfy.savedVideos[1]?.file ?? ''));
    assert.deepEqual([raw.video?.width, raw.video?.height, raw.video?.frames], [2496, 1056, 25]);
    assert.equal(raw.moovBeforeMdat, false, 'ComfyUI does not write faststart files');
  });

  it("the fake ComfyUI refuses prompts as ComfyUI's validate_prompt does", async () => {
    assert.deepEqual((await call('POST', '/prompt', { client_id: 'test' })).json(), {
      error: {
        type: 'no_prompt',
        message: 'No prompt provided',
        details: 'No prompt provided',
        extra_info: {},
      },
      node_errors: {},
    });
    assert.equal((await call('POST', '/prompt', '{"prompt": ')).status, 500, 'invalid JSON is a 500');

    const custom = ltxvPrompt();
    custom['1'] = { class_type: 'LTXVLoader', inputs: { ckpt_name: 'ltx-video-2b-v0.9.5.safetensors' } };
    assert.deepEqual(await refusal(custom), {
      error: {
        type: 'invalid_prompt',
        message: 'Cannot execute because node LTXVLoader does not exist.',
        details: "Node ID '#1'",
        extra_info: {},
      },
      node_errors: {},
    });
    const classless = ltxvPrompt();
    classless['8'] = { inputs: { sampler_name: 'euler' } };
    assert.equal(((await refusal(classless)).error as Json).type, 'invalid_prompt');
    const noOutput = ltxvPrompt();
    delete noOutput['12'];
    assert.equal(((await refusal(noOutput)).error as Json).type, 'prompt_no_outputs');

    const narrow = ltxvPrompt();
    inputsOf(narrow, '6').width = 32;
    const small = await refusal(narrow);
    assert.equal((small.error as Json).type, 'prompt_outputs_failed_validation');
    assert.deepEqual(Object.keys(small.node_errors as Json), ['6']);
    const node6 = (small.node_errors as Record<string, NodeErrors>)['6'];
    assert.equal(node6?.class_type, 'EmptyLTXVLatentVideo');
    assert.deepEqual(node6?.dependent_outputs, ['12']);
    assert.deepEqual(
      node6?.errors.map(({ type, message, details }) => ({ type, message, details })),
      [{ type: 'value_smaller_than_min', message: 'Value 32 smaller than min of 64', details: 'width' }],
    );

    const firstError = async (
      change: (prompt: Record<string, Json>) => void,
      node: string,
    ): Promise<Json> => {
      const prompt = ltxvPrompt();
      change(prompt);
      const errors = (await refusal(prompt)).node_errors as Record<string, NodeErrors>;
      return errors[node]?.errors[0] ?? {};
    };
    const webm = await firstError((p) => Object.assign(inputsOf(p, '12'), { format: 'webm' }), '12');
    assert.equal(webm.type, 'value_not_in_list');
    assert.equal(webm.details, "format: 'webm' not in ['auto', 'mp4']");
    const fast = await firstError((p) => Object.assign(inputsOf(p, '11'), { fps: 121 }), '11');
    assert.equal(fast.message, 'Value 121.0 bigger than max of 120.0');
    const miswired = await firstError((p) => Object.assign(inputsOf(p, '10'), { samples: ['3', 0] }), '10');
    assert.equal(miswired.type, 'return_type_mismatch');
    const seed = await firstError((p) => Object.assign(inputsOf(p, '9'), { noise_seed: 'seven' }), '9');
    assert.equal(seed.type, 'invalid_input_type');
    const noCfg = await firstError((p) => delete inputsOf(p, '9').cfg, '9');
    assert.equal(noCfg.type, 'required_input_missing');
    const loadImage = await refusal({
      '20': { class_type: 'LoadImage', inputs: { image: 'not-uploaded.png' } },
      '21': { class_type: 'SaveImage', inputs: { images: ['20', 0], filename_prefix: 'x' } },
    });
    const image = (loadImage.node_errors as Record<string, NodeErrors>)['20']?.errors[0] ?? {};
    assert.equal(image.details, 'image - Invalid image file: not-uploaded.png');
  });

  it('the fake ComfyUI accepts what ComfyUI ignores, and floors sizes and frames as its nodes do', async () => {
    // Unknown top-level keys, _meta, an undeclared input, and `step`: width 100 is no multiple of 32.
    const odd = ltxvPrompt();
    Object.assign(inputsOf(odd, '6'), { width: 100, height: 70, length: 10, colour: 'blue' });
    inputsOf(odd, '12').filename_prefix = 'video/strict';
    const accepted = await call('POST', '/prompt', {
      prompt: odd,
      client_id: 'test',
      front_end_version: '1.27',
    });
    assert.equal(accepted.status, 200, accepted.text);
    const answer = accepted.json();
    assert.deepEqual(Object.keys(answer).sort(), ['node_errors', 'number', 'prompt_id']);
    assert.deepEqual(answer.node_errors, {});
    const id = String(answer.prompt_id);
    assert.deepEqual((await call('GET', `/history/${id}`)).json(), {}, 'history is empty until it finished');
    const entry = await comfy.settled(id);
    assert.deepEqual((entry.outputs as Json)['12'], {
      images: [{ filename: 'strict_00001_.mp4', subfolder: 'video', type: 'output' }],
      animated: [true],
    });
    assert.deepEqual(savedShapes(), [{ node: '12', width: 96, height: 64, frames: 9, fps: 24 }]);
    const video = await call('GET', '/view?filename=strict_00001_.mp4&subfolder=video&type=output');
    assert.equal(video.status, 200);

    // Cancelling what is not there is a 200 no-op; an unknown history entry is {}; there is no auth.
    assert.equal((await call('POST', '/interrupt')).status, 200);
    assert.equal((await call('POST', '/queue', { delete: ['not-a-prompt'] })).status, 200);
    assert.deepEqual((await call('GET', '/history/not-a-prompt')).json(), {});
    const withKey = await call('GET', '/system_stats', undefined, { authorization: 'Bearer anything' });
    assert.equal(withKey.status, 200);
  });

  it("the fake ComfyUI guards /view, /upload/image and the origin as ComfyUI's server.py does", async () => {
    const noImage = new FormData();
    noImage.append('overwrite', 'true');
    assert.equal((await call('POST', '/upload/image', noImage)).status, 400);
    const upload = new FormData();
    upload.append('image', new Blob([await readFile(images.red)], { type: 'image/png' }), 'direct.png');
    assert.deepEqual((await call('POST', '/upload/image', upload)).json(), {
      name: 'direct.png',
      subfolder: '',
      type: 'input',
    });

    const view = async (query: string): Promise<number> => (await call('GET', `/view?${query}`)).status;
    assert.equal(await view('filename=direct.png&type=input'), 200);
    assert.equal(await view('filename=..%2Fdirect.png&type=input'), 400);
    assert.equal(await view('filename=%2Fetc%2Fpasswd'), 400);
    assert.equal(await view('filename=direct.png&type=models'), 400);
    assert.equal(await view('filename=passwd&subfolder=..%2F..%2F..%2Fetc&type=input'), 403);
    assert.equal(await view('filename=nothing.png&type=input'), 404);
    assert.equal(await view('type=input'), 404);

    // The origin middleware: a loopback Host with an Origin naming another host is 403.
    assert.equal(
      (await call('GET', '/system_stats', undefined, { origin: 'http://evil.example' })).status,
      403,
    );
    const host = new URL(comfy.baseUrl).host;
    assert.equal((await call('GET', '/system_stats', undefined, { origin: `http://${host}` })).status, 200);
  });

  it("the fake ComfyUI reports a prompt over /ws in ComfyUI's order, and from its cache the second time", async () => {
    const clientId = 'order-test';
    const socket = new WebSocket(`${comfy.baseUrl.replace('http', 'ws')}/ws?clientId=${clientId}`);
    const messages: { type: string; data: Json }[] = [];
    let done: (() => void) | undefined;
    socket.on('message', (data, binary) => {
      if (binary) return;
      const message = JSON.parse(data.toString()) as { type: string; data: Json };
      messages.push(message);
      if (message.type === 'executing' && message.data.node === null) done?.();
    });
    await once(socket, 'open');
    const runOnce = async (): Promise<{ types: string[]; id: string }> => {
      messages.length = 0;
      const finished = new Promise<void>((resolve) => {
        done = resolve;
      });
      const prompt = filledWorkflow(LTXV_WORKFLOW);
      inputsOf(prompt, '12').filename_prefix = 'video/order';
      const answer = await call('POST', '/prompt', { prompt, client_id: clientId });
      assert.equal(answer.status, 200, answer.text);
      await finished;
      // progress_state is a newer event the engine does not read; progress comes in runs.
      const types = messages
        .map((m) => m.type)
        .filter((type) => type !== 'progress_state')
        .filter((type, i, all) => type !== 'progress' || all[i - 1] !== 'progress');
      return { types, id: String(answer.json().prompt_id) };
    };
    try {
      const first = await runOnce();
      assert.deepEqual(first.types.slice(0, 4), ['status', 'status', 'execution_start', 'execution_cached']);
      assert.deepEqual(first.types.slice(-4), ['executed', 'execution_success', 'status', 'executing']);
      assert.ok(first.types.includes('progress'), first.types.join(' '));
      const executed = messages.find((m) => m.type === 'executed');
      assert.deepEqual(executed?.data.output, {
        images: [{ filename: 'order_00001_.mp4', subfolder: 'video', type: 'output' }],
        animated: [true],
      });
      assert.deepEqual(messages.at(-1)?.data, { node: null, prompt_id: first.id });

      const second = await runOnce();
      assert.deepEqual(second.types, [
        'status',
        'status',
        'execution_start',
        'execution_cached',
        'executed',
        'execution_success',
        'status',
        'executing',
      ]);
      assert.equal(comfy.savedVideos.length, 1, 'the cached SaveVideo wrote nothing');
    } finally {
      socket.terminate();
    }
  });

  it('rejects a workflow with an unknown placeholder, or not in API format, at construction', async () => {
    const unknown = join(dir, 'unknown-placeholder.json');
    await writeFile(
      unknown,
      JSON.stringify({ '1': { class_type: 'CLIPTextEncode', inputs: { text: '{{prompt}} in {{style}}' } } }),
    );
    assert.throws(
      () => engine({ workflow: unknown }),
      (error: unknown) => {
        assert.ok(error instanceof Error);
        assert.ok(error.message.startsWith(`comfyui engine "ltx": the workflow ${unknown} `), error.message);
        assert.match(error.message, /unknown placeholder \{\{style\}\}/);
        return true;
      },
    );
    const editor = join(dir, 'editor-format.json');
    await writeFile(editor, JSON.stringify({ last_node_id: 9, nodes: [], links: [], version: 0.4 }));
    assert.throws(() => engine({ workflow: editor }), /editor-format\.json is in the editor format/);
    assert.throws(
      () => engine({ workflow: 'no-such-workflow.json' }),
      /no-such-workflow\.json cannot be read/,
    );
    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{ "1": ');
    assert.throws(() => engine({ workflow: broken }), /broken\.json is not valid JSON/);
    assert.throws(() => engine({ output_node: '99' }), /output_node "99" is not a node of the workflow/);
  });

  it('fills placeholders: a numeric one alone becomes a number, inside text it is text', () => {
    const template = WorkflowTemplate.fromData(
      {
        '1': {
          class_type: 'Anything',
          inputs: { seed: '{{ seed }}', label: 'seed {{seed}} at {{fps}} fps', list: ['{{width}}', 3] },
        },
      },
      'inline.json',
    );
    const filled = template.fill(
      new Map<string, string | number>([
        ['seed', 7],
        ['fps', 24],
        ['width', 854],
      ]),
    );
    assert.deepEqual(filled['1']?.inputs, { seed: 7, label: 'seed 7 at 24 fps', list: [854, 3] });
  });

  it('keeps progress going forward over sampler runs and ignores other progress bars', () => {
    const progress = new SamplingProgress(new Set(['5', '6']), 0.9);
    assert.equal(progress.update('5', 2, 4), 0.225);
    assert.equal(progress.update('9', 3, 4), undefined, 'a decode progress bar is not a sampler');
    assert.equal(progress.update('5', 4, 4), 0.45);
    assert.equal(progress.update('6', 1, 4), 0.5625);
    assert.equal(progress.update('6', 1, 4), undefined);
    assert.equal(progress.update('6', 4, 4), 0.9);
  });

  it('check() passes when the server answers and fails when it does not or the workflow is gone', async () => {
    await engine({ api_key: API_KEY }).check(AbortSignal.timeout(5_000));
    assert.equal(comfy.authorizations.at(-1), `Bearer ${API_KEY}`);

    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const down = engine({ base_url: `http://127.0.0.1:${port}`, api_key: API_KEY }, 'down');
    await assert.rejects(down.check(AbortSignal.timeout(5_000)), (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.match(error.message, /^comfyui engine "down": GET \/system_stats failed/);
      assert.ok(!error.message.includes(API_KEY));
      return true;
    });

    const copy = join(dir, 'vanishing-workflow.json');
    await writeFile(copy, await readFile(join(FIXTURES, TEXT_WORKFLOW)));
    const vanishing = engine({ workflow: copy });
    await vanishing.check(AbortSignal.timeout(5_000));
    await rm(copy);
    await assert.rejects(
      vanishing.check(AbortSignal.timeout(5_000)),
      /vanishing-workflow\.json cannot be read/,
    );
  });
});
