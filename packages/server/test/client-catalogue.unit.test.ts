/**
 * The client SDK stands alone (no server code in it), so it spells the interface's catalogues out again: the
 * model IDs and their modes, the request's value ranges, the task statuses and error codes, the task's shape,
 * the model's shape (`GET /v1/models`), the asset counts of each mode.
 * This keeps the two spellings one: any change on either side that the other lacks fails here.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as client from '@videogen/client';
import { type ErrorCode, TASK_ERROR_CODES } from '../src/domain/errors.js';
import { ASPECT_RATIOS, QUALITIES } from '../src/domain/frame-size.js';
import { GenerationRequestSchema, PROMPT_MAX_LENGTH, SEED_MAX } from '../src/domain/generation-request.js';
import { BUILT_IN_MODELS, MAX_REFERENCE_ASSETS, MODEL_IDS } from '../src/domain/models.js';

const MODELS = new Map(BUILT_IN_MODELS.map((model) => [model.id, model]));

import { type PublicTask, TASK_STATUSES } from '../src/domain/task.js';
import type { UsageBucket, UsageReport } from '../src/domain/usage-report.js';
import type { PublicModel, PublicModelList } from '../src/models/model-list.js';
import type { DeletedTask, PublicTaskList } from '../src/tasks/task-service.js';

// `false`, not `never`, when they differ: `never` would satisfy `Assert`'s `extends true`, and pass.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type SameKeys<A, B> = Same<keyof A, keyof B>;
type Assert<T extends true> = T;
/** The keys of any member of a union (`keyof` of a union has only those every member has). */
type AnyKey<T> = T extends unknown ? keyof T : never;

/**
 * The codes only the dashboard's own routes and page files answer with: an SDK for the public API need not know
 * them.
 */
type DashboardOnlyCode =
  | 'invalid_credentials'
  | 'not_signed_in'
  | 'invalid_csrf_token'
  | 'api_key_not_found'
  | 'precondition_failed';

/** The codes only the route providers call back at answers with: no client of the API calls it. */
type ProviderCallbackOnlyCode = 'invalid_callback_signature' | 'upstream_unavailable';

// Compile-time: these fail the build when the shapes part.
export type Checks = [
  Assert<Same<Exclude<ErrorCode, DashboardOnlyCode | ProviderCallbackOnlyCode>, client.ApiErrorCode>>,
  Assert<Same<client.BuiltInModelId, (typeof MODEL_IDS)[number]>>,
  // Not `keyof (CompletedTask & FailedTask)`: their `status` literals clash, making the intersection `never`.
  Assert<Same<keyof PublicTask, AnyKey<client.Task>>>,
  Assert<SameKeys<PublicTask['task_info'], client.TaskInfo>>,
  Assert<SameKeys<PublicTask['usage'], client.TaskUsage>>,
  Assert<SameKeys<PublicTaskList, client.TaskPage>>,
  Assert<SameKeys<DeletedTask, client.DeletedTask>>,
  Assert<SameKeys<PublicModel, client.Model>>,
  Assert<SameKeys<PublicModel['inputs'], client.Model['inputs']>>,
  Assert<SameKeys<PublicModelList, client.ModelList>>,
  Assert<SameKeys<UsageReport, client.UsageReport>>,
  Assert<SameKeys<UsageBucket, client.UsageBucket>>,
  Assert<Same<UsageReport['group_by'], client.UsageGrouping>>,
  // The image request's tuple says 1 or 2 images, as ASSET_LIMITS (checked against the server below) does.
  Assert<Same<client.ImageToVideoRequest['image_urls']['length'], 1 | 2>>,
];

describe('the client SDK and the server share their catalogues', () => {
  it('model IDs and the mode of each', () => {
    assert.deepEqual([...client.MODEL_IDS].sort(), [...MODEL_IDS].sort());
    for (const id of MODEL_IDS) assert.equal(client.modeOf(id), MODELS.get(id)?.mode, id);
    for (const mode of ['text', 'image', 'reference'] as const) {
      for (const fast of [false, true]) {
        const model = MODELS.get(client.modelFor(mode, { fast }));
        assert.deepEqual([model?.mode, model?.fast], [mode, fast]);
      }
    }
  });

  it('value ranges of the request', () => {
    assert.deepEqual(client.QUALITIES, QUALITIES);
    assert.deepEqual(client.ASPECT_RATIOS, ASPECT_RATIOS);
    const { minimum, maximum } = GenerationRequestSchema.properties.duration as {
      minimum: number;
      maximum: number;
    };
    assert.deepEqual(
      client.DURATIONS,
      Array.from({ length: maximum - minimum + 1 }, (_, i) => minimum + i),
    );
    assert.equal(client.MAX_SEED, SEED_MAX);
    assert.equal(client.MAX_PROMPT_LENGTH, PROMPT_MAX_LENGTH);
    assert.equal(client.MAX_REFERENCE_ASSETS, MAX_REFERENCE_ASSETS);
  });

  it('asset counts of each mode', () => {
    for (const id of MODEL_IDS) {
      const model = MODELS.get(id);
      assert.deepEqual(client.ASSET_LIMITS[client.modeOf(id)], model?.assets, id);
    }
    const image = client.ASSET_LIMITS.image.image_urls;
    assert.deepEqual(
      [image.min, image.max],
      [1, 2],
      'what ImageToVideoRequest["image_urls"] spells as a tuple',
    );
  });

  it('task statuses and failure codes', () => {
    assert.deepEqual(client.TASK_STATUSES, TASK_STATUSES);
    assert.deepEqual([...client.TASK_ERROR_CODES].sort(), [...TASK_ERROR_CODES].sort());
  });
});
