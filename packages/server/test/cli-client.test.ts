/**
 * The API client commands of the built `videogen` binary (`generate`, `tasks …`) against a real server:
 * local files uploaded and turned into an MP4 on disk, `--json` output, one-line errors with their code and
 * exit statuses, and no progress bar when the output is not a terminal.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CompletedTask, ProcessingTask, Task } from '@videogen/client';
import { writeTestAudio, writeTestImage } from './helpers/media-fixtures.js';
import { mp4Facts } from './helpers/mp4-facts.js';
import { CLI_PATH, runCli, type ServerProcess, serverEnv, startServer } from './helpers/server-process.js';
import { until } from './helpers/until.js';

/** A carriage return or an escape sequence: what a progress bar would leave in captured output. */
function assertNoTerminalControl(output: string): void {
  assert.ok(!output.includes('\r') && !output.includes('\u001b'), 'no progress bar drawn');
}

describe('videogen generate and tasks (API client commands)', () => {
  let workDir: string;
  let server: ServerProcess;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'videogen-cli-client-'));
    const dataDir = join(workDir, 'data');
    server = await startServer(serverEnv(dataDir));
    const apiKey = await server.firstKey();
    assert.ok(apiKey, 'the first start printed a key');
    env = { ...serverEnv(dataDir), VIDEOGEN_URL: server.url, VIDEOGEN_API_KEY: apiKey };
  });
  after(async () => {
    await server?.stop();
    await rm(workDir, { recursive: true, force: true });
  });

  const videogen = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) =>
    runCli(args, { ...env, ...extraEnv });

  /** Starts `videogen args` without waiting for it: its output so far, and how it ended once it has. */
  function started(args: string[]) {
    const child = spawn(process.execPath, [CLI_PATH, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const ended = once(child, 'close').then(([code]) => ({ code: code as number | null, stdout, stderr }));
    return { stdout: () => stdout, ended };
  }

  it('uploads local images and downloads the image-to-video MP4', async () => {
    const first = join(workDir, 'first.png');
    const last = join(workDir, 'last.png');
    await writeTestImage(first, { width: 320, height: 180, colour: [220, 40, 40] });
    await writeTestImage(last, { width: 320, height: 180, colour: [40, 40, 220] });
    const output = join(workDir, 'transition.mp4');
    const run = await videogen([
      'generate',
      '--prompt',
      'image 1 turns into image 2',
      '--image',
      first,
      '--image',
      last,
      '--fast',
      '--duration',
      '4',
      '--quality',
      '480p',
      '--output',
      output,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `${output}\n`);
    assert.equal(run.stderr, '', 'no progress bar when stderr is not a terminal');
    const facts = await mp4Facts(output);
    assert.ok(Math.abs(facts.duration - 4) < 0.1, `duration ${facts.duration}`);
    assert.equal(facts.video?.width, 854);
    assert.equal(facts.video?.height, 480);
    assert.ok(!existsSync(`${output}.part`));
  });

  it('prints the task and the file as JSON with --json, for a URL or a reference with audio', async () => {
    const image = join(workDir, 'reference.png');
    const audio = join(workDir, 'music.wav');
    await writeTestImage(image, { width: 200, height: 200, colour: [30, 160, 60] });
    await writeTestAudio(audio, { seconds: 2 });
    const output = join(workDir, 'reference.mp4');
    const run = await videogen([
      'generate',
      '--json',
      '-p',
      'image 1 dances to audio 1',
      '--image',
      image,
      '--audio',
      audio,
      '--model',
      'videogen-2.0-fast-reference-to-video',
      '--duration',
      '4',
      '--quality',
      '480p',
      '--aspect-ratio',
      '1:1',
      '--seed',
      '7',
      '-o',
      output,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assertNoTerminalControl(run.stdout);
    const printed = JSON.parse(run.stdout) as { task: CompletedTask; output: string };
    assert.equal(printed.output, output);
    assert.equal(printed.task.status, 'completed');
    assert.equal(printed.task.model, 'videogen-2.0-fast-reference-to-video');
    assert.equal(printed.task.seed, 7);
    assert.equal(printed.task.aspect_ratio, '1:1');
    const facts = await mp4Facts(output);
    assert.equal(facts.video?.width, 480);
    assert.equal(facts.video?.height, 480);
    assert.ok(facts.audio, 'the soundtrack of the audio reference');
  });

  it('gets, lists, watches, cancels and deletes tasks, as text or JSON', async () => {
    const created = await videogen([
      'generate',
      '--no-wait',
      '--json',
      '--prompt',
      'a long one',
      '--duration',
      '15',
      '--quality',
      '1080p',
      '--no-sound',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const task = JSON.parse(created.stdout) as Task;
    assert.equal(task.model, 'videogen-2.0-text-to-video', 'no assets: the text mode');
    assert.equal(task.generate_audio, false, '--no-sound');
    assert.equal(task.status, 'pending');

    const got = await videogen(['tasks', 'get', task.id, '--json']);
    assert.equal(got.code, 0, got.stderr);
    assert.equal((JSON.parse(got.stdout) as Task).id, task.id);
    const shown = await videogen(['tasks', 'get', task.id]);
    assert.match(shown.stdout, new RegExp(`^id: +${task.id}$`, 'm'));
    assert.match(shown.stdout, /^model: +videogen-2\.0-text-to-video$/m);

    const listed = await videogen(['tasks', 'list', '--json', '--limit', '2']);
    assert.equal(listed.code, 0, listed.stderr);
    const tasks = JSON.parse(listed.stdout) as Task[];
    assert.equal(tasks.length, 2);
    assert.equal(tasks[0]?.id, task.id, 'newest first');
    const all = JSON.parse((await videogen(['tasks', 'list', '--json', '--all'])).stdout) as Task[];
    assert.ok(all.length >= 3);
    const table = await videogen(['tasks', 'list', '--status', 'completed']);
    assert.match(table.stdout, /^ID +MODEL +STATUS +PROGRESS +CREATED$/m);
    assert.doesNotMatch(table.stdout, new RegExp(task.id));

    // Cancelled once the watch has printed the task's state: then its output shows the task before and after.
    const watching = started(['tasks', 'watch', task.id]);
    await until(() => /^(pending|processing) \d+%$/m.test(watching.stdout()), 'the watch printing the task');
    const cancelled = await videogen(['tasks', 'cancel', task.id, '--json']);
    assert.equal(cancelled.code, 0, cancelled.stderr);
    assert.equal((JSON.parse(cancelled.stdout) as Task).status, 'failed');
    const watched = await watching.ended;
    assert.equal(watched.code, 1, 'a task that fails ends the watch with status 1');
    assertNoTerminalControl(watched.stdout);
    assertNoTerminalControl(watched.stderr);
    assert.match(watched.stdout, /^(pending|processing) \d+%$/m);
    assert.match(watched.stdout, /^failed \d+%$/m);
    assert.match(watched.stderr, /^videogen: cancelled: /);

    const again = await videogen(['tasks', 'cancel', task.id]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^videogen: task_not_cancellable: /);
    const deleted = await videogen(['tasks', 'delete', task.id]);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal(deleted.stdout, `deleted ${task.id}\n`);
  });

  it('follows a task with tasks watch --json, one JSON line per change', async () => {
    const created = await videogen(['generate', '--no-wait', '--prompt', 'a kite', '--duration', '4']);
    const taskId = created.stdout.trim();
    assert.match(taskId, /^task-unified-/);
    const watched = await videogen(['tasks', 'watch', taskId, '--json']);
    assert.equal(watched.code, 0, watched.stderr);
    const states = watched.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Task);
    assert.equal(states.at(-1)?.status, 'completed');
    assert.equal(watched.stderr, '');
  });

  it('reports API errors as one line with their code, and exit status 1', async () => {
    const badKey = await videogen(['tasks', 'list'], {
      VIDEOGEN_API_KEY: 'vg_dev_00000000000000000000000000000000',
    });
    assert.equal(badKey.code, 1);
    assert.equal(badKey.stderr, 'videogen: invalid_api_key: The API key is unknown or has been revoked.\n');
    assert.equal(badKey.stdout, '');

    const flagKey = await videogen(['tasks', 'get', 'task-unified-x', '--api-key', 'vg_dev_nope']);
    assert.equal(flagKey.stderr, 'videogen: invalid_api_key: The API key is unknown or has been revoked.\n');

    const unknown = await videogen(['tasks', 'get', 'task-unified-does-not-exist']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^videogen: task_not_found: .+\n$/);

    const refused = await videogen([
      'generate',
      '--prompt',
      'x',
      '--image',
      'https://example.com/a.png',
      '--mode',
      'text',
    ]);
    assert.equal(refused.code, 2, 'a text model given an image is a usage error');
    assert.match(refused.stderr, /^videogen: videogen-2\.0-text-to-video takes no --image/);

    // The model's range is the server's: its refusal names it.
    const tooLong = await videogen(['generate', '--prompt', 'x', '--duration', '30']);
    assert.equal(tooLong.code, 1);
    assert.match(tooLong.stderr, /^videogen: invalid_parameter: duration: .*15\.\n$/);

    const missingFile = await videogen(['generate', '--prompt', 'x', '--image', join(workDir, 'nope.png')]);
    assert.equal(missingFile.code, 1);
    assert.match(missingFile.stderr, /^videogen: cannot read .*nope\.png: no such file\n$/);

    const unreachable = await videogen(['tasks', 'list', '--url', 'http://127.0.0.1:9']);
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /^videogen: connection_error: .+\n$/);
  });

  it('refuses bad flags and missing configuration with a usage error, exit status 2', async () => {
    const badFlag = await videogen(['generate', '--prompt', 'x', '--colour', 'red']);
    assert.equal(badFlag.code, 2);
    assert.match(badFlag.stderr, /^videogen: Unknown option '--colour'/);
    assert.match(badFlag.stderr, /Usage: videogen/);

    const badDuration = await videogen(['generate', '--prompt', 'x', '--duration', '4.5']);
    assert.equal(badDuration.code, 2);
    assert.match(badDuration.stderr, /^videogen: --duration must be a whole number of seconds/);

    const noKey = await videogen(['tasks', 'list'], { VIDEOGEN_API_KEY: '' });
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /^videogen: no API key: set VIDEOGEN_API_KEY or pass --api-key/);

    const noAction = await videogen(['tasks']);
    assert.equal(noAction.code, 2);
  });
});

/**
 * A stand-in for the API, for what a real server will not do on demand: a video that downloads slowly (to
 * interrupt), one that is missing, a task that never ends, and a proxy's HTML error page. The prompt chooses.
 */
class FakeApi {
  private readonly server: Server;
  /** Answers held open, ended when the fake closes. */
  private readonly held = new Set<ServerResponse>();
  /** The path of every request, in order of arrival. */
  readonly paths: string[] = [];
  url = '';

  constructor() {
    this.server = createServer((request, response) => {
      const path = new URL(request.url ?? '/', 'http://fake').pathname;
      this.paths.push(path);
      if (request.method === 'POST' && path === '/v1/videos/generations') {
        let body = '';
        request.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        request.on('end', () => {
          const prompt = (JSON.parse(body) as { prompt: string }).prompt;
          this.json(response, 200, this.task(`task-unified-${prompt}`, 'processing'));
        });
        return;
      }
      const events = /^\/v1\/tasks\/task-unified-([a-z-]+)\/events$/.exec(path);
      if (events?.[1]) {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        const name = events[1];
        const final = name !== 'never-ends';
        const task = this.task(`task-unified-${name}`, final ? 'completed' : 'processing');
        response.write(`event: task\nid: 1\ndata: ${JSON.stringify(task)}\n\n`);
        if (final) response.end();
        else this.held.add(response);
        return;
      }
      if (path === '/video/slow.mp4') {
        response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(1 << 24) });
        response.write(Buffer.alloc(64 * 1024));
        this.held.add(response);
        return;
      }
      if (path === '/v1/tasks/task-unified-behind-a-proxy') {
        response.writeHead(413, { 'content-type': 'text/html' });
        response.end(
          '<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n' +
            '<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n',
        );
        return;
      }
      this.json(response, 404, { error: { code: 'not_found', message: `no ${path}` } });
    });
  }

  private task(id: string, status: 'processing' | 'completed'): Task {
    const common = {
      id,
      object: 'video.generation.task',
      model: 'videogen-2.0-text-to-video',
      created_at: 1763812345,
      updated_at: 1763812346,
      duration: 5,
      quality: '720p',
      aspect_ratio: '16:9',
      seed: 1,
      return_last_frame: false,
      generate_audio: true,
      usage: { video_seconds: 5 },
    } as const;
    if (status === 'processing') {
      return {
        ...common,
        status,
        progress: 40,
        task_info: { can_cancel: true, video_duration: 5 },
      } satisfies ProcessingTask;
    }
    const video = id.replace('task-unified-', '');
    return {
      ...common,
      task_info: { can_cancel: false, video_duration: 5 },
      status,
      progress: 100,
      completed_at: 1763812350,
      results: [`${this.url}/video/${video}.mp4`],
    } satisfies CompletedTask;
  }

  private json(response: ServerResponse, status: number, body: unknown): void {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    for (const response of this.held) response.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('videogen generate against a stand-in API: interruptions and failures', () => {
  let workDir: string;
  let api: FakeApi;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'videogen-cli-fake-'));
    api = new FakeApi();
    const url = await api.listen();
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      VIDEOGEN_URL: url,
      VIDEOGEN_API_KEY: 'vg_dev_x',
    };
  });
  after(async () => {
    await api?.close();
    await rm(workDir, { recursive: true, force: true });
  });

  /** Starts `videogen args`, sends SIGINT once `ready()` holds, and answers how it ended. */
  async function interrupted(args: string[], ready: () => boolean) {
    const child = spawn(process.execPath, [CLI_PATH, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const closed = once(child, 'close');
    await until(ready, `videogen ${args.join(' ')} getting ready`, { intervalMs: 25 }).catch(
      (error: Error) => {
        child.kill('SIGKILL');
        throw new Error(`${error.message}; stderr: ${stderr}`);
      },
    );
    child.kill('SIGINT');
    const [code, signal] = (await closed) as [number | null, NodeJS.Signals | null];
    return { code, signal, stdout, stderr };
  }

  it('removes the partial download when interrupted with Ctrl-C, and exits with 130', async () => {
    const output = join(workDir, 'slow.mp4');
    const run = await interrupted(['generate', '-p', 'slow', '-o', output], () =>
      existsSync(`${output}.part`),
    );
    assert.equal(run.signal, null, 'it exits by itself, having cleaned up');
    assert.equal(run.code, 130);
    assert.ok(!existsSync(`${output}.part`), 'no partial video left behind');
    assert.ok(!existsSync(output));
    assert.equal(run.stdout, '');
    assert.equal(run.stderr, 'videogen: interrupted\n');
  });

  it('says which task goes on when interrupted while waiting', async () => {
    // Interrupted once it follows the task it created: the task's events are what it waits on.
    const run = await interrupted(['generate', '-p', 'never-ends', '--json'], () =>
      api.paths.includes('/v1/tasks/task-unified-never-ends/events'),
    );
    assert.equal(run.code, 130);
    assert.equal(run.stdout, '', 'nothing on stdout, not even with --json');
    assert.equal(
      run.stderr,
      'videogen: interrupted; task task-unified-never-ends goes on (videogen tasks cancel task-unified-never-ends)\n',
    );
  });

  it('fails a missing video in one line, leaving no file', async () => {
    const output = join(workDir, 'missing.mp4');
    const run = await runCli(['generate', '-p', 'missing', '-o', output], env);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^videogen: download_failed: HTTP 404 for the video at http:\S+\n$/);
    assert.equal(run.stdout, '');
    assert.ok(!existsSync(output) && !existsSync(`${output}.part`));
  });

  it('finds the server by VIDEOGEN_URL, --url, or the local port VIDEOGEN_PORT; the former names still work, with a warning', async () => {
    const { VIDEOGEN_URL: url, ...withoutUrl } = env;
    const port = new URL(url ?? '').port;
    const unreachable = 'http://127.0.0.1:9';
    const created = 'task-unified-found\n';
    const cases: { env: NodeJS.ProcessEnv; args?: string[]; warning?: string }[] = [
      { env },
      { env: { ...withoutUrl, VIDEOGEN_PORT: port } },
      { env: { ...env, VIDEOGEN_PORT: '9' } },
      { env: { ...withoutUrl, VIDEOGEN_URL: unreachable }, args: ['--url', url ?? ''] },
      {
        env: { ...withoutUrl, VIDEOGEN_BASE_URL: url },
        warning: 'videogen: warning: VIDEOGEN_BASE_URL is deprecated; use VIDEOGEN_URL\n',
      },
      {
        env: { ...env, VIDEOGEN_BASE_URL: unreachable },
        warning: 'videogen: warning: VIDEOGEN_BASE_URL is ignored: VIDEOGEN_URL is set\n',
      },
      {
        env: withoutUrl,
        args: ['--base-url', url ?? ''],
        warning: 'videogen: warning: --base-url is deprecated; use --url\n',
      },
    ];
    for (const { env: caseEnv, args = [], warning = '' } of cases) {
      const run = await runCli(['generate', '-p', 'found', '--no-wait', ...args], caseEnv);
      const described = JSON.stringify({ caseEnv, args });
      assert.equal(run.code, 0, `${described}: ${run.stderr}`);
      assert.equal(run.stdout, created, described);
      assert.equal(run.stderr, warning, described);
    }

    const badPort = await runCli(['tasks', 'list'], { ...withoutUrl, VIDEOGEN_PORT: 'http' });
    assert.equal(badPort.code, 2);
    assert.match(
      badPort.stderr,
      /^videogen: VIDEOGEN_PORT=http is not a port from 1 to 65535; set VIDEOGEN_URL/,
    );
  });

  it("reports a proxy's HTML error page in one line", async () => {
    const run = await runCli(['tasks', 'get', 'task-unified-behind-a-proxy'], env);
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      'videogen: unexpected_response: HTTP 413: <html> <head><title>413 Request Entity Too Large</title></head> ' +
        '<body> <center><h1>413 Request Entity Too Large</h1></center> <hr><center>nginx</center> </body> </html>\n',
    );
  });
});
