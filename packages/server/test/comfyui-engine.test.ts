import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { WebSocketServer, type WebSocket as WsSocket } from 'ws';
import { ComfyUiEngine } from '../src/engines/comfyui/comfyui-engine.js';
import type { ComfyUiOptions } from '../src/engines/comfyui/comfyui-options.js';
import { SamplingProgress } from '../src/engines/comfyui/sampling-progress.js';
import { WorkflowTemplate } from '../src/engines/comfyui/workflow-template.js';
import { TaskFailure } from '../src/errors.js';
import { RunStopped } from '../src/runner/run-task.js';
import { writeTestImage, writeTestVideo } from './helpers/media-fixtures.js';
import {
  assertContractVideo,
  assertProgressRisesToOne,
  jobMaker,
  renderContext,
} from './helpers/render-jobs.js';

const FIXTURES = fileURLToPath(new URL('../../test/fixtures/', import.meta.url));
const TEXT_WORKFLOW = 'comfyui-text-workflow.json';
const IMAGE_WORKFLOW = 'comfyui-image-workflow.json';
const API_KEY = 'sk-comfy-very-secret-key';

type Json = Record<string, unknown>;
/** `vanish`: the prompt is accepted, then dropped from the queue without running (deleted by someone). */
type Behaviour = 'success' | 'execution_error' | 'refuse' | 'hang' | 'vanish';

interface QueuedPrompt {
  readonly id: string;
  readonly clientId: string;
  readonly workflow: Record<string, { class_type: string; inputs: Json }>;
}

/** A fake ComfyUI from its public API: uploads, /prompt, the websocket, /history, /view, /interrupt, /queue. */
class FakeComfyUi {
  readonly server: Server;
  readonly sockets = new WebSocketServer({ noServer: true });
  readonly clients = new Map<string, WsSocket>();
  readonly uploads = new Map<string, Buffer>();
  readonly prompts: QueuedPrompt[] = [];
  readonly history = new Map<string, Json>();
  /** Prompts queued or running, as `GET /queue` lists them. */
  readonly queued = new Set<string>();
  readonly interrupts: Json[] = [];
  readonly queueCalls: Json[] = [];
  readonly authorizations: (string | undefined)[] = [];
  readonly socketAuthorizations: (string | undefined)[] = [];
  behaviour: Behaviour = 'success';
  refuseSockets = false;
  /** Closes the prompt's websocket after the first sampler. */
  dropSockets = false;
  /** Answers 401 to calls without this bearer token, as an authenticating proxy would. */
  requiredKey: string | undefined;
  /** How long `/prompt` takes to answer. */
  queueDelayMs = 0;
  /** Where the uploaded files go, as ComfyUI's `/upload/image` says it. */
  uploadSubfolder = '';
  videoPath = '';
  #interrupted: (() => void) | undefined;

  constructor() {
    this.server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
    this.server.on('upgrade', (req, socket, head) => {
      const url = new URL(req.url ?? '/', 'http://comfy.test');
      const unauthorized = this.requiredKey && req.headers.authorization !== `Bearer ${this.requiredKey}`;
      if (url.pathname !== '/ws' || this.refuseSockets || unauthorized) {
        socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
        return;
      }
      this.socketAuthorizations.push(req.headers.authorization);
      this.sockets.handleUpgrade(req, socket, head, (ws) => {
        const sid = url.searchParams.get('clientId') ?? randomUUID();
        this.clients.set(sid, ws);
        ws.send(
          JSON.stringify({ type: 'status', data: { status: { exec_info: { queue_remaining: 0 } }, sid } }),
        );
        // A binary preview frame, as samplers with previews send.
        ws.send(Buffer.from([0, 0, 0, 1, 0xff, 0xd8, 0xff]));
      });
    });
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  reset(): void {
    this.behaviour = 'success';
    this.refuseSockets = false;
    this.dropSockets = false;
    this.queueDelayMs = 0;
    this.requiredKey = undefined;
    this.uploadSubfolder = '';
    this.uploads.clear();
    this.prompts.length = 0;
    this.interrupts.length = 0;
    this.queueCalls.length = 0;
    this.authorizations.length = 0;
    this.socketAuthorizations.length = 0;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://comfy.test');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    this.authorizations.push(req.headers.authorization);
    const json = (status: number, value: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    const route = `${req.method} ${url.pathname}`;
    if (this.requiredKey && req.headers.authorization !== `Bearer ${this.requiredKey}`) {
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end('401 Unauthorized');
      return;
    }
    if (route === 'GET /system_stats') return json(200, { system: { os: 'posix' }, devices: [] });
    if (route === 'POST /upload/image') {
      const form = await new Response(body, {
        headers: { 'content-type': req.headers['content-type'] ?? '' },
      }).formData();
      const image = form.get('image');
      assert.ok(image && typeof image !== 'string', 'the upload has an image file');
      assert.equal(form.get('overwrite'), 'true');
      assert.equal(form.get('type'), 'input');
      const stored = this.uploadSubfolder ? `${this.uploadSubfolder}/${image.name}` : image.name;
      this.uploads.set(stored, Buffer.from(await image.arrayBuffer()));
      return json(200, { name: image.name, subfolder: this.uploadSubfolder, type: 'input' });
    }
    if (route === 'POST /prompt') await delay(this.queueDelayMs);
    if (route === 'POST /prompt') return this.#queue(JSON.parse(body.toString()) as Json, json);
    const historyMatch = /^\/history\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && historyMatch) {
      const id = decodeURIComponent(historyMatch[1] ?? '');
      const entry = this.history.get(id);
      return json(200, entry ? { [id]: entry } : {});
    }
    if (route === 'GET /view') {
      const { filename, subfolder, type } = Object.fromEntries(url.searchParams);
      if (filename !== 'videogen_00001.mp4' || subfolder !== 'videos' || type !== 'output') {
        return json(404, { error: 'not found' });
      }
      res.writeHead(200, { 'content-type': 'video/mp4' });
      res.end(await readFile(this.videoPath));
      return;
    }
    if (route === 'POST /interrupt') {
      this.interrupts.push(body.length > 0 ? (JSON.parse(body.toString()) as Json) : {});
      this.#interrupted?.();
      res.end();
      return;
    }
    if (route === 'GET /queue') {
      const items = [...this.queued].map((id, i) => [i, id, {}, {}, []]);
      return json(200, { queue_running: items.slice(0, 1), queue_pending: items.slice(1) });
    }
    if (route === 'POST /queue') {
      this.queueCalls.push(JSON.parse(body.toString()) as Json);
      res.end();
      return;
    }
    json(404, { error: `no route ${route}` });
  }

  #queue(request: Json, json: (status: number, value: unknown) => void): void {
    const workflow = request.prompt as QueuedPrompt['workflow'];
    const text = JSON.stringify(workflow);
    assert.ok(!text.includes('{{'), `every placeholder was filled: ${text}`);
    for (const node of Object.values(workflow)) {
      if ('noise_seed' in node.inputs)
        assert.equal(typeof node.inputs.noise_seed, 'number', 'the seed is a number');
    }
    if (this.behaviour === 'refuse') {
      json(400, {
        error: {
          type: 'prompt_outputs_failed_validation',
          message: 'Prompt outputs failed validation',
          details: '',
          extra_info: {},
        },
        node_errors: {
          '1': {
            errors: [
              {
                type: 'value_not_in_list',
                message: 'Value not in list',
                details: "ckpt_name: 'wan2.2_t2v_14B_fp8.safetensors' not in ['sd15.safetensors']",
                extra_info: {},
              },
            ],
            dependent_outputs: ['9', '12'],
            class_type: 'CheckpointLoaderSimple',
          },
        },
      });
      return;
    }
    const prompt: QueuedPrompt = { id: randomUUID(), clientId: String(request.client_id), workflow };
    this.prompts.push(prompt);
    json(200, { prompt_id: prompt.id, number: this.prompts.length, node_errors: {} });
    if (this.behaviour === 'vanish') return;
    this.queued.add(prompt.id);
    void this.#run(prompt);
  }

  /** Runs a prompt: two sampler nodes of four steps each, reported over the prompt's client's socket. */
  async #run(prompt: QueuedPrompt): Promise<void> {
    const prompt_id = prompt.id;
    const send = (type: string, data: Json): void => {
      this.clients.get(prompt.clientId)?.send(JSON.stringify({ type, data: { ...data, prompt_id } }));
    };
    const finish = (status: Json, outputs: Json): void => {
      this.queued.delete(prompt_id);
      this.history.set(prompt_id, { prompt: [1, prompt_id, prompt.workflow, {}, []], outputs, status });
      send('executing', { node: null });
    };
    send('execution_start', { timestamp: Date.now() });
    send('execution_cached', { nodes: [] });
    for (const node of ['5', '6']) {
      send('executing', { node, display_node: node });
      for (let value = 1; value <= 4; value++) {
        send('progress', { value, max: 4, node });
        await delay(5);
      }
      if (this.dropSockets) this.clients.get(prompt.clientId)?.terminate();
      if (this.behaviour === 'hang') {
        await new Promise<void>((resolve) => {
          this.#interrupted = resolve;
        });
        const data = { node_id: node, node_type: 'KSamplerAdvanced', executed: [] };
        send('execution_interrupted', data);
        return finish(
          {
            status_str: 'error',
            completed: false,
            messages: [['execution_interrupted', { ...data, prompt_id }]],
          },
          {},
        );
      }
      if (this.behaviour === 'execution_error' && node === '6') {
        const data = {
          node_id: '6',
          node_type: 'KSamplerAdvanced',
          executed: ['1', '2', '3', '4', '5'],
          exception_message: 'Allocation on device 0 would exceed allowed memory. (out of memory)',
          exception_type: 'torch.OutOfMemoryError',
          traceback: ['...'],
          current_inputs: {},
          current_outputs: {},
        };
        send('execution_error', data);
        return finish(
          { status_str: 'error', completed: false, messages: [['execution_error', { ...data, prompt_id }]] },
          {},
        );
      }
    }
    const outputs = {
      '9': { images: [{ filename: 'videogen-preview_00001_.png', subfolder: '', type: 'output' }] },
      '12': {
        gifs: [
          {
            filename: 'videogen_00001.mp4',
            subfolder: 'videos',
            type: 'output',
            format: 'video/h264-mp4',
            frame_rate: 24,
          },
        ],
      },
    };
    send('executed', { node: '12', display_node: '12', output: outputs['12'] });
    send('execution_success', { timestamp: Date.now() });
    finish({ status_str: 'success', completed: true, messages: [] }, outputs);
  }

  async close(): Promise<void> {
    for (const ws of this.clients.values()) ws.terminate();
    this.sockets.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let dir: string;
let comfy: FakeComfyUi;
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
    { baseDir: FIXTURES },
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

describe('comfyui engine', () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'videogen-comfyui-'));
    comfy = new FakeComfyUi();
    comfy.server.listen(0, '127.0.0.1');
    await once(comfy.server, 'listening');
    // 30 fps, a 4:3 frame and half the duration: the engine's conform step has work to do.
    comfy.videoPath = join(dir, 'comfy-output.mp4');
    images.red = join(dir, 'red.png');
    images.blue = join(dir, 'blue.jpg');
    await Promise.all([
      writeTestVideo(comfy.videoPath, { width: 320, height: 240, seconds: 1, fps: 30 }),
      writeTestImage(images.red, { width: 320, height: 180, colour: [220, 30, 40] }),
      writeTestImage(images.blue, { width: 320, height: 180, colour: [30, 60, 220] }),
    ]);
  });

  after(async () => {
    await comfy.close();
    await rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => comfy.reset());

  it('runs a text workflow: placeholders filled, progress over both samplers, the video conformed', async () => {
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
    comfy.uploadSubfolder = 'videogen';
    const job = comfyJob({ model: 'videogen-2.0-image-to-video', images: [images.red, images.blue] });
    await engine({ workflow: IMAGE_WORKFLOW }).render(job, renderContext());
    await assertContractVideo(job);

    const [prompt] = comfy.prompts;
    assert.ok(prompt);
    const first = prompt.workflow['2']?.inputs.image;
    const last = prompt.workflow['3']?.inputs.image;
    assert.equal(typeof first, 'string');
    assert.match(String(first), /^videogen\/videogen-task-comfy-\d+-image-1\.png$/);
    assert.match(String(last), /^videogen\/videogen-task-comfy-\d+-image-2\.jpg$/);
    assert.deepEqual(comfy.uploads.get(String(first)), await readFile(images.red));
    assert.deepEqual(comfy.uploads.get(String(last)), await readFile(images.blue));
    assert.equal(comfy.uploads.size, 2);
    assert.equal(prompt.workflow['5']?.inputs.length, 49);
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
    comfy.behaviour = 'execution_error';
    const job = comfyJob();
    await assert.rejects(
      engine({ api_key: API_KEY }).render(job, renderContext()),
      failure(
        'upstream_error',
        /^comfyui engine "ltx": the workflow failed in node 6 \(KSamplerAdvanced\): torch\.OutOfMemoryError: .*out of memory/,
      ),
    );
    assert.equal(await exists(job.outputPath), false);
  });

  it('a workflow ComfyUI refuses (HTTP 400 with node_errors) is upstream_error naming the problem', async () => {
    comfy.behaviour = 'refuse';
    await assert.rejects(
      engine({ api_key: API_KEY }).render(comfyJob(), renderContext()),
      failure(
        'upstream_error',
        /refused the workflow: Prompt outputs failed validation; node 1 \(CheckpointLoaderSimple\): Value not in list: ckpt_name: 'wan2\.2_t2v_14B_fp8\.safetensors' not in/,
      ),
    );
  });

  it('a proxy refusing the key is upstream_error, and the key is not in the message', async () => {
    comfy.requiredKey = API_KEY;
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

  it('falls back to polling /history when the websocket is refused', async () => {
    comfy.refuseSockets = true;
    const job = comfyJob();
    const ctx = renderContext();
    await engine().render(job, ctx);
    await assertContractVideo(job);
    assertProgressRisesToOne(ctx.progress, { strictly: true });
    assert.deepEqual(comfy.socketAuthorizations, [], 'no socket was accepted');

    comfy.behaviour = 'execution_error';
    await assert.rejects(
      engine().render(comfyJob(), renderContext()),
      failure('upstream_error', /failed in node 6 \(KSamplerAdvanced\): torch\.OutOfMemoryError/),
    );
  });

  it('falls back to polling /history when the websocket drops mid-run', async () => {
    comfy.dropSockets = true;
    const job = comfyJob({ duration: 1 });
    const ctx = renderContext();
    await engine().render(job, ctx);
    await assertContractVideo(job);
    assertProgressRisesToOne(ctx.progress, { strictly: true });
    assert.equal(comfy.socketAuthorizations.length, 1, 'the socket was open at first');
  });

  it('a prompt that leaves the queue without a result is upstream_error, with or without the socket', async () => {
    comfy.behaviour = 'vanish';
    const pattern = /^comfyui engine "ltx": prompt [0-9a-f-]+ left the ComfyUI queue without a result/;
    await assert.rejects(engine().render(comfyJob(), renderContext()), failure('upstream_error', pattern));
    comfy.refuseSockets = true;
    await assert.rejects(engine().render(comfyJob(), renderContext()), failure('upstream_error', pattern));
  });

  it('an abort while the prompt is being queued still cancels it once ComfyUI names it', async () => {
    comfy.behaviour = 'hang';
    comfy.queueDelayMs = 800;
    const controller = new AbortController();
    const reason = new Error('cancelled while queueing');
    const render = engine().render(comfyJob(), renderContext(controller.signal));
    let abortedAt = 0;
    setTimeout(() => {
      abortedAt = Date.now();
      controller.abort(reason);
    }, 100);
    await assert.rejects(render, (error: unknown) => error === reason);
    assert.ok(Date.now() - abortedAt < 400, 'it does not wait for the queue request');
    assert.equal(comfy.prompts.length, 0, 'ComfyUI had not answered yet');
    for (let waited = 0; comfy.interrupts.length === 0 && waited < 3_000; waited += 20) await delay(20);
    const [prompt] = comfy.prompts;
    assert.ok(prompt, 'the prompt reached the queue');
    assert.deepEqual(comfy.queueCalls, [{ delete: [prompt.id] }]);
    assert.deepEqual(comfy.interrupts, [{ prompt_id: prompt.id }]);
  });

  it('an abort mid-run interrupts the prompt on the server and rejects with the reason', async () => {
    comfy.behaviour = 'hang';
    const controller = new AbortController();
    const reason = new Error('cancelled by the test');
    const ctx = renderContext(controller.signal);
    const job = comfyJob();
    const started = Date.now();
    const render = engine().render(job, {
      ...ctx,
      onProgress: (fraction) => {
        ctx.onProgress(fraction);
        if (fraction >= 0.45) controller.abort(reason);
      },
    });
    await assert.rejects(render, (error: unknown) => error === reason);
    assert.ok(Date.now() - started < 5_000, 'it stops promptly');
    const [prompt] = comfy.prompts;
    assert.ok(prompt);
    assert.deepEqual(comfy.queueCalls, [{ delete: [prompt.id] }]);
    assert.deepEqual(comfy.interrupts, [{ prompt_id: prompt.id }]);
    assert.equal(await exists(job.outputPath), false);
  });

  it('past the time limit (the runner aborts with RunStopped timeout) it interrupts the prompt', async () => {
    comfy.behaviour = 'hang';
    const controller = new AbortController();
    const job = comfyJob();
    const limit = new RunStopped('timeout');
    const timer = setTimeout(() => controller.abort(limit), 800);
    try {
      await assert.rejects(
        engine().render(job, renderContext(controller.signal, { deadlineMs: 800 })),
        (error: unknown) => error === limit,
      );
    } finally {
      clearTimeout(timer);
    }
    const [prompt] = comfy.prompts;
    assert.ok(prompt);
    assert.deepEqual(comfy.interrupts, [{ prompt_id: prompt.id }]);
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
