/**
 * The task use cases behind the HTTP routes: create, read, list, cancel and delete tasks for an authenticated
 * scope.
 * It knows the domain rules and the ports, not HTTP and not SQL.
 */
import { storeInlineAssets } from '../assets/stored-assets.js';
import { deliveryFor, type PublicDelivery, toPublicDelivery } from '../domain/delivery.js';
import { type InputCheck, NO_INPUT_CHECK } from '../domain/engine-capabilities.js';
import { ApiError } from '../domain/errors.js';
import { type GenerationParams, parseGenerationRequest, parsePrompt } from '../domain/generation-request.js';
import {
  IDEMPOTENCY_KEY_NAME,
  IDEMPOTENCY_WINDOW_MS,
  requestFingerprint,
} from '../domain/idempotency-key.js';
import { isTaskId, newTaskId } from '../domain/identifiers.js';
import { ModelCatalogue } from '../domain/model-catalogue.js';
import { costMicros, type Prices } from '../domain/prices.js';
import { remixSourceKey, resultKey, STORED_ASSET_SCHEME } from '../domain/storage-keys.js';
import { isFinal, type PublicTask, type TaskRecord, type TaskScope, toPublicTask } from '../domain/task.js';
import { encodeCursor, type TaskListQuery } from '../domain/task-list-query.js';
import { BudgetExceeded, budgetMessage } from '../domain/usage.js';
import type { Storage } from '../ports/storage.js';
import type { DeliveryStore, NewTask, TaskStore } from '../ports/store.js';
import { QueueRoom } from './queue-room.js';
import type { ResultUrl } from './result-links.js';
import { type RunTimeEstimates, taskInfoContext } from './run-time-estimates.js';
import { copyStoredObject } from './stored-copy.js';
import { deleteTaskFiles } from './task-files.js';
import { TaskWatcher, type TaskWatcherOptions } from './task-watcher.js';

export interface PublicTaskList {
  readonly object: 'list';
  readonly data: PublicTask[];
  readonly has_more: boolean;
  readonly next_cursor: string | null;
}

export interface DeletedTask {
  readonly id: string;
  readonly object: 'video.generation.task';
  readonly deleted: true;
}

/** Who creates a task: its scope, and the API key when it came through one (its limits apply too). */
export interface CreatorScope extends TaskScope {
  readonly keyId?: string | undefined;
}

/** A state of a task in its event stream: the task as `get` answers it, and its revision (the event's id). */
export interface TaskEvent {
  readonly revision: number;
  readonly task: PublicTask;
}

/** What `overloaded` (queue full) tells clients to wait before trying again. */
export const OVERLOADED_RETRY_AFTER_SECONDS = 30;

export class TaskService {
  readonly #store: TaskStore & Pick<DeliveryStore, 'listDeliveries' | 'createDelivery'>;
  readonly #resultUrl: ResultUrl;
  readonly #assets: { storage: Storage; maxBytes: number; tempDir?: string } | undefined;
  readonly #maxQueuedTasks: number;
  readonly #queueRoom: QueueRoom;
  readonly #onCreated: (task: TaskRecord) => void;
  readonly #onDeliveryQueued: () => void;
  readonly #onCancelled: (task: TaskRecord) => void;
  readonly #resolveUploads: (
    scope: TaskScope,
    params: GenerationParams,
    requestOrigin?: string,
  ) => Promise<GenerationParams>;
  readonly #showUploads: (params: GenerationParams, requestOrigin?: string) => GenerationParams;
  readonly #checkInputs: InputCheck;
  readonly #prices: Prices | undefined;
  readonly #runTimes: RunTimeEstimates | undefined;
  readonly #watcher: TaskWatcher;

  /** The models requests are checked against. */
  readonly catalogue: ModelCatalogue;

  constructor(options: {
    store: TaskStore & Pick<DeliveryStore, 'listDeliveries' | 'createDelivery'>;
    resultUrl: ResultUrl;
    /**
     * Where inline (`data:`) assets are moved at creation, through files in `tempDir` (the OS temp directory
     * when absent); kept inline in the task when absent.
     */
    assets?: { storage: Storage; maxBytes: number; tempDir?: string };
    /**
     * Creation fails `overloaded` while this many tasks are pending; 0 or absent: no cap. How exactly it
     * holds: queue-room.ts.
     */
    maxQueuedTasks?: number;
    onCreated?: (task: TaskRecord) => void;
    onDeliveryQueued?: () => void;
    /**
     * Turns the URLs of uploaded files in a request sent to `requestOrigin` into storage references
     * (file-service.ts).
     */
    resolveUploads?: (
      scope: TaskScope,
      params: GenerationParams,
      requestOrigin?: string,
    ) => Promise<GenerationParams>;
    /** The other way: the storage references of uploaded files back into their URLs (file-service.ts). */
    showUploads?: (params: GenerationParams, requestOrigin?: string) => GenerationParams;
    /** A task was cancelled: its worker, in this process or another, should stop it. */
    onCancelled?: (task: TaskRecord) => void;
    /** Whether the engine the model is routed to can take the request's inputs (engines/routed-inputs.ts, injected). */
    checkInputs?: InputCheck;
    /** What video costs: a task's cost is reserved at creation at these prices. */
    prices?: Prices | undefined;
    /** The server's models (the engines file's); the built-in six when absent. */
    catalogue?: ModelCatalogue;
    /** The models' recent run times, for `task_info.estimated_time`; none without them. */
    runTimes?: RunTimeEstimates;
    /**
     * How event streams learn that their tasks may have changed (tasks/task-watcher.ts): the signal to subscribe
     * to, and the poll besides it.
     */
    watch?: Pick<TaskWatcherOptions, 'subscribe' | 'fallbackMs' | 'minGapMs' | 'onError'>;
  }) {
    this.#store = options.store;
    this.#resultUrl = options.resultUrl;
    this.#assets = options.assets;
    this.#maxQueuedTasks = options.maxQueuedTasks ?? 0;
    this.#queueRoom = new QueueRoom({
      cap: this.#maxQueuedTasks,
      countPending: () => options.store.countPendingTasks(),
    });
    this.#onCreated = options.onCreated ?? (() => {});
    this.#onDeliveryQueued = options.onDeliveryQueued ?? (() => {});
    this.#onCancelled = options.onCancelled ?? (() => {});
    this.#resolveUploads = options.resolveUploads ?? (async (_scope, params) => params);
    this.#showUploads = options.showUploads ?? ((params) => params);
    this.#checkInputs = options.checkInputs ?? NO_INPUT_CHECK;
    this.#prices = options.prices;
    this.#runTimes = options.runTimes;
    this.catalogue = options.catalogue ?? ModelCatalogue.BUILT_IN;
    this.#watcher = new TaskWatcher({ ...options.watch, read: (ids) => options.store.getTasks(ids) });
  }

  /**
   * `requestOrigin`, here and below, is the origin the request was sent to (http/request-origin.ts): the URLs
   * of the answer are made at it when no public URL is configured.
   */
  async create(scope: CreatorScope, body: unknown, requestOrigin?: string): Promise<PublicTask> {
    const newTask = await this.#newTask(scope, body, requestOrigin);
    const task = await this.#withinBudget(newTask, () => this.#store.createTask(newTask));
    this.#onCreated(task);
    return this.present(task, requestOrigin);
  }

  /**
   * `create` under an `Idempotency-Key`: the first request with the key creates the task; a repeat of the same
   * request within 24 hours gets that task back (`replayed`), a different request under the key is refused.
   */
  async createOnce(
    scope: CreatorScope,
    body: unknown,
    idempotencyKey: string,
    requestOrigin?: string,
  ): Promise<{ task: PublicTask; replayed: boolean }> {
    const task = await this.#newTask(scope, body, requestOrigin);
    const result = await this.#withinBudget(task, () =>
      this.#store.createTaskOnce(task, {
        key: idempotencyKey,
        requestHash: requestFingerprint(body),
        since: Date.now() - IDEMPOTENCY_WINDOW_MS,
      }),
    );
    // The inline assets stored for a task that was not created belong to nothing.
    if (result.outcome !== 'created' && this.#assets) {
      await deleteTaskFiles(this.#assets.storage, task);
    }
    if (result.outcome === 'conflict') {
      throw new ApiError(
        'idempotency_conflict',
        `${IDEMPOTENCY_KEY_NAME} ${idempotencyKey} was used with a different request in the last 24 hours.`,
        { param: IDEMPOTENCY_KEY_NAME },
      );
    }
    if (result.outcome === 'created') this.#onCreated(result.task);
    return { task: await this.present(result.task, requestOrigin), replayed: result.outcome === 'replayed' };
  }

  /**
   * Runs a creation, failing `budget_exceeded` when the store refuses it for a monthly limit; the inline
   * assets stored for the refused task belong to nothing and are deleted.
   */
  async #withinBudget<T>(task: NewTask, create: () => Promise<T>): Promise<T> {
    try {
      return await create();
    } catch (error) {
      if (!(error instanceof BudgetExceeded)) throw error;
      if (this.#assets) await deleteTaskFiles(this.#assets.storage, task);
      throw new ApiError('budget_exceeded', budgetMessage(error.refusal, this.#prices?.currency ?? ''));
    }
  }

  /** Validates a creation and makes its task: uploads resolved, queue room checked, inline assets stored. */
  async #newTask(scope: CreatorScope, body: unknown, requestOrigin: string | undefined): Promise<NewTask> {
    const { model, params: parsed, audioGiven } = parseGenerationRequest(body, undefined, this.catalogue);
    // Left out, generate_audio is what the route can do: the task echoes the sound its result will have.
    const requested = audioGiven
      ? parsed
      : { ...parsed, generate_audio: this.#checkInputs.makesSound(model) };
    const unsupported = this.#checkInputs.unsupported(model, requested);
    if (unsupported)
      throw new ApiError('input_not_supported', unsupported.message, { param: unsupported.param });
    const params = await this.#resolveUploads(scope, requested, requestOrigin);
    await this.#checkQueueRoom();
    const id = newTaskId();
    const stored = this.#assets
      ? await storeInlineAssets(id, params, this.#assets.storage, this.#assets.maxBytes, this.#assets.tempDir)
      : params;
    return {
      accountId: scope.accountId,
      environment: scope.environment,
      id,
      model: model.id,
      params: stored,
      apiKeyId: scope.keyId ?? null,
      costMicros: costMicros(this.#prices, model.id, params.quality, params.duration),
    };
  }

  /**
   * A remix (the OpenAI Videos API's `POST /v1/videos/{id}/remix`): a new reference-to-video task (fast when the
   * source's model is) whose video 1 is a copy of the completed source task's video, stored as the new task's
   * own asset, with the source's duration, quality, resolved ratio and seed, and `prompt`. Refused like any
   * creation (inputs the routed engines cannot take, the queue, the budgets).
   */
  async remix(scope: CreatorScope, sourceId: string, prompt: unknown): Promise<TaskRecord> {
    const source = await this.#find(scope, sourceId);
    if (source.status !== 'completed') {
      throw new ApiError(
        'invalid_parameter',
        `Task ${sourceId} is ${source.status}: only a completed video can be remixed.`,
        { param: 'video_id' },
      );
    }
    const fast = this.catalogue.find(source.model)?.fast ?? false;
    const model = this.catalogue.models.find(
      (entry) =>
        entry.mode === 'reference' && entry.fast === fast && entry.durations.includes(source.params.duration),
    );
    if (!model) {
      throw new ApiError(
        'input_not_supported',
        `A remix is a reference-to-video task, and no ${fast ? 'fast ' : ''}reference-to-video model of ${source.params.duration} seconds is served here.`,
        { param: 'video_id' },
      );
    }
    const text = parsePrompt(prompt);
    const assets = this.#assets;
    if (!assets) throw new Error('a remix needs the storage of inline assets');
    const id = newTaskId();
    const key = remixSourceKey(id, source.id);
    const params: GenerationParams = {
      ...source.params,
      prompt: text,
      image_urls: [],
      video_urls: [STORED_ASSET_SCHEME + key],
      audio_urls: [],
      callback_url: null,
    };
    const unsupported = this.#checkInputs.unsupported(model, params);
    if (unsupported)
      throw new ApiError('input_not_supported', unsupported.message, { param: unsupported.param });
    await this.#checkQueueRoom();
    await copyStoredObject(assets.storage, resultKey(source.id), key, assets.tempDir);
    const newTask: NewTask = {
      accountId: scope.accountId,
      environment: scope.environment,
      id,
      model: model.id,
      params,
      apiKeyId: scope.keyId ?? null,
      costMicros: costMicros(this.#prices, model.id, params.quality, params.duration),
    };
    const task = await this.#withinBudget(newTask, () => this.#store.createTask(newTask)).catch(
      async (error: unknown) => {
        await deleteTaskFiles(assets.storage, newTask);
        throw error;
      },
    );
    this.#onCreated(task);
    return task;
  }

  /** The task itself, as stored (the OpenAI Videos API shows it in its own shape). */
  async record(scope: TaskScope, taskId: string): Promise<TaskRecord> {
    return this.#find(scope, taskId);
  }

  /** A page of the scope's tasks, as stored, newest first. */
  async page(scope: TaskScope, query: TaskListQuery): Promise<{ tasks: TaskRecord[]; hasMore: boolean }> {
    return this.#store.listTasks(scope, query);
  }

  async get(scope: TaskScope, taskId: string, requestOrigin?: string): Promise<PublicTask> {
    return this.present(await this.#find(scope, taskId), requestOrigin);
  }

  /**
   * The task's states for its event stream: the current one, unless the client has it already (`after`, the
   * revision of the last state it got, is the current one), then one at each change until a final one, or until
   * `signal` fires. Undefined when there is nothing more to tell: the task is final and the client has that
   * state. An older `after` gets the current state at once (the changes in between are not kept); a newer one
   * was never handed out for this task and counts for nothing.
   */
  async events(
    scope: TaskScope,
    taskId: string,
    options: {
      readonly after?: number | undefined;
      readonly signal: AbortSignal;
      /** Where the request was sent, for the links in each state (`present`). */
      readonly origin?: string | undefined;
    },
  ): Promise<AsyncIterable<TaskEvent> | undefined> {
    const task = await this.#find(scope, taskId);
    const seen = options.after === task.revision;
    if (seen && isFinal(task.status)) return undefined;
    return this.#events(task, seen, options);
  }

  async *#events(
    task: TaskRecord,
    seen: boolean,
    { signal, origin }: { readonly signal: AbortSignal; readonly origin?: string | undefined },
  ): AsyncGenerator<TaskEvent> {
    if (!seen) {
      yield { revision: task.revision, task: await this.present(task, origin) };
      if (isFinal(task.status)) return;
    }
    for await (const next of this.#watcher.watch(task.id, task.revision, signal)) {
      yield { revision: next.revision, task: await this.present(next, origin) };
    }
  }

  /**
   * What the task was created with, as a request body (the dashboard shows it): uploaded files by their URLs, as
   * the client sent them; empty fields left out.
   */
  async request(scope: TaskScope, taskId: string, requestOrigin?: string): Promise<Record<string, unknown>> {
    const { model, params } = await this.#find(scope, taskId);
    const fields = Object.entries(this.#showUploads(params, requestOrigin)).filter(
      ([, value]) => value !== null && !(Array.isArray(value) && value.length === 0),
    );
    return { model, ...Object.fromEntries(fields) };
  }

  async list(scope: TaskScope, query: TaskListQuery, requestOrigin?: string): Promise<PublicTaskList> {
    const { tasks, hasMore } = await this.#store.listTasks(scope, query);
    const last = tasks.at(-1);
    return {
      object: 'list',
      data: await Promise.all(tasks.map((task) => this.present(task, requestOrigin))),
      has_more: hasMore,
      next_cursor: hasMore && last ? encodeCursor(last) : null,
    };
  }

  /** Stops a pending or processing task: it becomes `failed` with `cancelled`, and its callback fires. */
  async cancel(scope: TaskScope, taskId: string, requestOrigin?: string): Promise<PublicTask> {
    assertTaskIdShape(taskId);
    const outcome = await this.#store.cancelTask(taskId, scope);
    if (!outcome) throw notFound(taskId);
    if (!outcome.cancelled) {
      throw new ApiError(
        'task_not_cancellable',
        `Task ${taskId} is already ${outcome.task.status}; only pending and processing tasks can be cancelled.`,
        { param: 'task_id' },
      );
    }
    this.#onCancelled(outcome.task);
    this.#onDeliveryQueued();
    return this.present(outcome.task, requestOrigin);
  }

  /** Removes a final task, its callback log and its files (the video and the request's stored assets). */
  async delete(scope: TaskScope, taskId: string): Promise<DeletedTask> {
    assertTaskIdShape(taskId);
    const outcome = await this.#store.deleteTask(taskId, scope);
    if (!outcome) throw notFound(taskId);
    if (!outcome.deleted) {
      throw new ApiError(
        'task_not_deletable',
        `Task ${taskId} is ${outcome.task.status}; cancel it first, or wait until it is completed or failed.`,
        { param: 'task_id' },
      );
    }
    if (this.#assets) await deleteTaskFiles(this.#assets.storage, outcome.task);
    return { id: taskId, object: 'video.generation.task', deleted: true };
  }

  /** The task's callback deliveries and every attempt of each, oldest first. */
  async deliveries(scope: TaskScope, taskId: string): Promise<PublicDelivery[]> {
    await this.#find(scope, taskId);
    return (await this.#store.listDeliveries(taskId)).map(toPublicDelivery);
  }

  /** Queues a new delivery (a new `webhook-id`) of the task as it is now. */
  async redeliver(scope: TaskScope, taskId: string): Promise<PublicDelivery> {
    const task = await this.#find(scope, taskId);
    const delivery = deliveryFor(task);
    if (!delivery) {
      throw new ApiError('callback_not_configured', `Task ${taskId} was created without a callback_url.`, {
        param: 'task_id',
      });
    }
    const created = await this.#store.createDelivery(delivery);
    this.#onDeliveryQueued();
    return toPublicDelivery({ ...created, attempts: [] });
  }

  /** The global queue cap: refused before anything is stored. */
  async #checkQueueRoom(): Promise<void> {
    if (await this.#queueRoom.admit()) return;
    throw new ApiError(
      'overloaded',
      `The queue is full (${this.#maxQueuedTasks} tasks waiting); retry after ${OVERLOADED_RETRY_AFTER_SECONDS} s.`,
      { retryAfterSeconds: OVERLOADED_RETRY_AFTER_SECONDS },
    );
  }

  async #find(scope: TaskScope, taskId: string): Promise<TaskRecord> {
    assertTaskIdShape(taskId);
    const task = await this.#store.getTask(taskId, scope);
    if (!task) throw notFound(taskId);
    return task;
  }

  async present(task: TaskRecord, requestOrigin?: string): Promise<PublicTask> {
    const currency = this.#prices?.currency;
    if (task.status === 'completed') {
      const lastFrame = task.params.return_last_frame
        ? await this.#resultUrl(task.id, requestOrigin, 'last_frame')
        : undefined;
      return toPublicTask(task, await this.#resultUrl(task.id, requestOrigin), lastFrame, { currency });
    }
    if (isFinal(task.status)) return toPublicTask(task, undefined, undefined, { currency });
    return toPublicTask(task, undefined, undefined, await taskInfoContext(task, this.#runTimes, currency));
  }
}

/**
 * An id that cannot be a task's is not looked up: it is not found, without asking the store (PostgreSQL refuses
 * text with a NUL byte outright, where SQLite would simply find nothing).
 */
function assertTaskIdShape(taskId: string): void {
  if (!isTaskId(taskId)) throw notFound(taskId);
}

function notFound(taskId: string): ApiError {
  return new ApiError('task_not_found', `No task ${taskId} exists for this API key.`, { param: 'task_id' });
}
