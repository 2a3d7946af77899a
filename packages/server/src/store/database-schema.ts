/** The tables as Kysely sees them; shared by the SQLite and PostgreSQL stores. */
import type { ColumnType } from 'kysely';
import type { DeliveryEvent, DeliveryStatus } from '../domain/delivery.js';
import type { TaskErrorCode } from '../domain/errors.js';
import type { AspectRatio, Quality } from '../domain/frame-size.js';
import type { ModelId } from '../domain/models.js';
import type { Environment, TaskStatus } from '../domain/task.js';
import type { UploadKind } from '../domain/uploaded-file.js';

/** Epoch milliseconds in a `bigint` column: better-sqlite3 returns a number, pg a string. */
export type Millis = ColumnType<number | string, number, number>;
export type NullableMillis = ColumnType<number | string | null, number | null, number | null>;
/** Micro-units of money in a `bigint` column (read as a number or a string, like `Millis`). */
export type NullableMicros = NullableMillis;

export interface AccountsTable {
  id: string;
  created_at: Millis;
  /** The owner's sign-in (migration 0007): lower-cased email and argon2id hash; null for key-only accounts. */
  email: string | null;
  password_hash: string | null;
  /** Monthly limits (migration 0009): video seconds, and micro-units of the prices' currency; null is none. */
  monthly_video_seconds: number | null;
  monthly_budget: NullableMicros;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  environment: Environment;
  prefix: string;
  hash: string;
  created_at: Millis;
  last_used_at: NullableMillis;
  revoked_at: NullableMillis;
  /** A rotated key works until then (migration 0007). */
  expires_at: NullableMillis;
  /** Monthly limits (migration 0009), as on accounts. */
  monthly_video_seconds: number | null;
  monthly_budget: NullableMicros;
}

export interface TasksTable {
  id: string;
  account_id: string;
  environment: Environment;
  model: ModelId;
  status: TaskStatus;
  progress: number;
  /** Raised by one at every write of `status` or `progress` (migration 0014). */
  revision: number;
  /** `GenerationParams` as JSON. */
  params: string;
  /** `params.callback_url` again, for SQL (migration 0003). */
  callback_url: string | null;
  error_code: TaskErrorCode | null;
  error_message: string | null;
  result_key: string | null;
  attempts: number;
  lease_owner: string | null;
  lease_expires_at: NullableMillis;
  created_at: Millis;
  updated_at: Millis;
  completed_at: NullableMillis;
  /** The engine the task runs (or last ran) on, by its name in the engines file; null until claimed (0008). */
  engine: string | null;
  /** The API key the task was created with; null from the dashboard (migration 0009). */
  api_key_id: string | null;
  /** That job's `id` again, for finding its task by it (migration 0016). */
  upstream_job_id: string | null;
  /** The `UpstreamJob` its remote engine accepted, as JSON; null until then (migration 0013). */
  upstream_job: string | null;
  /** When its current (or last) run was claimed; null until claimed (migration 0017). */
  started_at: NullableMillis;
  /** Micro-units: the cost its usage record reserved at creation; null without a price (migration 0017). */
  cost: NullableMicros;
}

/** An engine's circuit breaker (migration 0008, engines/circuit-breaker.ts). */
/** A deleted failed task's upstream job, waiting for a worker to cancel it (migration 0015). */
export interface DeletedTaskUpstreamJobsTable {
  task_id: string;
  engine: string;
  upstream_job: string;
  deleted_at: Millis;
}

export interface EngineCircuitsTable {
  engine: string;
  failures: number;
  open_until: NullableMillis;
  trial_until: NullableMillis;
  updated_at: Millis;
}

export type UsageState = 'reserved' | 'settled';

/** What a task used (migration 0009): reserved at creation, settled at completion, deleted when it fails. */
export interface UsageRecordsTable {
  task_id: string;
  account_id: string;
  api_key_id: string | null;
  environment: Environment;
  model: ModelId;
  engine: string | null;
  quality: Quality;
  aspect_ratio: AspectRatio;
  width: number | null;
  height: number | null;
  video_seconds: number;
  /** Micro-units; a `bigint` column, so a string from pg. */
  cost: NullableMicros;
  state: UsageState;
  created_at: Millis;
  settled_at: NullableMillis;
}

/** A running worker pool and the model IDs it serves (migration 0010). */
export interface WorkersTable {
  id: string;
  /** JSON array of model IDs. */
  models: string;
  started_at: Millis;
  seen_at: Millis;
  expires_at: Millis;
}

export interface SecretsTable {
  name: string;
  value: string;
  created_at: Millis;
}

export interface WebhookSecretsTable {
  secret: string;
  account_id: string;
  created_at: Millis;
  expires_at: NullableMillis;
}

export interface WebhookDeliveriesTable {
  id: string;
  task_id: string;
  account_id: string;
  event: DeliveryEvent;
  url: string;
  host: string;
  /** The task snapshot (`PublicTask`) as JSON. */
  payload: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: NullableMillis;
  lease_owner: string | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  number: number;
  attempted_at: Millis;
  duration_ms: number;
  http_status: number | null;
  error: string | null;
}

export interface IdempotencyKeysTable {
  account_id: string;
  environment: Environment;
  key: string;
  /** SHA-256 (hex) of the request the key first came with. */
  request_hash: string;
  task_id: string;
  created_at: Millis;
}

export interface FilesTable {
  id: string;
  account_id: string;
  environment: Environment;
  kind: UploadKind;
  content_type: string;
  filename: string;
  bytes: Millis;
  created_at: Millis;
}

export interface DashboardSessionsTable {
  token_hash: string;
  account_id: string;
  csrf_token: string;
  environment: Environment;
  created_at: Millis;
  expires_at: Millis;
}

export interface SignInFailuresTable {
  email: string;
  failed_at: Millis;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  tasks: TasksTable;
  engine_circuits: EngineCircuitsTable;
  workers: WorkersTable;
  secrets: SecretsTable;
  webhook_secrets: WebhookSecretsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  idempotency_keys: IdempotencyKeysTable;
  files: FilesTable;
  dashboard_sessions: DashboardSessionsTable;
  sign_in_failures: SignInFailuresTable;
  usage_records: UsageRecordsTable;
  deleted_task_upstream_jobs: DeletedTaskUpstreamJobsTable;
}
