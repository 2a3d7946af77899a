/**
 * The SDK as a user gets it before it is published: `npm run pack:sdk` (`npm pack -w @videogen/client`, whose
 * `prepack` builds it) makes the tarball, which `npm install` puts into a fresh project outside the repository,
 * offline (the package has no dependencies, so no registry is needed, and an empty cache proves none was
 * asked). A plain ES module of that project then imports `@videogen/client` by name and makes a video with it
 * on a real server, and `tsc` type-checks a consumer's TypeScript against the declarations it shipped.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startServer, type TestServer } from './helpers/server.js';

const execFileAsync = promisify(execFile);

/** From dist/test/ up to the client package, and to the repository's root. */
const CLIENT_DIR = fileURLToPath(new URL('../../', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

interface PackedFile {
  readonly path: string;
}
interface PackResult {
  readonly name: string;
  readonly version: string;
  readonly filename: string;
  readonly files: readonly PackedFile[];
}

/** The environment of the npm commands: this one, without what a parent `npm test` put in it for itself. */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
}

/** The npm that runs `npm test`, if one does; else the one on the PATH. */
function npmCommand(args: readonly string[]): [string, string[]] {
  const cli = process.env.npm_execpath;
  return cli && /npm-cli\.js$/.test(cli) ? [process.execPath, [cli, ...args]] : ['npm', [...args]];
}

async function npm(args: readonly string[], cwd: string): Promise<string> {
  const [command, commandArgs] = npmCommand(args);
  try {
    const { stdout } = await execFileAsync(command, commandArgs, {
      cwd,
      env: npmEnv(),
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm ${args.join(' ')} failed in ${cwd}:\n${stdout ?? ''}\n${stderr ?? ''}`, {
      cause: error,
    });
  }
}

async function node(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  try {
    const { stdout } = await execFileAsync(process.execPath, [...args], {
      cwd,
      env: { ...npmEnv(), ...env },
    });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`node ${args.join(' ')} failed:\n${stdout ?? ''}\n${stderr ?? ''}`, { cause: error });
  }
}

/** What the consumer's ES module does with the installed package; it prints its findings as JSON. */
const CONSUMER_SCRIPT = `
import { createHmac, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import * as sdk from '@videogen/client';

const {
  AuthenticationError, ConflictError, ConnectionError, InvalidRequestError, NotFoundError, RateLimitError,
  RequestTimeoutError, ServerError, TaskFailedError, VideogenClient, VideogenError, WebhookVerificationError,
  verifyWebhook,
} = sdk;
const out = { resolved: import.meta.resolve('@videogen/client'), exports: Object.keys(sdk).sort() };

out.errorClasses = [
  AuthenticationError, ConflictError, ConnectionError, InvalidRequestError, NotFoundError, RateLimitError,
  RequestTimeoutError, ServerError, TaskFailedError, WebhookVerificationError,
].every((ErrorClass) => typeof ErrorClass === 'function' && ErrorClass.prototype instanceof VideogenError)
  && VideogenError.prototype instanceof Error;

try {
  new VideogenClient({ baseUrl: process.env.VIDEOGEN_URL, apiKey: '' });
  out.emptyKey = 'accepted';
} catch (error) {
  out.emptyKey = error.constructor.name;
}

// A real HTTP call that the server refuses: a key it does not know.
try {
  await new VideogenClient({ baseUrl: process.env.VIDEOGEN_URL, apiKey: 'vg_dev_' + 'x'.repeat(32) })
    .getTask('task-unified-01JD7V3Q6M8Z5S9K2T4W6Y8A0C');
  out.unknownKey = 'answered';
} catch (error) {
  out.unknownKey = {
    authenticationError: error instanceof AuthenticationError,
    status: error.status,
    code: error.code,
    requestId: typeof error.requestId === 'string' && error.requestId.length > 0,
  };
}

// A video, made end to end.
const videogen = new VideogenClient({ baseUrl: process.env.VIDEOGEN_URL, apiKey: process.env.VIDEOGEN_API_KEY });
const task = await videogen.generate({
  model: 'videogen-2.0-fast-text-to-video', prompt: 'a red kite', duration: 4, quality: '480p',
});
const video = await fetch(task.results[0]);
const bytes = new Uint8Array(await video.arrayBuffer());
out.task = {
  status: task.status,
  videoStatus: video.status,
  ftyp: new TextDecoder().decode(bytes.subarray(4, 8)),
  fetchedAgain: (await videogen.getTask(task.id)).status,
};

// A callback signed the Standard Webhooks way, verified with the package's Web Crypto code.
const key = randomBytes(32);
const secret = 'whsec_' + key.toString('base64');
const body = JSON.stringify(task);
const id = 'msg_package_test';
const timestamp = String(Math.floor(Date.now() / 1000));
const signature = createHmac('sha256', key).update(id + '.' + timestamp + '.' + body).digest('base64');
const headers = new Headers({ 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': 'v1,' + signature });
out.webhook = { verifiedId: (await verifyWebhook(body, headers, secret)).id === task.id };
try {
  await verifyWebhook(body.replace('completed', 'failed'), headers, secret);
  out.webhook.tampered = 'accepted';
} catch (error) {
  out.webhook.tampered = error instanceof WebhookVerificationError ? error.code : String(error);
}

// require() of the ES module, where this Node.js can (20.19+, 22.12+): the "default" export condition.
if (process.features.require_module) {
  out.required = createRequire(import.meta.url)('@videogen/client').VideogenClient === VideogenClient;
}
console.log(JSON.stringify(out));
`;

/** A consumer's TypeScript: what it may write compiles, and the per-model rules still refuse what they must. */
const CONSUMER_TS = `
import {
  type CompletedTask,
  NotFoundError,
  type Task,
  VideogenClient,
  type VideogenClientOptions,
  verifyWebhook,
} from '@videogen/client';

const options: VideogenClientOptions = { baseUrl: 'http://localhost:8080', apiKey: 'vg_dev_x' };
const videogen = new VideogenClient(options);

export async function animate(first: string, last: string): Promise<CompletedTask> {
  return videogen.generate({ model: 'videogen-2.0-fast-image-to-video', prompt: 'dawn', image_urls: [first, last] });
}

export async function find(id: string): Promise<Task | null> {
  try {
    return await videogen.getTask(id);
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

export const receive = (body: string, headers: Headers): Promise<Task> => verifyWebhook(body, headers, 'whsec_x');

export async function refused(): Promise<void> {
  // @ts-expect-error a text-to-video model takes no images
  await videogen.createTask({ model: 'videogen-2.0-text-to-video', prompt: 'p', image_urls: ['https://a/b.png'] });
  // @ts-expect-error an image-to-video model needs its image
  await videogen.createTask({ model: 'videogen-2.0-image-to-video', prompt: 'p' });
  // A model the server's operator defined: any ID, its limits the server's.
  await videogen.createTask({ model: 'veo-3.1', prompt: 'p', duration: 8, image_urls: ['https://a/b.png'] });
  // @ts-expect-error a duration is a number of seconds
  await videogen.createTask({ model: 'veo-3.1', prompt: 'p', duration: '8' });
}
`;

/** Strict, no @types/node (the declarations must need only the web platform's types), libraries checked too. */
function consumerTsconfig(module: 'NodeNext' | 'ESNext', moduleResolution: 'NodeNext' | 'Bundler') {
  return {
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2022', 'DOM', 'DOM.Iterable'],
      module,
      moduleResolution,
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      skipLibCheck: false,
      types: [],
      noEmit: true,
    },
    files: ['consumer.ts'],
  };
}

describe('the SDK packed and installed as a user would', () => {
  let work: string;
  let consumer: string;
  let packed: PackResult;
  let installed: string;
  let server: TestServer | undefined;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'videogen-client-package-'));
    consumer = join(work, 'consumer');
    const npmrc = join(work, 'npmrc');
    await Promise.all([mkdir(consumer), writeFile(npmrc, '')]);
    // Isolated from the user's npm configuration and cache; the empty cache with --offline proves that no
    // registry was needed.
    const isolated = ['--userconfig', npmrc, '--cache', join(work, 'npm-cache'), '--offline'];
    const packing = (async () => {
      const stdout = await npm(
        ['run', '--silent', 'pack:sdk', '--', '--pack-destination', work, '--json', ...isolated],
        REPO_ROOT,
      );
      [packed] = JSON.parse(stdout) as [PackResult];
      await writeFile(
        join(consumer, 'package.json'),
        `${JSON.stringify({ name: 'videogen-client-consumer', version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`,
      );
      await npm(['install', join(work, packed.filename), '--no-audit', '--no-fund', ...isolated], consumer);
      installed = join(consumer, 'node_modules', '@videogen', 'client');
    })();
    const starting = startServer().then((started) => {
      server = started;
    });
    await Promise.all([packing, starting]);
  });

  after(async () => {
    await server?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('packs the built SDK under its own name, without tests or build leftovers', async () => {
    const manifest = JSON.parse(await readFile(join(CLIENT_DIR, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
    };
    assert.equal(packed.name, '@videogen/client');
    assert.equal(packed.version, manifest.version);
    assert.equal(packed.filename, `videogen-client-${manifest.version}.tgz`);
    const paths = packed.files.map((file) => file.path);
    for (const path of ['package.json', 'README.md', 'LICENSE', 'dist/src/index.js', 'dist/src/index.d.ts']) {
      assert.ok(paths.includes(path), `${path} is in the tarball`);
    }
    const strays = paths.filter(
      (path) =>
        !/^(package\.json|README\.md|LICENSE|dist\/src\/[\w-]+\.(js|js\.map|d\.ts)|src\/[\w-]+\.ts)$/.test(
          path,
        ),
    );
    assert.deepEqual(
      strays,
      [],
      'nothing but the built modules, their sources, the README, the licence and package.json',
    );
  });

  it('installs as files of the project, not a link into the repository, and its source maps resolve', async () => {
    const entry = await lstat(installed);
    assert.ok(entry.isDirectory() && !entry.isSymbolicLink(), 'node_modules/@videogen/client is a directory');
    const maps = (await readdir(join(installed, 'dist', 'src'))).filter((name) => name.endsWith('.js.map'));
    assert.ok(maps.length > 0);
    for (const name of maps) {
      const map = JSON.parse(await readFile(join(installed, 'dist', 'src', name), 'utf8')) as {
        sources: string[];
      };
      for (const source of map.sources) {
        const path = resolve(installed, 'dist', 'src', source);
        assert.ok(!relative(installed, path).startsWith('..'), `${name}: ${source} stays inside the package`);
        await readFile(path); // throws if the map names a file that was not shipped
      }
    }
    const lock = JSON.parse(await readFile(join(consumer, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dependencies?: object }>;
    };
    assert.deepEqual(
      Object.keys(lock.packages).filter((path) => path !== ''),
      ['node_modules/@videogen/client'],
      'no dependencies came with it',
    );
  });

  it('is imported by name from an ES module of that project, and makes a video on a real server', async () => {
    assert.ok(server);
    const script = join(consumer, 'check.mjs');
    await writeFile(script, CONSUMER_SCRIPT);
    const out = JSON.parse(
      await node([script], consumer, { VIDEOGEN_URL: server.url, VIDEOGEN_API_KEY: server.apiKey }),
    ) as {
      resolved: string;
      exports: string[];
      errorClasses: boolean;
      emptyKey: string;
      unknownKey: unknown;
      task: unknown;
      webhook: unknown;
      required?: boolean;
    };
    assert.equal(dirname(dirname(fileURLToPath(out.resolved))), join(installed, 'dist'));
    for (const name of ['VideogenClient', 'VideogenError', 'TaskFailedError', 'verifyWebhook', 'MODEL_IDS']) {
      assert.ok(out.exports.includes(name), `exports ${name}`);
    }
    assert.equal(out.errorClasses, true, 'every error class is a VideogenError');
    assert.equal(out.emptyKey, 'TypeError');
    assert.deepEqual(out.unknownKey, {
      authenticationError: true,
      status: 401,
      code: 'invalid_api_key',
      requestId: true,
    });
    assert.deepEqual(out.task, {
      status: 'completed',
      videoStatus: 200,
      ftyp: 'ftyp',
      fetchedAgain: 'completed',
    });
    assert.deepEqual(out.webhook, { verifiedId: true, tampered: 'invalid_webhook_signature' });
    if (process.features.require_module) assert.equal(out.required, true, 'require() gets the same module');
  });

  it("type-checks a consumer's TypeScript against the shipped declarations (NodeNext and Bundler)", async () => {
    await writeFile(join(consumer, 'consumer.ts'), CONSUMER_TS);
    for (const [file, module, resolution] of [
      ['tsconfig.json', 'NodeNext', 'NodeNext'],
      ['tsconfig.bundler.json', 'ESNext', 'Bundler'],
    ] as const) {
      await writeFile(join(consumer, file), JSON.stringify(consumerTsconfig(module, resolution), null, 2));
      await node([TSC, '-p', file], consumer);
    }
  });
});
