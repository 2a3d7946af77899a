/** Row <-> `TaskRecord`, and the same for API keys and accounts; a new task's usage record. */
import type { Insertable, Selectable } from 'kysely';
import type { GenerationParams } from '../domain/generation-request.js';
import type { TaskRecord } from '../domain/task.js';
import type { UpstreamJob } from '../domain/upstream-job.js';
import type { UsageLimits } from '../domain/usage.js';
import type { Account, ApiKeyRecord, NewTask } from '../ports/store.js';
import type { AccountsTable, ApiKeysTable, TasksTable, UsageRecordsTable } from './database-schema.js';

export type TaskRow = Selectable<TasksTable>;

/** pg returns `bigint` columns as strings; better-sqlite3 as numbers. */
export function millis(value: number | string): number {
  return typeof value === 'number' ? value : Number(value);
}

export function nullableMillis(value: number | string | null): number | null {
  return value === null ? null : millis(value);
}

/**
 * A task's stored params. Tasks stored before `generate_audio` existed read as false: their engines made no
 * sound of their own (only an audio reference's), and one still queued renders as it was asked.
 */
function storedParams(json: string): GenerationParams {
  const params = JSON.parse(json) as Omit<GenerationParams, 'generate_audio'> & { generate_audio?: boolean };
  return { ...params, generate_audio: params.generate_audio ?? false };
}

export function toTaskRecord(row: TaskRow): TaskRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    environment: row.environment,
    model: row.model,
    status: row.status,
    progress: Number(row.progress),
    revision: Number(row.revision),
    params: storedParams(row.params),
    error:
      row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? row.error_code },
    resultKey: row.result_key,
    attempts: Number(row.attempts),
    leaseOwner: row.lease_owner,
    leaseExpiresAt: nullableMillis(row.lease_expires_at),
    createdAt: millis(row.created_at),
    updatedAt: millis(row.updated_at),
    completedAt: nullableMillis(row.completed_at),
    engine: row.engine,
    upstreamJob: row.upstream_job === null ? null : (JSON.parse(row.upstream_job) as UpstreamJob),
    startedAt: nullableMillis(row.started_at),
    costMicros: nullableMillis(row.cost),
  };
}

export function toTaskRow(task: NewTask, now: number): Required<Insertable<TasksTable>> {
  return {
    id: task.id,
    account_id: task.accountId,
    environment: task.environment,
    model: task.model,
    status: 'pending',
    progress: 0,
    revision: 1,
    params: JSON.stringify(task.params),
    callback_url: task.params.callback_url,
    error_code: null,
    error_message: null,
    result_key: null,
    attempts: 0,
    lease_owner: null,
    lease_expires_at: null,
    created_at: now,
    updated_at: now,
    completed_at: null,
    engine: null,
    api_key_id: task.apiKeyId ?? null,
    upstream_job_id: null,
    upstream_job: null,
    started_at: null,
    cost: task.costMicros ?? null,
  };
}

/** The usage record a new task reserves: its seconds and cost, until it completes or fails. */
export function toUsageRow(task: NewTask, now: number): Required<Insertable<UsageRecordsTable>> {
  return {
    task_id: task.id,
    account_id: task.accountId,
    api_key_id: task.apiKeyId ?? null,
    environment: task.environment,
    model: task.model,
    engine: null,
    quality: task.params.quality,
    aspect_ratio: task.params.aspect_ratio,
    width: null,
    height: null,
    video_seconds: task.params.duration,
    cost: task.costMicros ?? null,
    state: 'reserved',
    created_at: now,
    settled_at: null,
  };
}

export function toApiKeyRecord(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    environment: row.environment,
    prefix: row.prefix,
    createdAt: millis(row.created_at),
    lastUsedAt: nullableMillis(row.last_used_at),
    revokedAt: nullableMillis(row.revoked_at),
    expiresAt: nullableMillis(row.expires_at),
    limits: toUsageLimits(row),
  };
}

/** The monthly limit columns of an account or API key row. */
export function toUsageLimits(
  row: Pick<Selectable<AccountsTable>, 'monthly_video_seconds' | 'monthly_budget'>,
): UsageLimits {
  return {
    monthlyVideoSeconds: row.monthly_video_seconds === null ? null : Number(row.monthly_video_seconds),
    monthlyBudgetMicros: nullableMillis(row.monthly_budget),
  };
}

export function toLimitColumns(limits: UsageLimits) {
  return { monthly_video_seconds: limits.monthlyVideoSeconds, monthly_budget: limits.monthlyBudgetMicros };
}

export function toAccount(row: Selectable<AccountsTable>): Account {
  return { id: row.id, createdAt: millis(row.created_at), email: row.email };
}
