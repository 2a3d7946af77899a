// @ts-check
/**
 * The models as the server serves them (`GET /v1/models`). The dashboard keeps no catalogue of its own: the
 * model IDs, modes, asset limits, durations, qualities and aspect ratios it offers are the server's.
 */
import { api } from './api.js';

/**
 * The models in the server's order.
 * @param {AbortSignal} signal
 * @returns {Promise<readonly Model[]>}
 */
export async function listModels(signal) {
  /** @type {ModelList} */
  const list = await api('/v1/models', { signal });
  return list.data;
}

/**
 * A mode as the page names it: `reference` is "Reference to video".
 * @param {string} mode
 */
export function modeLabel(mode) {
  return `${mode.charAt(0).toUpperCase()}${mode.slice(1)} to video`;
}
