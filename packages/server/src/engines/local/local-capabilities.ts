/** What a `local` engine can take: anything, since the procedural renderer draws every input itself. */
import { ANY_INPUT, type EngineCapabilities } from '../../domain/engine-capabilities.js';

export function localCapabilities(): EngineCapabilities {
  return ANY_INPUT;
}
