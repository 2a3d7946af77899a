/** Options of an `exec` engine in the engines file: a command-line generator run once per task. */
import { type Static, Type } from '@sinclair/typebox';

export const ExecOptionsSchema = Type.Object(
  {
    type: Type.Literal('exec'),
    /**
     * The program and its arguments, never run through a shell. `{placeholders}` are filled from the job
     * (exec/command-template.ts). An element that is itself a list is a group: it is left out whole when one
     * of its placeholders has no value (`["--image", "{image_1}"]` for a task without images).
     */
    command: Type.Array(Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1 })]), {
      minItems: 1,
    }),
    /** Working directory; relative to the engines file's directory. */
    cwd: Type.Optional(Type.String()),
    /** Extra environment variables for the command (the worker's own environment is passed on too). */
    env: Type.Optional(Type.Record(Type.String(), Type.String())),
    /** The command is killed after this long (and the task fails with `timeout`); default: the task's limit. */
    timeout_seconds: Type.Optional(Type.Integer({ minimum: 1 })),
    /**
     * Frame sizes the generator accepts (`1280x720`); the size placeholders then carry the nearest one
     * (orientation, then shape, then area) and the result is conformed to the request. Default: the exact frame.
     */
    sizes: Type.Optional(Type.Array(Type.String({ pattern: '^[1-9][0-9]*x[1-9][0-9]*$' }), { minItems: 1 })),
    /** The frame rate the generator makes (Wan 2.2 A14B: 16); `{fps}` and `{frames}` follow it. Default 24. */
    fps: Type.Optional(Type.Integer({ minimum: 1, maximum: 120 })),
    /**
     * The generator takes frame counts of the form step × n + 1 (Wan: 4, LTX-Video: 8): `{frames}` is then the
     * smallest such count that covers the duration. Default: any count (duration × fps).
     */
    frame_step: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
  },
  { additionalProperties: false },
);

export type ExecOptions = Static<typeof ExecOptionsSchema>;
