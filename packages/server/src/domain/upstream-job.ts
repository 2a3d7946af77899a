/**
 * A job a remote engine's upstream accepted for a task (a provider's task, prediction or operation, a model
 * server's video, a ComfyUI prompt, another gateway's task): stored with the task when the upstream accepts it,
 * so that whichever worker runs the task next resumes the job instead of paying for another
 * (docs/architecture.md#upstream-jobs).
 */
export interface UpstreamHandle {
  /** The upstream's id for the job. */
  readonly id: string;
  /**
   * Whatever else the engine needs to poll, fetch and cancel the job from another process: the URLs a provider
   * answered for it (fal), never a secret.
   */
  readonly data?: Readonly<Record<string, string>>;
}

export interface UpstreamJob extends UpstreamHandle {
  /** The engine, by its name in the engines file, that submitted the job. */
  readonly engine: string;
  /** Epoch milliseconds the upstream accepted it. */
  readonly submittedAt: number;
}
