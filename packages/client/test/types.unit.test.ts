/**
 * The per-model rules the request types carry, proven by the compiler: every `@ts-expect-error` below must
 * be an error (tsc fails the build when one is not), and every `expectTypeOf` must hold. Nothing here calls
 * the network: the calls sit in functions that only the type checker reads.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expectTypeOf } from 'expect-type';
import {
  type BuiltInModelId,
  type CompletedTask,
  type FailedTask,
  type FinalTask,
  type GenerationRequest,
  type GenerationRequestFor,
  type ImageToVideoRequest,
  isFinal,
  modelFor,
  modeOf,
  type ReferenceToVideoRequest,
  type Task,
  type TaskError,
  type TextToVideoRequest,
  VideogenClient,
  VideogenError,
  type VideogenErrorDetails,
} from '../src/index.js';

const image = 'https://example.com/first.png';
const video = 'https://example.com/clip.mp4';
const audio = 'https://example.com/music.mp3';

test('text-to-video takes a prompt and no assets', () => {
  const plain: GenerationRequest = { model: 'videogen-2.0-text-to-video', prompt: 'a red kite' };
  const full: TextToVideoRequest = {
    model: 'videogen-2.0-fast-text-to-video',
    prompt: 'a red kite',
    duration: 4,
    quality: '480p',
    aspect_ratio: '9:16',
    seed: 7,
    callback_url: 'https://hooks.example.com/videogen',
    generate_audio: false,
  };
  // @ts-expect-error text models take no image_urls
  const withImage: GenerationRequest = {
    model: 'videogen-2.0-text-to-video',
    prompt: 'x',
    image_urls: [image],
  };
  // @ts-expect-error text models take no video_urls
  const withVideo: GenerationRequest = {
    model: 'videogen-2.0-text-to-video',
    prompt: 'x',
    video_urls: [video],
  };
  // @ts-expect-error text models take no audio_urls
  const withAudio: GenerationRequest = {
    model: 'videogen-2.0-fast-text-to-video',
    prompt: 'x',
    audio_urls: [audio],
  };
  // @ts-expect-error the prompt is required
  const noPrompt: GenerationRequest = { model: 'videogen-2.0-text-to-video' };
  assert.ok([plain, full, withImage, withVideo, withAudio, noPrompt]);
});

test('image-to-video needs one or two images and nothing else', () => {
  const firstFrame: GenerationRequest = {
    model: 'videogen-2.0-image-to-video',
    prompt: 'x',
    image_urls: [image],
  };
  const firstAndLast: ImageToVideoRequest = {
    model: 'videogen-2.0-fast-image-to-video',
    prompt: 'x',
    image_urls: [image, image],
  };
  // @ts-expect-error image models need image_urls
  const noImage: GenerationRequest = { model: 'videogen-2.0-image-to-video', prompt: 'x' };
  // @ts-expect-error at least one image
  const empty: GenerationRequest = { model: 'videogen-2.0-image-to-video', prompt: 'x', image_urls: [] };
  // @ts-expect-error at most two images (first and last frame)
  const three: GenerationRequest = {
    model: 'videogen-2.0-image-to-video',
    prompt: 'x',
    image_urls: [image, image, image],
  };
  // @ts-expect-error image models take no video_urls
  const withVideo: GenerationRequest = {
    model: 'videogen-2.0-image-to-video',
    prompt: 'x',
    image_urls: [image],
    video_urls: [video],
  };
  // @ts-expect-error image models take no audio_urls
  const withAudio: GenerationRequest = {
    model: 'videogen-2.0-fast-image-to-video',
    prompt: 'x',
    image_urls: [image],
    audio_urls: [audio],
  };
  assert.ok([firstFrame, firstAndLast, noImage, empty, three, withVideo, withAudio]);
});

test('reference-to-video needs an image or a video; audio alone is refused', () => {
  const images: GenerationRequest = {
    model: 'videogen-2.0-reference-to-video',
    prompt: 'x',
    image_urls: [image],
  };
  const videos: GenerationRequest = {
    model: 'videogen-2.0-fast-reference-to-video',
    prompt: 'x',
    video_urls: [video],
    audio_urls: [audio],
  };
  const everything: ReferenceToVideoRequest = {
    model: 'videogen-2.0-reference-to-video',
    prompt: 'image 1 dances to audio 1 in the style of video 1',
    image_urls: [image, image],
    video_urls: [video],
    audio_urls: [audio],
    aspect_ratio: 'adaptive',
  };
  // @ts-expect-error audio cannot be the only reference
  const audioOnly: GenerationRequest = {
    model: 'videogen-2.0-reference-to-video',
    prompt: 'x',
    audio_urls: [audio],
  };
  // @ts-expect-error no reference at all
  const nothing: GenerationRequest = { model: 'videogen-2.0-reference-to-video', prompt: 'x' };
  // @ts-expect-error empty lists are no reference either
  const emptyLists: GenerationRequest = {
    model: 'videogen-2.0-reference-to-video',
    prompt: 'x',
    image_urls: [],
  };
  assert.ok([images, videos, everything, audioOnly, nothing, emptyLists]);
});

test('shared fields take only their documented values', () => {
  // @ts-expect-error an unknown model
  const unknownModel: GenerationRequest = { model: 'videogen-3.0-text-to-video', prompt: 'x' };
  // @ts-expect-error duration is 4 to 15 seconds
  const tooLong: GenerationRequest = { model: 'videogen-2.0-text-to-video', prompt: 'x', duration: 30 };
  // @ts-expect-error quality is 480p, 720p or 1080p
  const fourK: GenerationRequest = { model: 'videogen-2.0-text-to-video', prompt: 'x', quality: '2160p' };
  // @ts-expect-error not a listed aspect ratio
  const ratio: GenerationRequest = { model: 'videogen-2.0-text-to-video', prompt: 'x', aspect_ratio: '2:1' };
  // @ts-expect-error an unknown field
  const typo: GenerationRequest = { model: 'videogen-2.0-text-to-video', prompt: 'x', duraton: 5 };
  assert.ok([unknownModel, tooLong, fourK, ratio, typo]);
});

test('GenerationRequestFor picks the request type of a model', () => {
  expectTypeOf<GenerationRequestFor<'videogen-2.0-fast-text-to-video'>>().toEqualTypeOf<TextToVideoRequest>();
  expectTypeOf<GenerationRequestFor<'videogen-2.0-image-to-video'>>().toEqualTypeOf<ImageToVideoRequest>();
  expectTypeOf<
    GenerationRequestFor<'videogen-2.0-reference-to-video'>
  >().toEqualTypeOf<ReferenceToVideoRequest>();
  expectTypeOf(modeOf('videogen-2.0-fast-image-to-video')).toEqualTypeOf<'image'>();
  expectTypeOf(modelFor('reference', { fast: true })).toEqualTypeOf<BuiltInModelId>();
});

test('tasks narrow on status: results when completed, error when failed', () => {
  function inspect(task: Task): string {
    // @ts-expect-error results exist only on a completed task
    const maybe = task.results;
    if (task.status === 'completed') {
      expectTypeOf(task).toEqualTypeOf<CompletedTask>();
      expectTypeOf(task.results[0]).toEqualTypeOf<string>();
      return task.results[0];
    }
    if (task.status === 'failed') {
      expectTypeOf(task.error).toEqualTypeOf<TaskError>();
      return task.error.code;
    }
    return String(maybe);
  }
  function finished(task: Task): FinalTask | undefined {
    return isFinal(task) ? task : undefined;
  }
  assert.equal(typeof inspect, 'function');
  assert.equal(typeof finished, 'function');
});

test('client methods are typed per model and per answer', () => {
  const client = new VideogenClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'vg_dev_x' });
  async function calls(): Promise<void> {
    const created = await client.createTask({
      model: 'videogen-2.0-fast-image-to-video',
      prompt: 'x',
      image_urls: [image],
    });
    expectTypeOf(created.model).toEqualTypeOf<'videogen-2.0-fast-image-to-video'>();
    // @ts-expect-error createTask checks the per-model rules too
    await client.createTask({ model: 'videogen-2.0-image-to-video', prompt: 'x' });
    // @ts-expect-error and refuses assets a text model does not take
    await client.createTask({ model: 'videogen-2.0-text-to-video', prompt: 'x', video_urls: [video] });
    // @ts-expect-error and unknown fields
    await client.createTask({ model: 'videogen-2.0-text-to-video', prompt: 'x', colour: 'red' });

    const done = await client.generate({
      model: 'videogen-2.0-reference-to-video',
      prompt: 'x',
      video_urls: [video],
    });
    expectTypeOf(done).toEqualTypeOf<CompletedTask<'videogen-2.0-reference-to-video'>>();
    expectTypeOf(await client.waitForTask('task-unified-x')).toEqualTypeOf<FinalTask>();
    expectTypeOf(await client.cancelTask('task-unified-x')).toEqualTypeOf<FailedTask>();
    expectTypeOf(await client.deleteTask('task-unified-x'))
      .toHaveProperty('deleted')
      .toEqualTypeOf<true>();
    expectTypeOf(await client.uploadFile(new Blob(['x'])))
      .toHaveProperty('kind')
      .toEqualTypeOf<'image' | 'video' | 'audio'>();
    for await (const task of client.listTasks({ status: 'completed', limit: 50 })) {
      expectTypeOf(task).toEqualTypeOf<Task>();
    }
    // @ts-expect-error not a status
    client.listTasks({ status: 'done' });
    try {
      await client.getTask('task-unified-x');
    } catch (error) {
      if (error instanceof VideogenError) {
        expectTypeOf(error.status).toEqualTypeOf<number | undefined>();
        expectTypeOf(error.requestId).toEqualTypeOf<string | undefined>();
        expectTypeOf(error.param).toEqualTypeOf<string | undefined>();
        // The constructor's details are exported, for subclasses and tests that build errors.
        expectTypeOf<ConstructorParameters<typeof VideogenError>[2]>().toEqualTypeOf<
          VideogenErrorDetails | undefined
        >();
      }
    }
  }
  assert.equal(typeof calls, 'function');
});
