/** Options of a `comfyui` engine: a ComfyUI server running a workflow exported in API format. */
import { type Static, Type } from '@sinclair/typebox';

export const ComfyUiOptionsSchema = Type.Object(
  {
    type: Type.Literal('comfyui'),
    /** The server's base URL: `http://gpu-1:8188`. */
    base_url: Type.String({ pattern: '^https?://[^\\s]+$' }),
    /** Sent as `Authorization: Bearer …` when ComfyUI sits behind an authenticating proxy. */
    api_key: Type.Optional(Type.String()),
    /**
     * The workflow (File → Export (API)) with `{{placeholders}}` in its string inputs
     * (comfyui/workflow-template.ts); relative to the engines file's directory.
     */
    workflow: Type.String({ minLength: 1 }),
    /** The id of the node whose output is the video; default: the first node that outputs a video file. */
    output_node: Type.Optional(Type.String()),
    /** How often to poll `/history/{id}` when the websocket is not available; default 1000. */
    poll_interval_ms: Type.Optional(Type.Integer({ minimum: 10 })),
  },
  { additionalProperties: false },
);

export type ComfyUiOptions = Static<typeof ComfyUiOptionsSchema>;
