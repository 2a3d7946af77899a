/** A minimal HTTP client for tests: real requests over 127.0.0.1, JSON in and out. */
import type { PublicTask } from '../../src/domain/task.js';

export interface ApiResponse<T = unknown> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

export interface ErrorBody {
  error: { code: string; message: string; type: string; param?: string; request_id: string };
}

export class Api {
  constructor(
    readonly baseUrl: string,
    readonly key?: string,
  ) {}

  withKey(key: string | undefined): Api {
    return new Api(this.baseUrl, key);
  }

  async request<T = unknown>(
    method: string,
    path: string,
    init: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.key) headers.authorization = `Bearer ${this.key}`;
    let body: string | undefined = init.rawBody;
    if (init.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(init.body);
    }
    const response = await fetch(this.baseUrl + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    if (response.headers.get('content-type')?.includes('json') && text) parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed as T };
  }

  create(body: unknown): Promise<ApiResponse<PublicTask & ErrorBody>> {
    return this.request('POST', '/v1/videos/generations', { body });
  }

  get(taskId: string): Promise<ApiResponse<PublicTask & ErrorBody>> {
    return this.request('GET', `/v1/tasks/${taskId}`);
  }

  /**
   * Polls until `done(task)` holds or `timeoutMs` passes, and returns the last task seen. Also checks that
   * progress never decreases.
   */
  async pollUntil(
    taskId: string,
    done: (task: PublicTask) => boolean,
    timeoutMs: number,
    intervalMs = 100,
  ): Promise<PublicTask> {
    const deadline = Date.now() + timeoutMs;
    let lastProgress = 0;
    for (;;) {
      const { status, body } = await this.get(taskId);
      if (status !== 200) throw new Error(`GET task answered ${status}: ${JSON.stringify(body)}`);
      if (body.progress < lastProgress)
        throw new Error(`progress went down from ${lastProgress} to ${body.progress}`);
      lastProgress = body.progress;
      if (done(body) || Date.now() >= deadline) return body;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }

  /** Polls until the task is final, recording each status seen in `seen`. */
  async waitForFinal(taskId: string, timeoutMs = 120_000, seen?: Set<string>): Promise<PublicTask> {
    const task = await this.pollUntil(
      taskId,
      (t) => {
        seen?.add(t.status);
        return t.status === 'completed' || t.status === 'failed';
      },
      timeoutMs,
      200,
    );
    if (task.status !== 'completed' && task.status !== 'failed') {
      throw new Error(`task ${taskId} did not finish within ${timeoutMs} ms`);
    }
    return task;
  }
}
