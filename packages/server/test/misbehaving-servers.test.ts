/**
 * No answer from a server the service calls can crash or hang the process (issue 31): asset downloads, engines'
 * calls and result downloads, and callbacks, each against real misbehaving servers, many times over, since the
 * crash this guards against (undici's parser asserting it is not paused when an HTTP/1.0 server closes,
 * nodejs/undici#5360) depends on the timing of the reader against the socket. If it came back, the assertion
 * would throw from a socket handler and end this test process.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Dispatcher } from 'undici';
import { downloadAsset } from '../src/assets/download-asset.js';
import { download } from '../src/cli/generate-command.js';
import { TaskFailure } from '../src/domain/errors.js';
import { fetchUpstreamFile } from '../src/engines/upstream-file.js';
import { upstreamRequest } from '../src/engines/upstream-request.js';
import { createGuardedDispatcher } from '../src/outbound/guarded-dispatcher.js';
import { createOutboundAgent } from '../src/outbound/outbound-agent.js';
import { sendWebhook } from '../src/webhooks/send-webhook.js';
import {
  type MisbehavingServer,
  type Misbehaviour,
  startMisbehavingServer,
} from './helpers/misbehaving-server.js';

/** Enough tries of each for a timing race to show (the crash came within one to five downloads). */
const TRIES = 50;
/** Tries in flight at once: some alone, as a new user's single task, and some beside each other. */
const AT_ONCE = 5;
/** Big enough that the reader falls behind the socket and pauses the body. */
const BODY = randomBytes(2 * 1024 * 1024);
/** The drip never finishes, so this is only how long each of those tries takes to fail. */
const DRIP_LIMIT_MS = 300;
/** Only a failure waits this out: every other answer ends, well or badly, long before. */
const GENEROUS_MS = 60_000;

let server: MisbehavingServer;
let dir: string;
let guarded: Dispatcher;
let modelServers: Dispatcher;

before(async () => {
  server = await startMisbehavingServer(BODY);
  dir = await mkdtemp(join(tmpdir(), 'videogen-misbehaving-'));
  guarded = createGuardedDispatcher({ allowPrivateNetworks: true });
  modelServers = createOutboundAgent();
});

after(async () => {
  await Promise.all([guarded.close(), modelServers.close(), server.close()]);
  await rm(dir, { recursive: true, force: true });
});

/** Runs `attempt(i)` `TRIES` times, `AT_ONCE` at a time. */
async function repeatedly(attempt: (i: number) => Promise<void>): Promise<void> {
  for (let start = 0; start < TRIES; start += AT_ONCE) {
    const batch = [];
    for (let i = start; i < Math.min(TRIES, start + AT_ONCE); i++) batch.push(attempt(i));
    await Promise.all(batch);
  }
}

async function failureOf(promise: Promise<unknown>): Promise<TaskFailure> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof TaskFailure, `expected a TaskFailure, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a failure');
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

describe('asset downloads from misbehaving servers', () => {
  const fails: Record<Exclude<Misbehaviour, 'http10-close' | 'http10-eof'>, RegExp> = {
    'cut-short': /^video_urls\[0\]: .+/,
    drip: new RegExp(`^video_urls\\[0\\]: no complete answer within ${DRIP_LIMIT_MS} ms$`),
    'garbage-status': /^video_urls\[0\]: .+/,
    'reset-mid-body': /^video_urls\[0\]: .+/,
    'bad-chunk': /^video_urls\[0\]: .+/,
    'redirect-loop': /^video_urls\[0\]: more than 3 redirects$/,
  };

  for (const kind of ['http10-close', 'http10-eof'] as const) {
    it(`${kind}: ${TRIES} downloads, each the whole body`, async () => {
      await repeatedly(async (i) => {
        const path = join(dir, `${kind}-${i}`);
        await downloadAsset(
          { label: 'video_urls[0]', url: `${server.url}/${kind}` },
          path,
          { dispatcher: guarded, maxBytes: 8 * 1024 * 1024, timeoutMs: GENEROUS_MS },
          new AbortController().signal,
        );
        assert.ok((await readFile(path)).equals(BODY), `download ${i} is not the body served`);
        await rm(path);
      });
    });
  }

  for (const [kind, message] of Object.entries(fails)) {
    it(`${kind}: ${TRIES} downloads, each asset_fetch_failed and no file left`, async () => {
      const timeoutMs = kind === 'drip' ? DRIP_LIMIT_MS : GENEROUS_MS;
      await repeatedly(async (i) => {
        const path = join(dir, `${kind}-${i}`);
        const failure = await failureOf(
          downloadAsset(
            { label: 'video_urls[0]', url: `${server.url}/${kind}` },
            path,
            { dispatcher: guarded, maxBytes: 8 * 1024 * 1024, timeoutMs },
            new AbortController().signal,
          ),
        );
        assert.equal(failure.code, 'asset_fetch_failed');
        assert.match(failure.message, message);
        assert.equal(await exists(path), false, 'a partial file was left');
      });
    });
  }
});

describe("engines' calls to misbehaving model servers", () => {
  const options = (signal: AbortSignal) => ({
    label: 'openai engine "hostile"',
    signal,
    deadline: Date.now() + GENEROUS_MS,
    dispatcher: modelServers,
    maxAttempts: 1,
  });

  it(`http10-close: ${TRIES} results downloaded whole, ${TRIES} answers read whole`, async () => {
    await repeatedly(async (i) => {
      const path = join(dir, `result-${i}`);
      const call = { method: 'GET', url: `${server.url}/http10-close` } as const;
      await fetchUpstreamFile(call, path, options(new AbortController().signal));
      assert.ok((await readFile(path)).equals(BODY), `result ${i} is not the body served`);
      await rm(path);
      const answer = await upstreamRequest(call, options(new AbortController().signal));
      assert.ok(Buffer.from(await answer.body.arrayBuffer()).equals(BODY), `answer ${i} is not the body`);
    });
  });

  for (const kind of ['cut-short', 'garbage-status', 'reset-mid-body', 'bad-chunk'] as const) {
    it(`${kind}: ${TRIES} result downloads, each the engine's error and no file left`, async () => {
      await repeatedly(async (i) => {
        const path = join(dir, `result-${kind}-${i}`);
        const call = { method: 'GET', url: `${server.url}/${kind}` } as const;
        const failure = await failureOf(fetchUpstreamFile(call, path, options(new AbortController().signal)));
        assert.match(failure.code, /^upstream_(error|unavailable)$/);
        assert.match(failure.message, /^openai engine "hostile": /);
        assert.equal(await exists(path), false, 'a partial file was left');
      });
    });
  }

  it(`redirect-loop: ${TRIES} calls refused, the redirect not followed`, async () => {
    await repeatedly(async () => {
      const call = { method: 'GET', url: `${server.url}/redirect-loop` } as const;
      const failure = await failureOf(upstreamRequest(call, options(new AbortController().signal)));
      assert.equal(failure.code, 'upstream_error');
      assert.match(failure.message, /answered HTTP 302: a redirect to \/redirect-loop, not followed/);
    });
  });

  it(`drip: ${TRIES} result downloads end when the task's signal does`, async () => {
    await repeatedly(async (i) => {
      const path = join(dir, `result-drip-${i}`);
      const call = { method: 'GET', url: `${server.url}/drip` } as const;
      const signal = AbortSignal.timeout(DRIP_LIMIT_MS);
      await assert.rejects(fetchUpstreamFile(call, path, options(signal)), { name: 'TimeoutError' });
      assert.equal(await exists(path), false, 'a partial file was left');
    });
  });
});

describe('callbacks to misbehaving receivers', () => {
  // A 2xx status is the receiver's word that it has the callback, whatever its body does next.
  const verdicts: Record<Misbehaviour, 'delivered' | 'retry'> = {
    'http10-close': 'delivered',
    'http10-eof': 'delivered',
    'cut-short': 'delivered',
    drip: 'delivered',
    'garbage-status': 'retry',
    'reset-mid-body': 'delivered',
    'bad-chunk': 'delivered',
    'redirect-loop': 'retry',
  };
  for (const [kind, verdict] of Object.entries(verdicts)) {
    it(`${kind}: ${TRIES} deliveries, each ${verdict}`, async () => {
      await repeatedly(async () => {
        const result = await sendWebhook(
          { url: `${server.url}/${kind}`, headers: { 'content-type': 'application/json' }, body: '{}' },
          { dispatcher: guarded, timeoutMs: kind === 'drip' ? DRIP_LIMIT_MS : GENEROUS_MS },
        );
        assert.equal(result.verdict, verdict, String(result.error));
      });
    });
  }
});

describe("the CLI's download of a result", () => {
  it(`http10-close: ${TRIES} downloads, each the whole body`, async () => {
    await repeatedly(async (i) => {
      const path = join(dir, `cli-${i}.mp4`);
      await download(`${server.url}/http10-close`, path);
      assert.ok((await readFile(path)).equals(BODY), `download ${i} is not the body served`);
      await rm(path);
    });
  });

  it(`reset-mid-body: ${TRIES} downloads, each an error and no file left`, async () => {
    await repeatedly(async (i) => {
      const path = join(dir, `cli-reset-${i}.mp4`);
      await assert.rejects(download(`${server.url}/reset-mid-body`, path));
      assert.equal(await exists(path), false);
      assert.equal(await exists(`${path}.part`), false, 'a partial file was left');
    });
  });
});
