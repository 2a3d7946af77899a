/**
 * The task use cases behind the HTTP routes: create and read tasks for an authenticated scope.
 * It knows the domain rules and the ports, not HTTP and not SQL.
 */
import { parseGenerationRequest } from './domain/generation-request.js';
import { newTaskId } from './domain/identifiers.js';
import { type PublicTask, type TaskRecord, type TaskScope, toPublicTask } from './domain/task.js';
import { ApiError } from './errors.js';
import type { Store } from './ports/store.js';
import type { ResultLinks } from './result-links.js';

export class TaskService {
  readonly #store: Store;
  readonly #links: ResultLinks;
  readonly #onCreated: () => void;

  constructor(options: { store: Store; links: ResultLinks; onCreated?: () => void }) {
    this.#store = options.store;
    this.#links = options.links;
    this.#onCreated = options.onCreated ?? (() => {});
  }

  async create(scope: TaskScope, body: unknown): Promise<PublicTask> {
    const { model, params } = parseGenerationRequest(body);
    const task = await this.#store.createTask({ ...scope, id: newTaskId(), model: model.id, params });
    this.#onCreated();
    return this.present(task);
  }

  async get(scope: TaskScope, taskId: string): Promise<PublicTask> {
    const task = await this.#store.getTask(taskId, scope);
    if (!task)
      throw new ApiError('task_not_found', `No task ${taskId} exists for this API key.`, {
        param: 'task_id',
      });
    return this.present(task);
  }

  present(task: TaskRecord): PublicTask {
    return toPublicTask(task, task.status === 'completed' ? this.#links.urlFor(task.id) : undefined);
  }
}
