// @ts-check
/**
 * The models as the server serves them (`GET /v1/models`). The dashboard keeps no catalogue of its own: the
 * model IDs, modes, asset limits, durations, qualities and aspect ratios it offers are the server's.
 */
import { api } from './api.js';

/**
 * @typedef {'image_urls' | 'video_urls' | 'audio_urls'} AssetField
 * @typedef {{ min: number, max: number }} AssetLimits
 * @typedef {{
 *   id: string,
 *   mode: string,
 *   fast: boolean,
 *   inputs: Partial<Record<AssetField, AssetLimits>>,
 *   durations: number[],
 *   qualities: string[],
 *   aspect_ratios: string[],
 *   available: boolean,
 *   unavailable_reason?: string,
 * }} Model
 */

/**
 * The models in the server's order.
 * @param {AbortSignal} signal
 * @returns {Promise<Model[]>}
 */
export async function listModels(signal) {
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
