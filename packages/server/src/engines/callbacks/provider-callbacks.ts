/**
 * Provider callbacks, engine side: where each engine with `callbacks: true` asks its provider to call back, the
 * check at start that the providers can reach it, and the verifier of each such engine's deliveries
 * (docs/engines/README.md#provider-callbacks).
 */
import type { Dispatcher } from 'undici';
import { ConfigError } from '../../config.js';
import type { CallbackVerifier } from '../../ports/provider-callback.js';
import { ArkCallbackVerifier } from '../ark/ark-callback.js';
import { type EngineOptions, type EnginesConfig, EnginesFileError } from '../engines-file.js';
import { FalWebhookVerifier } from '../fal/fal-webhook.js';
import { REPLICATE_BASE_URL } from '../replicate/replicate-options.js';
import { ReplicateWebhookVerifier } from '../replicate/replicate-webhook.js';

/** The route providers call back at, followed by the engine's name. */
export const PROVIDER_CALLBACKS_PATH = '/v1/provider-callbacks';

/** Where `engine`'s provider calls back, under the public URL (`VIDEOGEN_PUBLIC_URL`, without a trailing slash). */
export function providerCallbackUrl(publicUrl: string, engine: string): string {
  return `${publicUrl}${PROVIDER_CALLBACKS_PATH}/${encodeURIComponent(engine)}`;
}

type CallbackEngineOptions = Extract<EngineOptions, { type: 'ark' | 'replicate' | 'fal' }>;

/** The engines the config uses whose options ask for callbacks. */
export function callbackEngines(config: EnginesConfig): [string, CallbackEngineOptions][] {
  const found: [string, CallbackEngineOptions][] = [];
  for (const [name, options] of config.engines) {
    if ('callbacks' in options && options.callbacks === true) found.push([name, options]);
  }
  return found;
}

/**
 * Refuses at start engines that ask for callbacks without a public URL to give the providers, or (Replicate,
 * which takes only HTTPS webhook URLs) with one that is not https.
 */
export function checkProviderCallbacks(config: EnginesConfig, publicUrl: string | undefined): void {
  const engines = callbackEngines(config);
  if (engines.length === 0) return;
  const names = engines.map(([name]) => `"${name}"`).join(', ');
  if (!publicUrl) {
    throw new ConfigError(
      'VIDEOGEN_PUBLIC_URL',
      `must be set: engine${engines.length === 1 ? '' : 's'} ${names} ask${engines.length === 1 ? 's' : ''} ` +
        'the provider to call back there (callbacks: true), and it must reach the API processes',
    );
  }
  const replicate = engines.find(([, options]) => options.type === 'replicate');
  if (replicate && !publicUrl.startsWith('https://')) {
    throw new ConfigError(
      'VIDEOGEN_PUBLIC_URL',
      `must be an https URL: Replicate takes only HTTPS webhook URLs, and engine "${replicate[0]}" has callbacks: true`,
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
  for (const [name, options] of callbackEngines(config)) {
    try {
      verifiers.set(name, verifierOf(name, options, dispatcher));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new EnginesFileError(config.file ?? 'engines', `/engines/${name}/${reason}`);
    }
  }
  return verifiers;
}

function verifierOf(
  name: string,
  options: CallbackEngineOptions,
  dispatcher: Dispatcher | undefined,
): CallbackVerifier {
  switch (options.type) {
    case 'ark':
      return new ArkCallbackVerifier();
    case 'replicate':
      return new ReplicateWebhookVerifier({
        label: `replicate engine "${name}"`,
        baseUrl: options.base_url ?? REPLICATE_BASE_URL,
        apiKey: options.api_key,
        ...(options.webhook_secret && { secret: options.webhook_secret }),
        ...(dispatcher && { dispatcher }),
      });
    case 'fal':
      return new FalWebhookVerifier({
        label: `fal engine "${name}"`,
        ...(options.webhook_jwks_url && { jwksUrl: options.webhook_jwks_url }),
        ...(dispatcher && { dispatcher }),
      });
  }
}
