/**
 * Temporary files survive no process: a server SIGKILLed mid-render leaves its scratch folder in the OS temp
 * directory, and the next start removes it. Folders of processes still running, of other hosts, or of this
 * process are kept.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ScratchSpace } from '../src/process/scratch-space.js';
import { serverEnv, startServer } from './helpers/server-process.js';

/** The pid of a process that has ended. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  assert.ok(child.pid);
  return child.pid;
}

async function scratchFolders(root: string): Promise<string[]> {
  return (await readdir(root)).filter((name) => name.startsWith('videogen-scratch-')).sort();
}

describe('ScratchSpace', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'videogen-scratch-test-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  it('removes the folders of dead processes of this host, and only those', async () => {
    const first = await ScratchSpace.open({ root });
    const host = basename(first.path).split('-')[3];
    assert.match(host ?? '', /^[0-9a-f]{8}$/);
    const dead = join(root, `videogen-scratch-${await deadPid()}-${host}-0badf00d`);
    const running = join(root, `videogen-scratch-${process.ppid}-${host}-0badf00d`);
    const otherHost = join(root, `videogen-scratch-${await deadPid()}-00000000-0badf00d`);
    const formerSelf = join(root, `videogen-scratch-${process.pid}-${host}-0badf00d`);
    const unrelated = join(root, 'videogen-scratch-notes');
    for (const path of [dead, running, otherHost, formerSelf, unrelated]) {
      await mkdir(join(path, 'task-x'), { recursive: true });
    }
    const removed: string[] = [];
    const second = await ScratchSpace.open({ root, onRemoved: (path) => removed.push(path) });
    assert.deepEqual(removed.sort(), [dead, formerSelf].sort());
    assert.deepEqual(
      await scratchFolders(root),
      [first.path, second.path, running, otherHost, unrelated].map((path) => basename(path)).sort(),
      'a folder this process holds is kept',
    );

    const job = await second.makeDir('upload-');
    assert.ok(job.startsWith(join(second.path, 'upload-')));
    await second.close();
    await first.close();
    assert.ok(!existsSync(second.path) && !existsSync(first.path));
  });
});

describe('a server SIGKILLed mid-render', () => {
  let workDir: string;
  let assets: Server;
  let assetsUrl: string;
  /** Resolves when the worker has asked for the image, that is, while its run's folder exists. */
  let requested: Promise<void>;

  before(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'videogen-sigkill-'));
    let onRequest = () => {};
    requested = new Promise((resolve) => {
      onRequest = resolve;
    });
    // Answers the headers and then never the body: the download stays under way until the process dies.
    assets = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': '100000' });
      response.write(Buffer.alloc(10));
      onRequest();
    });
    await new Promise<void>((resolve) => assets.listen(0, '127.0.0.1', resolve));
    assetsUrl = `http://127.0.0.1:${(assets.address() as AddressInfo).port}`;
  });
  after(async () => {
    assets.closeAllConnections();
    await new Promise((resolve) => assets.close(resolve));
    await rm(workDir, { recursive: true, force: true });
  });

  it('leaves its scratch folder, which the next start removes', { timeout: 120_000 }, async () => {
    const temp = join(workDir, 'tmp');
    await mkdir(temp);
    const env = { ...serverEnv(join(workDir, 'data')), TMPDIR: temp, VIDEOGEN_WORKER_CONCURRENCY: '1' };
    const first = await startServer(env);
    const [folder] = await scratchFolders(temp);
    assert.ok(folder, 'the server made its scratch folder');
    // The first start prints its key just after it starts serving.
    while (!first.printedKey()) await once(first.child.stdout ?? first.child, 'data');
    const key = first.printedKey();
    const created = await fetch(`${first.url}/v1/videos/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'videogen-2.0-fast-image-to-video',
        prompt: 'p',
        image_urls: [`${assetsUrl}/first.png`],
      }),
    });
    assert.equal(created.status, 200);
    await requested;
    const runs = await readdir(join(temp, folder));
    assert.equal(runs.length, 1, 'the run is downloading into its folder');
    assert.match(runs[0] ?? '', /^task-/);

    await first.stop('SIGKILL');
    assert.deepEqual(await scratchFolders(temp), [folder], 'SIGKILL left the folder behind');

    const second = await startServer(env);
    try {
      const now = await scratchFolders(temp);
      assert.ok(!now.includes(folder), 'the next start removed it');
      assert.equal(now.length, 1, 'and made its own');
    } finally {
      await second.stop();
    }
  });
});
