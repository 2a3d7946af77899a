/**
 * What a `replicate` engine can hand its model: the inputs its `input` template has placeholders for
 * (`{{image}}` a first frame, `{{last_image}}` a last frame, `{{images}}`/`{{image_2}}`… references). With
 * `unsupported_inputs: drop` nothing is refused at creation, and the template simply leaves out what it has no
 * place for.
 */
import type { EngineCapabilities } from '../../domain/engine-capabilities.js';
import { templateCapabilities } from '../hosted/input-template.js';
import type { ReplicateOptions } from './replicate-options.js';

export function replicateCapabilities(options: ReplicateOptions): EngineCapabilities {
  return templateCapabilities(options);
}
