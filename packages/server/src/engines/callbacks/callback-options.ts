/** The option of the engines whose providers can call back (ark, replicate, fal), spread into their schemas. */
import { Type } from '@sinclair/typebox';

export const CallbackOptionFields = {
  /**
   * Asks the provider to call back when the job changes (`POST {VIDEOGEN_PUBLIC_URL}/v1/provider-callbacks/{engine}`),
   * which makes the job's next poll happen at once; polling goes on and stays the source of truth. Default false.
   */
  callbacks: Type.Optional(Type.Boolean()),
};
