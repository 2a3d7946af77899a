/** `videogen tasks get|list|cancel|delete|watch`: the API's task operations, through the SDK. */
import { parseArgs } from 'node:util';
import {
  type DeletedTask,
  type FailedTask,
  type ListTasksParams,
  TASK_STATUSES,
  type Task,
  TaskFailedError,
  type TaskStatus,
} from '@videogen/client';
import {
  API_CLIENT_OPTIONS,
  ApiCommandError,
  apiClientFrom,
  printJson,
  printTask,
  reportingApiErrors,
} from './api-client-options.js';
import { printTable } from './print-table.js';
import { progressBar } from './progress-bar.js';
import { UsageError } from './usage-error.js';

const DEFAULT_LIST_LIMIT = 20;
const MAX_PAGE_SIZE = 100;

function oneTaskId(positionals: readonly string[], action: string): string {
  const [taskId, ...extra] = positionals;
  if (!taskId || extra.length > 0) throw new UsageError(`tasks ${action} needs one task ID`);
  return taskId;
}

function wholeNumber(raw: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max))
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}`);
  return value;
}

function listParams(values: { status?: string; model?: string }): ListTasksParams {
  const { status, model } = values;
  if (status !== undefined && !TASK_STATUSES.includes(status as TaskStatus)) {
    throw new UsageError(`--status must be one of ${TASK_STATUSES.join(', ')}`);
  }
  // Any model ID or alias: the server has the catalogue, and refuses one it lacks with its list.
  return {
    ...(status === undefined ? {} : { status: status as TaskStatus }),
    ...(model === undefined ? {} : { model }),
  };
}

export async function tasksCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  switch (action) {
    case 'get': {
      const { values, positionals } = parseArgs({
        args: rest,
        options: { ...API_CLIENT_OPTIONS, wait: { type: 'string' } },
        allowPositionals: true,
        strict: true,
      });
      const taskId = oneTaskId(positionals, 'get');
      const wait = wholeNumber(values.wait, '--wait', 0, 60);
      const client = apiClientFrom(values);
      const task = await reportingApiErrors(() => client.getTask(taskId, wait === undefined ? {} : { wait }));
      if (values.json) printJson(task);
      else printTask(task);
      return 0;
    }
    case 'list': {
      const { values, positionals } = parseArgs({
        args: rest,
        options: {
          ...API_CLIENT_OPTIONS,
          limit: { type: 'string' },
          all: { type: 'boolean', default: false },
          status: { type: 'string' },
          model: { type: 'string' },
        },
        allowPositionals: true,
        strict: true,
      });
      if (positionals.length > 0) throw new UsageError('tasks list takes no arguments');
      if (values.all && values.limit !== undefined) throw new UsageError('give --limit or --all, not both');
      const limit = values.all
        ? Number.POSITIVE_INFINITY
        : (wholeNumber(values.limit, '--limit', 1, Number.MAX_SAFE_INTEGER) ?? DEFAULT_LIST_LIMIT);
      const params: ListTasksParams = { ...listParams(values), limit: Math.min(MAX_PAGE_SIZE, limit) };
      const client = apiClientFrom(values);
      const tasks = await reportingApiErrors(async () => {
        const found: Task[] = [];
        for await (const task of client.listTasks(params)) {
          found.push(task);
          if (found.length >= limit) break;
        }
        return found;
      });
      if (values.json) {
        printJson(tasks);
        return 0;
      }
      printTable(
        ['ID', 'MODEL', 'STATUS', 'PROGRESS', 'CREATED'],
        tasks.map((task) => [
          task.id,
          task.model,
          task.status === 'failed' ? `failed (${task.error.code})` : task.status,
          `${task.progress}%`,
          new Date(task.created_at * 1000).toISOString(),
        ]),
      );
      return 0;
    }
    case 'cancel':
    case 'delete': {
      const { values, positionals } = parseArgs({
        args: rest,
        options: API_CLIENT_OPTIONS,
        allowPositionals: true,
        strict: true,
      });
      const taskId = oneTaskId(positionals, action);
      const client = apiClientFrom(values);
      const answer = await reportingApiErrors<FailedTask | DeletedTask>(() =>
        action === 'cancel' ? client.cancelTask(taskId) : client.deleteTask(taskId),
      );
      if (values.json) printJson(answer);
      else process.stdout.write(`${action === 'cancel' ? 'cancelled' : 'deleted'} ${taskId}\n`);
      return 0;
    }
    case 'watch': {
      const { values, positionals } = parseArgs({
        args: rest,
        options: API_CLIENT_OPTIONS,
        allowPositionals: true,
        strict: true,
      });
      const taskId = oneTaskId(positionals, 'watch');
      const client = apiClientFrom(values);
      const bar = progressBar();
      // With --json, every change as one JSON line; without, a bar on a terminal or a plain line per change.
      const onProgress = (task: Task) => {
        if (values.json) process.stdout.write(`${JSON.stringify(task)}\n`);
        else if (process.stderr.isTTY) bar.update(task);
        else process.stdout.write(`${task.status} ${task.progress}%\n`);
      };
      const final = await reportingApiErrors(async () => {
        try {
          return await client.waitForTask(taskId, { onProgress });
        } finally {
          bar.finish();
        }
      });
      if (final.status === 'failed') throw new ApiCommandError(new TaskFailedError(final));
      if (!values.json) process.stdout.write(`${final.results[0]}\n`);
      return 0;
    }
    default:
      throw new UsageError(
        action ? `unknown tasks action ${JSON.stringify(action)}` : 'tasks needs an action',
      );
  }
}
