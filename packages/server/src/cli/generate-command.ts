/**
 * `videogen generate`: makes a video through the API with the SDK. Local files given as `--image`, `--video`
 * or `--audio` are uploaded first; the task is then followed (a progress bar when stderr is a terminal) and
 * its MP4 downloaded to `--output`.
 */
import { createWriteStream, openAsBlob } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { constants } from 'node:os';
import { basename, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { parseArgs } from 'node:util';
import {
  type AssetUrl,
  type CompletedTask,
  type GenerationMode,
  type GenerationOptions,
  type GenerationRequest,
  isAspectRatio,
  isBuiltInModelId,
  isImageToVideoModel,
  isQuality,
  isTextToVideoModel,
  MAX_SEED,
  type ModelId,
  modelFor,
  type OperatorModelRequest,
  TaskFailedError,
  type VideogenClient,
} from '@videogen/client';
import { API_CLIENT_OPTIONS, apiClientFrom, printJson, reportingApiErrors } from './api-client-options.js';
import { downloadFetch } from './download-fetch.js';
import { progressBar } from './progress-bar.js';
import { UsageError } from './usage-error.js';

const MODES: readonly GenerationMode[] = ['text', 'image', 'reference'];

const OPTIONS = {
  ...API_CLIENT_OPTIONS,
  model: { type: 'string' },
  mode: { type: 'string' },
  fast: { type: 'boolean', default: false },
  prompt: { type: 'string', short: 'p' },
  image: { type: 'string', multiple: true, default: [] as string[] },
  video: { type: 'string', multiple: true, default: [] as string[] },
  audio: { type: 'string', multiple: true, default: [] as string[] },
  duration: { type: 'string' },
  quality: { type: 'string' },
  'aspect-ratio': { type: 'string' },
  seed: { type: 'string' },
  'callback-url': { type: 'string' },
  'no-sound': { type: 'boolean', default: false },
  output: { type: 'string', short: 'o' },
  'no-wait': { type: 'boolean', default: false },
} as const;

interface AssetArguments {
  readonly image: readonly string[];
  readonly video: readonly string[];
  readonly audio: readonly string[];
}

/** `--model`, or `--mode` (and `--fast`), or the mode the assets imply: none → text, images only → image. */
function chooseModel(
  values: { model?: string; mode?: string; fast: boolean },
  assets: AssetArguments,
): ModelId {
  if (values.model !== undefined) {
    if (values.mode !== undefined) throw new UsageError('give --model or --mode, not both');
    // Any ID or alias the server has: it answers `model_not_found` with its own list for one it lacks.
    return values.model;
  }
  if (values.mode !== undefined) {
    const mode = MODES.find((candidate) => candidate === values.mode);
    if (!mode) throw new UsageError(`--mode must be one of ${MODES.join(', ')}`);
    return modelFor(mode, { fast: values.fast });
  }
  const count = assets.image.length + assets.video.length + assets.audio.length;
  const imagesOnly = assets.image.length === count && count <= 2;
  return modelFor(count === 0 ? 'text' : imagesOnly ? 'image' : 'reference', { fast: values.fast });
}

function commonOptions(values: {
  prompt: string;
  duration?: string;
  quality?: string;
  'aspect-ratio'?: string;
  seed?: string;
  'callback-url'?: string;
  'no-sound': boolean;
}): CommonOptions {
  const duration = values.duration === undefined ? undefined : Number(values.duration);
  // Each model's own range is the server's to check (`videogen models` lists them).
  if (duration !== undefined && !(/^\d+$/.test(values.duration ?? '') && duration > 0)) {
    throw new UsageError('--duration must be a whole number of seconds');
  }
  const quality = values.quality;
  if (quality !== undefined && !isQuality(quality))
    throw new UsageError('--quality must be 480p, 720p or 1080p');
  const aspectRatio = values['aspect-ratio'];
  if (aspectRatio !== undefined && !isAspectRatio(aspectRatio)) {
    throw new UsageError('--aspect-ratio must be one of 16:9, 9:16, 1:1, 4:3, 3:4, 21:9, adaptive');
  }
  const seed = values.seed === undefined ? undefined : Number(values.seed);
  if (seed !== undefined && (!/^\d+$/.test(values.seed ?? '') || seed > MAX_SEED)) {
    throw new UsageError(`--seed must be a whole number from 0 to ${MAX_SEED}`);
  }
  return {
    prompt: values.prompt,
    ...(duration === undefined ? {} : { duration }),
    ...(quality === undefined ? {} : { quality }),
    ...(aspectRatio === undefined ? {} : { aspect_ratio: aspectRatio }),
    ...(seed === undefined ? {} : { seed }),
    ...(values['callback-url'] === undefined ? {} : { callback_url: values['callback-url'] }),
    ...(values['no-sound'] ? { generate_audio: false } : {}),
  };
}

/** What every request takes, its duration any whole number of seconds (the model's range is the server's). */
type CommonOptions = Omit<GenerationOptions, 'duration'> & { readonly duration?: number };

/** The request for `model`, or a usage error saying which assets a built-in model needs or refuses. */
function buildRequest(
  model: ModelId,
  options: CommonOptions,
  assets: { image: AssetUrl[]; video: AssetUrl[]; audio: AssetUrl[] },
): GenerationRequest<string> {
  const { image, video, audio } = assets;
  if (!isBuiltInModelId(model)) {
    // A model of the operator's: the server knows its mode and limits, and says what it refuses.
    const request: OperatorModelRequest<string> = {
      ...options,
      model,
      ...(image.length > 0 ? { image_urls: image } : {}),
      ...(video.length > 0 ? { video_urls: video } : {}),
      ...(audio.length > 0 ? { audio_urls: audio } : {}),
    };
    return request as GenerationRequest<string>;
  }
  // A duration outside the built-in range goes as it is: the server's refusal names the range.
  const common = options as GenerationOptions;
  if (isTextToVideoModel(model)) {
    if (image.length + video.length + audio.length > 0) {
      throw new UsageError(`${model} takes no --image, --video or --audio`);
    }
    return { ...common, model };
  }
  if (isImageToVideoModel(model)) {
    if (video.length + audio.length > 0) throw new UsageError(`${model} takes no --video or --audio`);
    const [first, last, ...more] = image;
    if (first === undefined || more.length > 0) {
      throw new UsageError(`${model} needs one --image (the first frame) or two (the first and the last)`);
    }
    return { ...common, model, image_urls: last === undefined ? [first] : [first, last] };
  }
  const withAudio = audio.length > 0 ? { audio_urls: audio } : {};
  const [firstImage, ...moreImages] = image;
  const [firstVideo, ...moreVideos] = video;
  if (firstImage !== undefined) {
    return {
      ...common,
      model,
      image_urls: [firstImage, ...moreImages],
      ...(video.length > 0 ? { video_urls: video } : {}),
      ...withAudio,
    };
  }
  if (firstVideo !== undefined) {
    return { ...common, model, video_urls: [firstVideo, ...moreVideos], ...withAudio };
  }
  throw new UsageError(`${model} needs at least one --image or --video (audio cannot be the only reference)`);
}

function isUrl(value: string): boolean {
  return /^(https?:|data:)/i.test(value);
}

/** URLs as they are; local files uploaded, in their order, and replaced by the URL of the upload. */
async function resolveAssets(
  client: VideogenClient,
  values: readonly string[],
  signal: AbortSignal,
): Promise<AssetUrl[]> {
  const urls: AssetUrl[] = [];
  for (const value of values) {
    if (isUrl(value)) {
      urls.push(value);
      continue;
    }
    let file: Blob;
    try {
      if (!(await stat(value)).isFile()) throw new Error('not a file');
      file = await openAsBlob(value);
    } catch (error) {
      const reason =
        (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
      throw new Error(`cannot read ${value}: ${reason}`);
    }
    urls.push((await client.uploadFile(file, { filename: basename(value), signal })).url);
  }
  return urls;
}

/**
 * Streams the video to a temporary file beside `path`, then moves it into place. The temporary file is removed
 * when anything fails or `signal` aborts (Ctrl-C), so no partial video is left behind.
 */
export async function download(url: string, path: string, signal?: AbortSignal): Promise<void> {
  let response: Response;
  try {
    response = await downloadFetch(url, signal);
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    const cause =
      (error as Error).cause instanceof Error ? `: ${((error as Error).cause as Error).message}` : '';
    throw new Error(`download_failed: ${(error as Error).message}${cause} (the video at ${url})`, {
      cause: error,
    });
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    throw new Error(`download_failed: HTTP ${response.status} for the video at ${url}`);
  }
  const partial = `${path}.part`;
  try {
    await pipeline(
      Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>),
      createWriteStream(partial),
      { signal },
    );
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw signal?.aborted ? signal.reason : error;
  }
}

/** Ctrl-C or SIGTERM while a command runs. */
class Interrupted extends Error {
  constructor(readonly signalName: NodeJS.Signals) {
    super('interrupted');
  }
}

/**
 * While it is installed, SIGINT and SIGTERM abort `signal` instead of killing the process at once, so that
 * what is under way stops and cleans up (a partial download is removed); a second one exits at once.
 */
function interruptions(): { readonly signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSignal = (name: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(128 + (constants.signals[name] ?? 0));
    controller.abort(new Interrupted(name));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

export async function generateCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  if (values.prompt !== undefined && positionals.length > 0) {
    throw new UsageError('give the prompt once: as --prompt or as the argument');
  }
  const prompt = values.prompt ?? positionals.join(' ');
  if (!prompt.trim()) throw new UsageError('generate needs --prompt TEXT');
  const assetArguments: AssetArguments = { image: values.image, video: values.video, audio: values.audio };
  const model = chooseModel(values, assetArguments);
  const common = commonOptions({ ...values, prompt });
  // Checked before uploading anything, with placeholders standing for the files.
  buildRequest(model, common, {
    image: [...assetArguments.image],
    video: [...assetArguments.video],
    audio: [...assetArguments.audio],
  });
  const client = apiClientFrom(values);

  const interrupt = interruptions();
  const { signal } = interrupt;
  const bar = progressBar();
  /** The task being waited for: Ctrl-C leaves it running on the server. */
  let running: string | undefined;
  try {
    return await reportingApiErrors(async () => {
      const request = buildRequest(model, common, {
        image: await resolveAssets(client, assetArguments.image, signal),
        video: await resolveAssets(client, assetArguments.video, signal),
        audio: await resolveAssets(client, assetArguments.audio, signal),
      });
      const created = await client.createTask(request, { signal });
      if (values['no-wait']) {
        if (values.json) printJson(created);
        else process.stdout.write(`${created.id}\n`);
        return 0;
      }

      let task: CompletedTask;
      running = created.id;
      try {
        const final = await client.waitForTask(created.id, {
          onProgress: (update) => bar.update(update),
          signal,
        });
        running = undefined;
        bar.finish();
        if (final.status === 'failed') {
          if (values.json) printJson({ task: final });
          throw new TaskFailedError(final);
        }
        task = final;
      } finally {
        bar.finish();
      }
      const output = resolve(values.output ?? `${task.id}.mp4`);
      await download(task.results[0], output, signal);
      if (values.json) printJson({ task, output });
      else process.stdout.write(`${output}\n`);
      return 0;
    });
  } catch (error) {
    if (!(signal.reason instanceof Interrupted)) throw error;
    bar.finish();
    const still = running === undefined ? '' : `; task ${running} goes on (videogen tasks cancel ${running})`;
    process.stderr.write(`videogen: interrupted${still}\n`);
    return 128 + (constants.signals[signal.reason.signalName] ?? 0);
  } finally {
    interrupt.dispose();
  }
}
