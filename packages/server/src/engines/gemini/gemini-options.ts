/** Options of a `gemini` engine: Google's Veo models through the Gemini API (generativelanguage.googleapis.com). */
import { type Static, Type } from '@sinclair/typebox';
import { HostedOptionFields } from '../hosted/hosted-options.js';

export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com';
/** The documentation's own polling loop waits 10 s between polls; a video takes 11 s to 6 min. */
export const GEMINI_POLL_INTERVAL_MS = 10_000;

export const GeminiOptionsSchema = Type.Object(
  {
    type: Type.Literal('gemini'),
    ...HostedOptionFields,
    /** The Veo model: `veo-3.1-generate-preview`, `veo-3.1-fast-generate-preview`, `veo-3.0-generate-001`… */
    model: Type.String({ pattern: '^veo-[a-z0-9.-]+$' }),
  },
  { additionalProperties: false },
);

export type GeminiOptions = Static<typeof GeminiOptionsSchema>;
