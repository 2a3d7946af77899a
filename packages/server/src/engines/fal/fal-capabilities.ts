/**
 * What a `fal` engine can hand its model: the inputs its `input` template has placeholders for (any, with
 * `unsupported_inputs: drop`, where the template leaves out what it has no place for).
 */
import type { EngineCapabilities } from '../../domain/engine-capabilities.js';
import { templateCapabilities } from '../hosted/input-template.js';
import type { FalOptions } from './fal-options.js';

export function falCapabilities(options: FalOptions): EngineCapabilities {
  return templateCapabilities(options);
}
