/** ffprobe, read as the few facts videogen needs about a media file. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ffprobePath } from './ffmpeg-paths.js';

const run = promisify(execFile);

export interface ProbedStream {
  readonly type: 'video' | 'audio' | 'other';
  readonly codec: string;
  readonly width?: number;
  readonly height?: number;
  readonly pixelFormat?: string;
  /** Width of a pixel over its height, for video streams that state it (anamorphic video: other than 1). */
  readonly sampleAspectRatio?: number;
  /** Degrees the picture is turned for display; ffmpeg decodes it turned, so a quarter turn swaps its sides. */
  readonly rotation?: number;
  /** Frames per second, for video streams. */
  readonly frameRate?: number;
  readonly frames?: number;
  /** Samples per second and channel count, for audio streams. */
  readonly sampleRate?: number;
  readonly channels?: number;
}

export interface ProbeResult {
  /** ffprobe's format name, e.g. `mov,mp4,m4a,3gp,3g2,mj2`, `png_pipe`, `image2`, `mp3`. */
  readonly format: string;
  /** Seconds; 0 where the container has none (still images). */
  readonly duration: number;
  readonly streams: readonly ProbedStream[];
}

interface RawProbe {
  format?: { format_name?: string; duration?: string };
  streams?: {
    codec_type?: string;
    codec_name?: string;
    width?: number;
    height?: number;
    pix_fmt?: string;
    sample_aspect_ratio?: string;
    tags?: { rotate?: string };
    side_data_list?: { rotation?: number }[];
    avg_frame_rate?: string;
    nb_frames?: string;
    sample_rate?: string;
    channels?: number;
  }[];
}

function rate(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const [n, d] = value.split('/').map(Number);
  if (!n || !d) return undefined;
  return n / d;
}

/** Probes a file; rejects when ffprobe cannot read it. */
export async function probe(path: string, signal?: AbortSignal): Promise<ProbeResult> {
  const { stdout } = await run(
    ffprobePath(),
    ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path],
    { signal, maxBuffer: 4 * 1024 * 1024, timeout: 30_000 },
  );
  const raw = JSON.parse(stdout) as RawProbe;
  return {
    format: raw.format?.format_name ?? '',
    duration: Number(raw.format?.duration ?? 0) || 0,
    streams: (raw.streams ?? []).map((s) => ({
      type: s.codec_type === 'video' || s.codec_type === 'audio' ? s.codec_type : 'other',
      codec: s.codec_name ?? '',
      width: s.width,
      height: s.height,
      pixelFormat: s.pix_fmt,
      sampleAspectRatio: rate(s.sample_aspect_ratio?.replace(':', '/')),
      rotation:
        s.side_data_list?.find((d) => d.rotation !== undefined)?.rotation ??
        (Number(s.tags?.rotate) || undefined),
      frameRate: rate(s.avg_frame_rate),
      frames: s.nb_frames ? Number(s.nb_frames) : undefined,
      sampleRate: s.sample_rate ? Number(s.sample_rate) : undefined,
      channels: s.channels,
    })),
  };
}
