/**
 * How the fakes call back (Ark's `callback_url`, Replicate's `webhook`, fal's `fal_webhook`): a POST of the
 * delivery to the URL the engine gave, through `routes`, which stand for the network between the provider and the
 * gateway. A test names the gateway by a public URL it cannot listen on (`https://videogen.test`, as behind a
 * TLS-terminating proxy) and routes that origin to the server's own `http://127.0.0.1:<port>`.
 */

export interface SentCallback {
  readonly url: string;
  /** The status answered, or undefined when no answer came in time (or the connection failed). */
  readonly status: number | undefined;
  /** Which attempt of the delivery it was, from 1. */
  readonly attempt: number;
  readonly body: string;
}

export class CallbackNetwork {
  readonly #routes = new Map<string, string>();

  /** Deliveries to `publicOrigin` go to `target` (an origin) instead. */
  route(publicOrigin: string, target: string): void {
    this.#routes.set(new URL(publicOrigin).origin, new URL(target).origin);
  }

  /** Where a request to `url` really goes. */
  resolve(url: string): URL {
    const parsed = new URL(url);
    const target = this.#routes.get(parsed.origin);
    return target ? new URL(`${parsed.pathname}${parsed.search}`, target) : parsed;
  }

  /** POSTs `body` as JSON with `headers`; the status answered, or undefined without one within `timeoutMs`. */
  async post(
    url: string,
    body: string,
    headers: Readonly<Record<string, string>>,
    timeoutMs: number,
  ): Promise<number | undefined> {
    try {
      const answer = await fetch(this.resolve(url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      await answer.arrayBuffer();
      return answer.status;
    } catch {
      return undefined;
    }
  }
}

/**
 * Sends a delivery as the providers do: again while it is not answered 2xx, up to `attempts` times, `retryDelayMs`
 * apart (doubling); each attempt is recorded in `sent` as it ends. Resolves with the last attempt's record.
 */
export async function deliverWithRetries(options: {
  readonly network: CallbackNetwork;
  readonly url: string;
  readonly body: string;
  /** The headers of each attempt (signed anew: a timestamp is the attempt's). */
  readonly headers: (attempt: number) => Readonly<Record<string, string>>;
  readonly attempts: number;
  readonly retryDelayMs: number;
  readonly timeoutMs: number;
  readonly sent: SentCallback[];
  readonly onSent?: (sent: SentCallback) => void;
}): Promise<SentCallback> {
  let delay = options.retryDelayMs;
  for (let attempt = 1; ; attempt++) {
    const status = await options.network.post(
      options.url,
      options.body,
      options.headers(attempt),
      options.timeoutMs,
    );
    const record: SentCallback = { url: options.url, status, attempt, body: options.body };
    options.sent.push(record);
    options.onSent?.(record);
    if ((status !== undefined && status >= 200 && status < 300) || attempt >= options.attempts) return record;
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay *= 2;
  }
}
