/** `VideogenClient`: every operation of the API as a typed method. */
import { TaskFailedError } from './errors.js';
import type { GenerationRequest, ModelId } from './models.js';
import type { BackoffOptions } from './retry.js';
import { type FetchFunction, type RequestOptions, Transport } from './transport.js';
import type {
  CompletedTask,
  DeletedTask,
  Delivery,
  FailedTask,
  FinalTask,
  ListTasksParams,
  Model,
  Task,
  TaskPage,
  UploadedFile,
  UsageParams,
  UsageReport,
} from './types.js';
import { type WaitOptions, waitForTask } from './wait.js';

export interface VideogenClientOptions {
  /** The server's address, e.g. `https://videogen.example.com` (default `http://localhost:8080`). */
  readonly baseUrl?: string;
  /** `vg_dev_…` or `vg_prod_…`. Keep it on the server side: never ship it to a browser. */
  readonly apiKey: string;
  /** The fetch to use (default: the global one); for proxies, tests or instrumentation. */
  readonly fetch?: FetchFunction;
  /**
   * Retries of a request refused with 429, or failed with 5xx or cut off when repeating it is safe: reads,
   * deletions and creations, never a cancel, a redelivery or an upload (default 2).
   */
  readonly maxRetries?: number;
  /** Per attempt, in ms, until the answer has arrived (default 60 000). */
  readonly timeout?: number;
  /** Delays between retries when the server names none with `Retry-After`. */
  readonly backoff?: BackoffOptions;
  /**
   * The longest `Retry-After` waited out before a retry, in ms (default 60 000); an answer asking for longer is
   * thrown at once (its error has `retryAfter`).
   */
  readonly maxRetryWait?: number;
}

export interface CreateTaskOptions extends RequestOptions {
  /**
   * Makes retrying the creation safe: a repeat with the same key answers the task the first one made.
   * A random UUID is sent when none is given, the same one on every automatic retry of this call.
   */
  readonly idempotencyKey?: string;
  /** `Prefer: wait=N`: hold the answer up to N seconds (at most 60) for the task to end. */
  readonly wait?: number;
}

export interface GetTaskOptions extends RequestOptions {
  /** `Prefer: wait=N`: hold the answer up to N seconds (at most 60) for the task to end. */
  readonly wait?: number;
}

export interface UploadFileOptions extends RequestOptions {
  /** The name to store; a `File`'s own name by default. */
  readonly filename?: string;
}

export type GenerateOptions = Omit<CreateTaskOptions, 'wait'> & Omit<WaitOptions, keyof RequestOptions>;

/** The tasks of a listing, newest first, fetched a page at a time as the iteration goes on. */
export interface TaskListing extends AsyncIterable<Task> {
  /** The pages themselves. */
  pages(): AsyncIterable<TaskPage>;
}

export const DEFAULT_BASE_URL = 'http://localhost:8080';
const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_RETRIES = 2;
/** Past a `Prefer: wait`, the time the answer may take to cross the network. */
const WAIT_MARGIN_MS = 10_000;

const taskPath = (taskId: string) => `/v1/tasks/${encodeURIComponent(taskId)}`;
const modelPath = (modelId: string) => `/v1/models/${encodeURIComponent(modelId)}`;

export class VideogenClient {
  private readonly transport: Transport;
  private readonly maxRetries: number;
  private readonly timeout: number;

  constructor(options: VideogenClientOptions) {
    if (!options.apiKey) throw new TypeError('VideogenClient needs an apiKey');
    const fetchFunction = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.timeout = options.timeout ?? DEFAULT_TIMEOUT_MS;
    this.transport = new Transport({
      baseUrl: options.baseUrl ?? DEFAULT_BASE_URL,
      apiKey: options.apiKey,
      fetch: fetchFunction,
      maxRetries: this.maxRetries,
      timeout: this.timeout,
      backoff: options.backoff,
      maxRetryWait: options.maxRetryWait,
    });
  }

  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  /** `POST /v1/videos/generations`: queues a task (status `pending`), with an automatic `Idempotency-Key`. */
  createTask<M extends ModelId>(
    request: GenerationRequest<M> & { readonly model: M },
    options: CreateTaskOptions = {},
  ): Promise<Task<M>> {
    return this.transport.json<Task<M>>({
      method: 'POST',
      path: '/v1/videos/generations',
      json: request,
      headers: {
        'idempotency-key': options.idempotencyKey ?? crypto.randomUUID(),
        ...preferWait(options.wait),
      },
      idempotent: true,
      signal: options.signal,
      timeout: this.timeoutWithWait(options),
      maxRetries: options.maxRetries,
    });
  }

  /** `GET /v1/tasks/{task_id}`. */
  getTask(taskId: string, options: GetTaskOptions = {}): Promise<Task> {
    return this.transport.json<Task>({
      method: 'GET',
      path: taskPath(taskId),
      headers: preferWait(options.wait),
      signal: options.signal,
      timeout: this.timeoutWithWait(options),
      maxRetries: options.maxRetries,
    });
  }

  /**
   * `GET /v1/tasks`: the key's tasks, newest first. Iterate it for the tasks (`for await (const task of
   * client.listTasks())`) or call `pages()` for the pages; a page is fetched only when the iteration needs it.
   */
  listTasks(params: ListTasksParams = {}, options: RequestOptions = {}): TaskListing {
    const transport = this.transport;
    async function* pages(): AsyncGenerator<TaskPage> {
      let after = params.after;
      for (;;) {
        const page = await transport.json<TaskPage>({
          method: 'GET',
          path: '/v1/tasks',
          query: { ...params, after },
          ...perCall(options),
        });
        yield page;
        if (!page.has_more || page.next_cursor === null) return;
        after = page.next_cursor;
      }
    }
    return {
      pages,
      async *[Symbol.asyncIterator]() {
        for await (const page of pages()) yield* page.data;
      },
    };
  }

  /** `POST /v1/tasks/{task_id}/cancel`: a pending or processing task becomes `failed` (`cancelled`). */
  cancelTask(taskId: string, options: RequestOptions = {}): Promise<FailedTask> {
    // Not repeated after a broken connection: a cancel that did happen would come back as a 409.
    return this.transport.json<FailedTask>({
      method: 'POST',
      path: `${taskPath(taskId)}/cancel`,
      idempotent: false,
      ...perCall(options),
    });
  }

  /**
   * `GET /v1/usage`: video seconds (and cost, when the server has prices) of the key's account and environment,
   * grouped by UTC day, model or API key, with totals; completed tasks only.
   */
  getUsage(params: UsageParams = {}, options: RequestOptions = {}): Promise<UsageReport> {
    return this.transport.json<UsageReport>({
      method: 'GET',
      path: '/v1/usage',
      query: { ...params },
      ...perCall(options),
    });
  }

  /** `DELETE /v1/tasks/{task_id}`: removes a final task and its video. */
  deleteTask(taskId: string, options: RequestOptions = {}): Promise<DeletedTask> {
    return this.transport.json<DeletedTask>({
      method: 'DELETE',
      path: taskPath(taskId),
      ...perCall(options),
    });
  }

  /** `GET /v1/tasks/{task_id}/deliveries`: the task's callback messages, oldest first, each with its attempts. */
  async listDeliveries(taskId: string, options: RequestOptions = {}): Promise<Delivery[]> {
    const list = await this.transport.json<{ data: Delivery[] }>({
      method: 'GET',
      path: `${taskPath(taskId)}/deliveries`,
      ...perCall(options),
    });
    return list.data;
  }

  /**
   * `POST /v1/tasks/{task_id}/deliveries/redeliver`: sends the task's current state to its `callback_url` again,
   * as a new message (a new `webhook-id`).
   */
  redeliver(taskId: string, options: RequestOptions = {}): Promise<Delivery> {
    // Not repeated after a broken connection: a repeat would queue a second message.
    return this.transport.json<Delivery>({
      method: 'POST',
      path: `${taskPath(taskId)}/deliveries/redeliver`,
      idempotent: false,
      ...perCall(options),
    });
  }

  /**
   * `GET /v1/models`: every model, in catalogue order, with the inputs it takes as the server routes it, its
   * durations, qualities and aspect ratios, and whether it can run now (`available`).
   */
  async listModels(options: RequestOptions = {}): Promise<Model[]> {
    const list = await this.transport.json<{ data: Model[] }>({
      method: 'GET',
      path: '/v1/models',
      ...perCall(options),
    });
    return list.data;
  }

  /** `GET /v1/models/{model_id}`: one model; an ID the server does not serve throws `model_not_found`. */
  getModel<M extends ModelId>(modelId: M, options: RequestOptions = {}): Promise<Model<M>> {
    return this.transport.json<Model<M>>({
      method: 'GET',
      path: modelPath(modelId),
      ...perCall(options),
    });
  }

  /** `POST /v1/files`: uploads an image, video or audio file; put its `url` in the field of its `kind`. */
  uploadFile(file: Blob, options: UploadFileOptions = {}): Promise<UploadedFile> {
    const form = new FormData();
    const ownName = 'name' in file && typeof file.name === 'string' ? file.name : undefined;
    form.append('file', file, options.filename ?? ownName ?? 'upload');
    return this.transport.json<UploadedFile>({
      method: 'POST',
      path: '/v1/files',
      form,
      idempotent: false,
      signal: options.signal,
      timeout: options.timeout,
      maxRetries: options.maxRetries,
    });
  }

  /**
   * Resolves with the task once it is `completed` or `failed` (a failed task is answered, not thrown),
   * following its event stream or polling (see `WaitOptions.method`). Abort it with `signal`; to give up
   * after a while, pass `AbortSignal.timeout(ms)`.
   */
  waitForTask(taskId: string, options: WaitOptions = {}): Promise<FinalTask> {
    return waitForTask(
      {
        transport: this.transport,
        getTask: (id, requestOptions) => this.getTask(id, requestOptions),
        maxRetries: this.maxRetries,
      },
      taskId,
      options,
    );
  }

  /** Creates a task and waits for its video; throws `TaskFailedError` when the task fails. */
  async generate<M extends ModelId>(
    request: GenerationRequest<M> & { readonly model: M },
    options: GenerateOptions = {},
  ): Promise<CompletedTask<M>> {
    const created = await this.createTask<M>(request, options);
    const final = (await this.waitForTask(created.id, options)) as FinalTask<M>;
    if (final.status === 'failed') throw new TaskFailedError(final);
    return final;
  }

  private timeoutWithWait(options: GetTaskOptions): number {
    const timeout = options.timeout ?? this.timeout;
    return options.wait === undefined ? timeout : Math.max(timeout, options.wait * 1000 + WAIT_MARGIN_MS);
  }
}

/**
 * Only the per-call options, so that whatever else the caller's object holds (it may be a larger options
 * object, or come from JavaScript) never reaches the request and overrides its method, path or idempotency.
 */
function perCall(options: RequestOptions): RequestOptions {
  return { signal: options.signal, timeout: options.timeout, maxRetries: options.maxRetries };
}

function preferWait(seconds: number | undefined): Record<string, string> {
  return seconds === undefined ? {} : { prefer: `wait=${Math.max(0, Math.floor(seconds))}` };
}
