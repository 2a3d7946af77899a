/**
 * The task use cases behind the HTTP routes: create and read tasks for an authenticated scope.
 * It knows the domain rules and the ports, not HTTP and not SQL.
 */
import { storeInlineAssets } from './assets/stored-assets.js';
import { deliveryFor, type PublicDelivery, toPublicDelivery } from './domain/delivery.js';
import { parseGenerationRequest } from './domain/generation-request.js';
import { newTaskId } from './domain/identifiers.js';
import { type PublicTask, type TaskRecord, type TaskScope, toPublicTask } from './domain/task.js';
import { ApiError } from './errors.js';
import type { Storage } from './ports/storage.js';
import type { Store } from './ports/store.js';
import type { ResultUrl } from './result-links.js';

export class TaskService {
  readonly #store: Store;
  readonly #resultUrl: ResultUrl;
  readonly #assets: { storage: Storage; maxBytes: number } | undefined;
  readonly #onCreated: (task: TaskRecord) => void;
  readonly #onDeliveryQueued: () => void;

  constructor(options: {
    store: Store;
    resultUrl: ResultUrl;
    /** Where inline (`data:`) assets are moved at creation; kept inline in the task when absent. */
    assets?: { storage: Storage; maxBytes: number };
    onCreated?: (task: TaskRecord) => void;
    onDeliveryQueued?: () => void;
  }) {
    this.#store = options.store;
    this.#resultUrl = options.resultUrl;
    this.#assets = options.assets;
    this.#onCreated = options.onCreated ?? (() => {});
    this.#onDeliveryQueued = options.onDeliveryQueued ?? (() => {});
  }

  async create(scope: TaskScope, body: unknown): Promise<PublicTask> {
    const { model, params } = parseGenerationRequest(body);
    const id = newTaskId();
    const stored = this.#assets
      ? await storeInlineAssets(id, params, this.#assets.storage, this.#assets.maxBytes)
      : params;
    const task = await this.#store.createTask({ ...scope, id, model: model.id, params: stored });
    this.#onCreated(task);
    return this.present(task);
  }

  async get(scope: TaskScope, taskId: string): Promise<PublicTask> {
    return this.present(await this.#find(scope, taskId));
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

  async #find(scope: TaskScope, taskId: string): Promise<TaskRecord> {
    const task = await this.#store.getTask(taskId, scope);
    if (!task)
      throw new ApiError('task_not_found', `No task ${taskId} exists for this API key.`, {
        param: 'task_id',
      });
    return task;
  }

  async present(task: TaskRecord): Promise<PublicTask> {
    return toPublicTask(task, task.status === 'completed' ? await this.#resultUrl(task.id) : undefined);
  }
}
