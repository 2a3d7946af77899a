/** Options of a `local` engine: none but its type (the built-in one needs no entry in the engines file). */
import { type Static, Type } from '@sinclair/typebox';

export const LocalOptionsSchema = Type.Object(
  { type: Type.Literal('local') },
  { additionalProperties: false },
);

export type LocalOptions = Static<typeof LocalOptionsSchema>;
