/**
 * What a `comfyui` engine can hand its workflow: the images its placeholders take (`{{image}}` or `{{image_1}}`
 * a first frame, `{{last_image}}` or `{{image_2}}` a last frame, `{{image_N}}` and `{{last_image}}` reference
 * images). Workflows take no video or audio placeholders, so they take no reference videos or audio.
 */
import { resolve } from 'node:path';
import { ANY_INPUT, type EngineCapabilities, highestNumbered } from '../../domain/engine-capabilities.js';
import type { ComfyUiOptions } from './comfyui-options.js';
import { WorkflowTemplate } from './workflow-template.js';

/** `baseDir`: the engines file's directory, which `workflow` is relative to. */
export function comfyUiCapabilities(options: ComfyUiOptions, baseDir: string): EngineCapabilities {
  let used: ReadonlySet<string>;
  try {
    used = WorkflowTemplate.load(resolve(baseDir, options.workflow)).placeholders;
  } catch {
    // An unreadable or invalid workflow stops the worker that would build this engine, naming the problem; an
    // API process without the file has nothing to refuse with.
    return ANY_INPUT;
  }
  const firstFrame = used.has('image') || used.has('image_1');
  const numbered = Math.max(firstFrame ? 1 : 0, highestNumbered(used, 'image', 9));
  return {
    firstFrame,
    lastFrame: used.has('last_image') || used.has('image_2'),
    // `{{last_image}}` is the last of the images, one past the numbered ones.
    referenceImages: numbered + (used.has('last_image') ? 1 : 0),
    referenceVideos: 0,
    referenceAudios: 0,
    audio: false,
  };
}
