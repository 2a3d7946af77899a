/**
 * What an `exec` engine can hand its command: the inputs its command has placeholders for (`{image}` or
 * `{image_1}` a first frame, `{last_image}` or `{image_2}` a last frame, `{image_N}`, `{video_N}`, `{audio_N}`
 * that many references). A command that names no input takes none: the request's assets would be downloaded
 * and never given to the generator. A command with `{generate_audio}` (`true` or `false`) makes sound when
 * asked, and its video's audio track is kept then; one without makes none.
 */
import { ANY_INPUT, type EngineCapabilities, highestNumbered } from '../../domain/engine-capabilities.js';
import { commandPlaceholders, parseCommand } from './command-template.js';
import type { ExecOptions } from './exec-options.js';

export function execCapabilities(options: ExecOptions): EngineCapabilities {
  let used: ReadonlySet<string>;
  try {
    used = commandPlaceholders(parseCommand(options.command, 'exec engine'));
  } catch {
    // A command with an unknown placeholder stops the worker that would build this engine, naming it; an API
    // process that builds no engines has nothing better to refuse with.
    return ANY_INPUT;
  }
  const firstFrame = used.has('image') || used.has('image_1');
  // `{last_image}` is the second of exactly two images: with it a command takes two.
  const images = Math.max(
    firstFrame ? 1 : 0,
    highestNumbered(used, 'image', 9),
    used.has('last_image') ? 2 : 0,
  );
  return {
    firstFrame,
    lastFrame: used.has('last_image') || used.has('image_2'),
    referenceImages: images,
    referenceVideos: highestNumbered(used, 'video', 3),
    referenceAudios: highestNumbered(used, 'audio', 3),
    audio: used.has('generate_audio'),
  };
}
