#!/usr/bin/env node
/**
 * The packaged server, end to end, as a production host gets it (`npm run check:package`; .ci/run runs it):
 *
 *   1. `npm pack -w videogen` (its prepack builds dist/, bundles @videogen/client and writes the shrinkwrap);
 *   2. deploy/install-server.sh installs the tarball into an empty folder, runtime dependencies only: the script
 *      the container image's runtime stage runs (Dockerfile);
 *   3. from that folder, and with no checkout on its way (a working directory and data directory of its own),
 *      `videogen keys create` and `videogen serve`; a text-to-video task is created, polled until it is
 *      completed, its MP4 downloaded and probed with the ffprobe the installed package carries; the dashboard
 *      and the API reference pages are served from the installed files.
 *
 * Any failure exits non-zero; nothing is skipped. Prints `N passed, N failed` at the end.
 *   VIDEOGEN_KEEP_CHECK_DIR=1   keep the temporary folder (the tarball, the install, the data, the video)
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'videogen-package-'));
const prefix = join(work, 'install');
const home = join(work, 'home');
mkdirSync(home);
const checks = { passed: 0, failed: 0 };

function check(name, ok, detail = '') {
  if (ok) checks.passed += 1;
  else checks.failed += 1;
  console.log(`${ok ? 'ok' : 'not ok'} - ${name}${detail ? `: ${detail}` : ''}`);
  if (!ok) throw new Error(`${name} failed`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(what, probe, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

let server;
try {
  const started = Date.now();
  execFileSync('npm', ['pack', '-w', 'videogen', '--pack-destination', work], {
    cwd: root,
    stdio: 'inherit',
  });
  const [tarball] = readdirSync(work).filter((name) => /^videogen-.*\.tgz$/.test(name));
  check('npm pack -w videogen wrote a tarball', tarball !== undefined, tarball);
  const files = execFileSync('tar', ['-tzf', join(work, tarball)], { encoding: 'utf8' }).split('\n');
  for (const file of [
    'package/dist/src/cli/main.js',
    'package/node_modules/@videogen/client/dist/src/index.js',
    'package/npm-shrinkwrap.json',
    'package/dashboard/index.html',
    'package/api-reference/index.html',
  ]) {
    check(`the tarball holds ${file.replace(/^package\//, '')}`, files.includes(file));
  }
  check('the tarball holds no tests', !files.some((file) => file.startsWith('package/dist/test/')));

  // JOBS: node-gyp builds better-sqlite3 on every core.
  execFileSync('sh', [join(root, 'deploy', 'install-server.sh'), join(work, tarball), prefix], {
    cwd: work,
    stdio: 'inherit',
    env: { ...process.env, JOBS: 'max' },
  });
  console.log(`# packed and installed in ${Math.round((Date.now() - started) / 1000)} s`);
  const videogen = join(prefix, 'node_modules', '.bin', 'videogen');
  const installed = join(prefix, 'node_modules', 'videogen');
  const devDependencies = ['typescript', '@biomejs/biome', 'fast-check', 'playwright-core', 's3rver'];
  const present = devDependencies.filter((name) => readdirSync(join(prefix, 'node_modules')).includes(name));
  check('no dev dependency was installed', present.length === 0, present.join(', '));

  const port = await freePort();
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    VIDEOGEN_HOST: '127.0.0.1',
    VIDEOGEN_PORT: String(port),
    VIDEOGEN_DATA_DIR: join(work, 'data'),
  };
  const key = execFileSync(videogen, ['keys', 'create', '--name', 'package-check'], {
    cwd: home,
    env,
    encoding: 'utf8',
  })
    .split('\n')
    .find((line) => line.startsWith('vg_'));
  check('videogen keys create made a key', key !== undefined);

  server = spawn(videogen, ['serve'], { cwd: home, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = [];
  server.stdout.on('data', (chunk) => output.push(chunk));
  server.stderr.on('data', (chunk) => output.push(chunk));
  const base = `http://127.0.0.1:${port}`;
  const exited = once(server, 'exit');
  const ready = await Promise.race([
    waitFor(
      '/readyz',
      async () => ((await fetch(`${base}/readyz`)).status === 200 ? true : undefined),
      60_000,
    ),
    exited.then(([code]) => {
      throw new Error(`videogen serve exited (${code}): ${Buffer.concat(output).toString()}`);
    }),
  ]);
  check('videogen serve answers /readyz', ready);
  check('/healthz answers 200', (await fetch(`${base}/healthz`)).status === 200);
  const dashboard = await fetch(`${base}/dashboard`);
  check('the dashboard is served', dashboard.status === 200 && (await dashboard.text()).includes('<html'));
  const reference = await fetch(`${base}/docs/`);
  check('the API reference is served', reference.status === 200);

  const auth = { authorization: `Bearer ${key}` };
  const created = await fetch(`${base}/v1/videos/generations`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'videogen-2.0-fast-text-to-video',
      prompt: 'a red kite over green hills',
      duration: 4,
      quality: '480p',
      aspect_ratio: '16:9',
    }),
  });
  const task = await created.json();
  check(
    'a task is created',
    created.status === 200 || created.status === 201,
    `${created.status} ${task.id}`,
  );
  const done = await waitFor(
    'the task to end',
    async () => {
      const polled = await (await fetch(`${base}/v1/tasks/${task.id}`, { headers: auth })).json();
      return polled.status === 'completed' || polled.status === 'failed' ? polled : undefined;
    },
    180_000,
  );
  check(
    'the task completed',
    done.status === 'completed',
    done.status === 'failed' ? JSON.stringify(done.error) : '',
  );

  const video = await fetch(done.results[0], { headers: auth });
  const bytes = Buffer.from(await video.arrayBuffer());
  check('its MP4 downloads', video.status === 200 && bytes.length > 0, `${bytes.length} bytes`);
  const mp4 = join(work, 'result.mp4');
  writeFileSync(mp4, bytes);
  const { createRequire } = await import('node:module');
  const ffprobe = createRequire(join(installed, 'package.json'))('@ffprobe-installer/ffprobe').path;
  const probe = JSON.parse(
    execFileSync(ffprobe, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', mp4], {
      encoding: 'utf8',
    }),
  );
  const stream = probe.streams.find((candidate) => candidate.codec_type === 'video');
  const duration = Number(probe.format.duration);
  check('the MP4 is H.264', stream?.codec_name === 'h264', stream?.codec_name);
  check('the MP4 is 480 lines high', stream?.height === 480, `${stream?.width}x${stream?.height}`);
  check('the MP4 lasts the 4 s asked for', Math.abs(duration - 4) < 0.1, `${duration} s`);

  server.kill('SIGTERM');
  const [code] = await exited;
  server = undefined;
  check('videogen serve exits 0 on SIGTERM', code === 0, String(code));
} catch (error) {
  if (checks.failed === 0) checks.failed += 1;
  console.error(error);
} finally {
  server?.kill('SIGKILL');
  console.log(`${checks.passed} passed, ${checks.failed} failed`);
  if (process.env.VIDEOGEN_KEEP_CHECK_DIR) console.log(`# kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
  process.exitCode = checks.failed === 0 ? 0 : 1;
}
