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
  },
  { additionalProperties: false },
);

export type ExecOptions = Static<typeof ExecOptionsSchema>;
