/**
 * Provider callbacks, engine side: where each engine with `callbacks: true` asks its provider to call back, the
 * check at start that the providers can reach it, and the verifier of each such engine's deliveries
 * (docs/engines/README.md#provider-callbacks).
 */
import type { Dispatcher } from 'undici';
import { ConfigError } from '../../config.js';
import type { CallbackVerifier } from '../../ports/provider-callback.js';
import type { ProviderCallbacks } from '../engine-type.js';
import { type EngineOptions, engineTypeOf } from '../engine-types.js';
import { type EnginesConfig, EnginesFileError } from '../engines-file.js';

/** The route providers call back at, followed by the engine's name. */
export const PROVIDER_CALLBACKS_PATH = '/v1/provider-callbacks';

/** Where `engine`'s provider calls back, under the public URL (`VIDEOGEN_PUBLIC_URL`, without a trailing slash). */
export function providerCallbackUrl(publicUrl: string, engine: string): string {
  return `${publicUrl}${PROVIDER_CALLBACKS_PATH}/${encodeURIComponent(engine)}`;
}

interface CallbackEngine {
  readonly name: string;
  readonly options: EngineOptions;
  /** Its type's callbacks. */
  readonly callbacks: ProviderCallbacks<EngineOptions>;
}

/** The engines the config uses whose options ask for callbacks. */
export function callbackEngines(config: EnginesConfig): CallbackEngine[] {
  const found: CallbackEngine[] = [];
  for (const [name, options] of config.engines) {
    const { callbacks } = engineTypeOf(options);
    if (callbacks && 'callbacks' in options && options.callbacks === true)
      found.push({ name, options, callbacks });
  }
  return found;
}

/**
 * Refuses at start engines that ask for callbacks without a public URL to give the providers, or with one that
 * is not https when their provider calls back only at https URLs (Replicate).
 */
export function checkProviderCallbacks(config: EnginesConfig, publicUrl: string | undefined): void {
  const engines = callbackEngines(config);
  if (engines.length === 0) return;
  const names = engines.map(({ name }) => `"${name}"`).join(', ');
  if (!publicUrl) {
    throw new ConfigError(
      'VIDEOGEN_PUBLIC_URL',
      `must be set: engine${engines.length === 1 ? '' : 's'} ${names} ask${engines.length === 1 ? 's' : ''} ` +
        'the provider to call back there (callbacks: true), and it must reach the API processes',
    );
  }
  const httpsOnly = engines.find(({ callbacks }) => callbacks.httpsOnly !== undefined);
  if (httpsOnly && !publicUrl.startsWith('https://')) {
    throw new ConfigError(
      'VIDEOGEN_PUBLIC_URL',
      `must be an https URL: ${httpsOnly.callbacks.httpsOnly}, and engine "${httpsOnly.name}" has callbacks: true`,
    );
  }
}

/** The verifier of each engine with callbacks. Throws `EnginesFileError` for an option the schema cannot check. */
export function createCallbackVerifiers(
  config: EnginesConfig,
  context: { readonly dispatcher?: Dispatcher } = {},
): Map<string, CallbackVerifier> {
  const verifiers = new Map<string, CallbackVerifier>();
  const { dispatcher } = context;
  for (const { name, options, callbacks } of callbackEngines(config)) {
    try {
      verifiers.set(name, callbacks.verifier(name, options, dispatcher));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new EnginesFileError(config.file ?? 'engines', `/engines/${name}/${reason}`);
    }
  }
  return verifiers;
}
