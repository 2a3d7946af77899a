/**
 * What a `replicate` engine can hand its model: the inputs its `input` template has placeholders for
 * (`{{image}}` a first frame, `{{last_image}}` a last frame, `{{images}}`/`{{image_2}}`… references). With
 * `unsupported_inputs: drop` nothing is refused at creation, and the template simply leaves out what it has no
 * place for.
 */
import { ANY_INPUT, type EngineCapabilities } from '../../domain/engine-capabilities.js';
import { InputTemplate } from '../hosted/input-template.js';
import type { ReplicateOptions } from './replicate-options.js';

export function replicateCapabilities(options: ReplicateOptions): EngineCapabilities {
  if (options.unsupported_inputs === 'drop') return ANY_INPUT;
  try {
    return new InputTemplate(options.input).capabilities();
  } catch {
    // A template with an unknown placeholder stops the worker that would build this engine, naming the
    // placeholder; an API process that builds no engines has nothing better to refuse with.
    return ANY_INPUT;
  }
}
