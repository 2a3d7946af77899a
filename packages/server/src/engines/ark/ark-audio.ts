/**
 * A reference audio clip as Ark takes it, inline: WAV or MP3 only, each at most 15 MB
 * (`data:audio/<format>;base64,…`, the create page, "audio_url"). Any other audio the service accepted (AAC,
 * Ogg, FLAC, …) is converted to 16-bit PCM WAV first, which every ffmpeg can write.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TaskFailure } from '../../domain/errors.js';
import { isAssetIdUrl } from '../../domain/generation-request.js';
import { runAbortableFfmpeg } from '../../media/abortable-ffmpeg.js';
import { mediaType } from '../../media/media-type.js';
import type { LocalAsset } from '../../ports/engine.js';

const MAX_BYTES = 15 * 1024 * 1024;
/** Ark's name for each format it takes, as the doc's `data:audio/<format>` has it. */
const ARK_FORMATS: Readonly<Record<string, string>> = { 'audio/wav': 'wav', 'audio/mpeg': 'mp3' };

export interface AudioConversion {
  readonly label: string;
  readonly signal: AbortSignal;
  /** Where converted clips are written. */
  readonly workDir: string;
  readonly ffmpegPath?: string;
}

async function convertToWav(asset: LocalAsset, conversion: AudioConversion): Promise<Buffer> {
  const output = join(conversion.workDir, `ark-audio-${asset.index}.wav`);
  const args = ['-v', 'error', '-nostdin', '-y', '-i', asset.path, '-map', '0:a:0', '-vn'];
  await runAbortableFfmpeg(
    [...args, '-ac', '2', '-ar', '44100', '-c:a', 'pcm_s16le', output],
    { signal: conversion.signal, ...(conversion.ffmpegPath && { ffmpegPath: conversion.ffmpegPath }) },
    () =>
      new TaskFailure(
        'invalid_asset',
        `${asset.field}[${asset.index}]: ${conversion.label} could not convert it to WAV`,
      ),
  );
  return readFile(output);
}

/** The `url` of an `audio_url` content item for `asset`; an `asset://` id of Ark's asset library as it is. */
export async function arkAudioUrl(asset: LocalAsset, conversion: AudioConversion): Promise<string> {
  if (isAssetIdUrl(asset.url)) return asset.url;
  const bytes = await readFile(asset.path);
  const format = ARK_FORMATS[mediaType(bytes, asset.path, asset.field)];
  if (format && bytes.length <= MAX_BYTES) return `data:audio/${format};base64,${bytes.toString('base64')}`;
  const wav = await convertToWav(asset, conversion);
  if (wav.length > MAX_BYTES) {
    throw new TaskFailure(
      'invalid_asset',
      `${asset.field}[${asset.index}]: ${conversion.label} can send audio of at most 15 MB as WAV; this clip is ${(wav.length / 1024 / 1024).toFixed(1)} MB.`,
    );
  }
  return `data:audio/wav;base64,${wav.toString('base64')}`;
}
