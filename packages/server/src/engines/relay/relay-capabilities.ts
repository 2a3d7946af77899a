/**
 * What a `relay` engine can take: anything, web search and `asset://` ids included. The other server checks the
 * inputs against its own engines and refuses what they cannot take, so nothing is refused here.
 */
import { ANY_INPUT, type EngineCapabilities } from '../../domain/engine-capabilities.js';

export function relayCapabilities(): EngineCapabilities {
  return { ...ANY_INPUT, webSearch: true, assetIds: true };
}
