/**
 * What an engine asks a fake video server (test/fakes/video-servers.ts) for, without a video being made: the
 * fake fails every video at its first poll, as a real server fails one that ran out of GPU memory, so a render
 * ends once the fake has checked and recorded the create request. Cheap enough to do for every job of the
 * grid, where rendering each in full would take minutes.
 */
import assert from 'node:assert/strict';
import { TaskFailure } from '../../src/domain/errors.js';
import type { Engine, RenderJob } from '../../src/ports/engine.js';
import { FakeVideoServer, type FakeVideoServerOptions, type RecordedCreate } from '../fakes/video-servers.js';
import { renderContext } from './render-jobs.js';

/** A fake that accepts or refuses each create request as the real server would, then fails the video. */
export async function startAskedServer(options: FakeVideoServerOptions): Promise<FakeVideoServer> {
  const server = await FakeVideoServer.start(options);
  server.outcome = 'fail';
  server.pollsToFinish = 1;
  return server;
}

/** The one create request `server` accepted with `job`'s prompt (the grid's prompts are each job's own). */
export function createFor(server: FakeVideoServer, job: RenderJob): RecordedCreate {
  const found = server.creates.filter((create) => create.effective.prompt === job.params.prompt);
  assert.equal(found.length, 1, `one create request with the prompt "${job.params.prompt}"`);
  return found[0] as RecordedCreate;
}

/**
 * Renders `job` with `engine` against `server` (started by startAskedServer): the server must accept the
 * create request, so the render fails only for the video the server failed. Resolves with the request.
 */
export async function askFor(
  engine: Engine,
  server: FakeVideoServer,
  job: RenderJob,
): Promise<RecordedCreate> {
  assert.equal(server.outcome, 'fail', 'a server started by startAskedServer');
  await assert.rejects(engine.render(job, renderContext()), (error: unknown) => {
    assert.ok(error instanceof TaskFailure, String(error));
    assert.equal(error.code, 'upstream_error');
    assert.match(error.message, /the server failed the video: CUDA out of memory/);
    return true;
  });
  return createFor(server, job);
}
