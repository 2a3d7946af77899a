/**
 * The wakeups of runs following upstream jobs (runner/job-wakeups.ts), alone and under the hosted task loop:
 * a wake ends a pause of ten minutes at once, one that came between pauses ends the next, a wake for another
 * task or after the run closed changes nothing, and an abort still rejects.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type HostedStatus, runHostedTask } from '../src/engines/hosted/hosted-task.js';
import { JobWakeups } from '../src/runner/job-wakeups.js';

const TEN_MINUTES = 600_000;

describe('JobWakeups', () => {
  it('ends a pause when the task is woken, and only for that task', async () => {
    const wakeups = new JobWakeups();
    const a = wakeups.follow('task-a');
    const b = wakeups.follow('task-b');
    const controller = new AbortController();
    const pauseA = a.pause(TEN_MINUTES, controller.signal);
    const pauseB = b.pause(TEN_MINUTES, controller.signal).then(
      () => 'ended',
      () => 'aborted',
    );
    assert.equal(wakeups.wake('task-a'), true);
    await pauseA;
    assert.equal(wakeups.wake('task-c'), false);
    controller.abort(new Error('stopped'));
    assert.equal(await pauseB, 'aborted', 'task-b was not woken: only the abort ended its pause');
    a.close();
    b.close();
    assert.equal(wakeups.size, 0);
    assert.equal(wakeups.wake('task-a'), false);
  });

  it('keeps a wake that came between two pauses for the next one', async () => {
    const wakeups = new JobWakeups();
    const followed = wakeups.follow('task-a');
    wakeups.wake('task-a');
    await followed.pause(TEN_MINUTES, new AbortController().signal);
    followed.close();
  });

  it('rejects with the reason of a signal already aborted', async () => {
    const followed = new JobWakeups().follow('task-a');
    const reason = new Error('cancelled');
    await assert.rejects(followed.pause(TEN_MINUTES, AbortSignal.abort(reason)), (error) => error === reason);
  });
});

describe('the hosted task loop with wakeups', () => {
  it('polls again as soon as the job is woken, however long its interval', async () => {
    const wakeups = new JobWakeups();
    const followed = wakeups.follow('task-a');
    const statuses: HostedStatus<string>[] = [
      { state: 'running' },
      { state: 'running' },
      { state: 'succeeded', result: 'video' },
    ];
    let polls = 0;
    const polled: (() => void)[] = [];
    const nextPoll = () => new Promise<void>((resolve) => polled.push(resolve));
    const first = nextPoll();
    const result = runHostedTask(
      {
        submit: async () => ({ id: 'up-1' }),
        poll: async () => {
          const status = statuses[polls++] as HostedStatus<string>;
          for (const waiter of polled.splice(0)) waiter();
          return status;
        },
        cancel: async () => {},
      },
      {
        label: 'test engine "p"',
        signal: new AbortController().signal,
        deadline: Date.now() + 24 * 3600_000,
        pollIntervalMs: TEN_MINUTES,
        onProgress: () => {},
        pauseBeforePoll: (ms, signal) => followed.pause(ms, signal),
      },
    );
    await first;
    assert.equal(polls, 1);
    for (const expected of [2, 3]) {
      const next = nextPoll();
      wakeups.wake('task-a');
      await next;
      assert.equal(polls, expected);
    }
    assert.equal(await result, 'video');
    followed.close();
  });
});
