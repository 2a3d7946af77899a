/**
 * The body of the `POST /v1/videos/generations` a relay engine sends: the task's own parameters, asset URLs
 * the other server can read, and no `callback_url` (this service polls, and its client's callback is its own).
 * `generate_audio` goes only when false: left out, the other server makes sound where its engines can (and a
 * server from before the field takes the request too); `web_search` only when true, for the same reason.
 * `return_last_frame` never goes: this server takes the last frame from the video it receives.
 */
import {
  ASPECT_RATIOS,
  type AspectRatio,
  type FixedAspectRatio,
  frameSize,
} from '../../domain/frame-size.js';
import type { AssetField } from '../../domain/models.js';
import type { LocalAsset, RenderJob } from '../../ports/engine.js';
import { relayAssetUrl } from './relay-asset-url.js';

export interface RelayCreateBody {
  model: string;
  prompt: string;
  duration: number;
  quality: string;
  aspect_ratio: string;
  seed: number;
  image_urls?: string[];
  video_urls?: string[];
  audio_urls?: string[];
  generate_audio?: false;
  web_search?: true;
}

const FIXED_RATIOS = ASPECT_RATIOS.filter((r): r is FixedAspectRatio => r !== 'adaptive');

/**
 * The ratio `job.frame` was made from. `adaptive` is sent resolved, so the other server renders the very
 * frame this one promised and the result needs only a re-mux.
 */
function frameRatio(job: RenderJob): AspectRatio {
  const { width, height } = job.frame;
  const match = FIXED_RATIOS.find((ratio) => {
    const size = frameSize(job.params.quality, ratio);
    return size.width === width && size.height === height;
  });
  return match ?? job.params.aspect_ratio;
}

async function assetUrls(urls: readonly string[], assets: readonly LocalAsset[]): Promise<string[]> {
  return Promise.all(
    urls.map((url, index) =>
      relayAssetUrl(
        url,
        assets.find((a) => a.index === index),
      ),
    ),
  );
}

export async function relayCreateBody(job: RenderJob, model: string | undefined): Promise<RelayCreateBody> {
  const { params } = job;
  const body: RelayCreateBody = {
    model: model ?? job.model.id,
    prompt: params.prompt,
    duration: params.duration,
    quality: params.quality,
    aspect_ratio: frameRatio(job),
    seed: params.seed,
    ...(params.generate_audio ? {} : { generate_audio: false as const }),
    ...(params.web_search && { web_search: true as const }),
  };
  const fields: [AssetField, readonly LocalAsset[]][] = [
    ['image_urls', job.images],
    ['video_urls', job.videos],
    ['audio_urls', job.audios],
  ];
  // A field the model does not take is refused even when empty, so empty lists are left out.
  for (const [field, assets] of fields) {
    if (params[field].length > 0) body[field] = await assetUrls(params[field], assets);
  }
  return body;
}
