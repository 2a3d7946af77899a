/**
 * One engine type, whole: its options, how an engine of it is built, what it can take. Every folder of engines/
 * exports one from `<type>/<type>-engine-type.ts`, and `engine-types.ts` lists them; the engines file, the
 * engines' construction, the input checks and the provider callbacks read that list and nothing else about a type.
 */
import type { Static, TObject } from '@sinclair/typebox';
import type { Dispatcher } from 'undici';
import type { EngineCapabilities } from '../domain/engine-capabilities.js';
import type { Engine } from '../ports/engine.js';
import type { CallbackVerifier } from '../ports/provider-callback.js';
import type { EngineContext } from './engine-context.js';

export interface EngineType<Schema extends TObject = TObject> {
  /** What an engines file writes as `type:`. */
  readonly type: Static<Schema>['type'] & string;
  /** Its options in the engines file (beside the routing keys every engine may have), `type` included. */
  readonly optionsSchema: Schema;
  /**
   * Whether its work is a job on another server, which `job_timeout_seconds` bounds; `local` and `exec` render on
   * this machine.
   */
  readonly hasUpstreamJobs: boolean;
  /** Without upstream jobs: what bounds its work instead, named when an engines file gives it `job_timeout_seconds`. */
  readonly ownTimeout?: string;
  /**
   * Builds the engine `name` of these options. Throws, with a message naming the option, for a problem the
   * schema cannot see (an unknown placeholder, an unreadable workflow).
   */
  create(name: string, options: Static<Schema>, context: EngineContext): Engine;
  /** What it can take, from its options alone; `baseDir` is the engines file's directory. */
  capabilities(options: Static<Schema>, baseDir: string): EngineCapabilities;
  /** For a type whose provider can call back (`callbacks: true`, engines/callbacks/provider-callbacks.ts). */
  readonly callbacks?: ProviderCallbacks<Static<Schema>>;
}

export interface ProviderCallbacks<Options> {
  /** Checks the deliveries of the engine `name`. Throws, starting with the option's name, for a wrong option. */
  verifier(name: string, options: Options, dispatcher: Dispatcher | undefined): CallbackVerifier;
  /** Set when the provider calls back only at https URLs: why, said when `VIDEOGEN_PUBLIC_URL` is not https. */
  readonly httpsOnly?: string;
}
