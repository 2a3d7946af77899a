/**
 * A reverse proxy on loopback in front of a fake upstream, as a rate-limiting gateway or a load balancer sits
 * in front of a real one: it passes every request through unchanged, records what went by (method, path,
 * status, when), and answers the requests a test scripts itself (a 429 with `Retry-After`, a 503, an error page
 * that echoes the request's headers back) without passing them on. What the fake behind it refuses or accepts
 * is still the fake's to decide.
 */
import {
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { LoopbackServer, readBody } from '../fakes/fake-http.js';

export interface ProxiedRequest {
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  readonly status: number;
  /** When its answer was started (epoch ms). */
  readonly at: number;
  /** Whether the proxy answered it itself. */
  readonly scripted: boolean;
}

export interface ScriptedAnswer {
  /** Which requests it answers. */
  matches(method: string, path: string): boolean;
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** The body, from the request (an error page quoting its headers). JSON `{"error":…}` when absent. */
  body?(request: { readonly path: string; readonly headers: IncomingHttpHeaders }): string;
  /** How many matching requests it answers; once used up it is dropped. Infinity: every one. */
  times: number;
}

export class ScriptedProxy {
  readonly requests: ProxiedRequest[] = [];
  readonly #script: ScriptedAnswer[] = [];
  readonly #target: URL;
  readonly #http: LoopbackServer;

  private constructor(target: string) {
    this.#target = new URL(target);
    this.#http = new LoopbackServer((req, res) => this.#handle(req, res));
  }

  /** A proxy to `target` (an origin, `http://127.0.0.1:1234`). */
  static async start(target: string): Promise<ScriptedProxy> {
    const proxy = new ScriptedProxy(target);
    await proxy.#http.listen();
    return proxy;
  }

  get url(): string {
    return this.#http.url;
  }

  /** Answers the next `times` requests `matches` picks out with `answer`, instead of passing them on. */
  script(answer: ScriptedAnswer): void {
    this.#script.push(answer);
  }

  /** Forgets every scripted answer not yet used. */
  unscript(): void {
    this.#script.length = 0;
  }

  /** The recorded requests `matches` picks out. */
  matching(matches: (method: string, path: string) => boolean): ProxiedRequest[] {
    return this.requests.filter((request) => matches(request.method, request.path));
  }

  close(): Promise<void> {
    return this.#http.close();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const body = await readBody(req);
    const scripted = this.#script.find((answer) => answer.matches(method, path));
    if (scripted) {
      scripted.times -= 1;
      if (scripted.times <= 0) this.#script.splice(this.#script.indexOf(scripted), 1);
      this.requests.push({ method, path, status: scripted.status, at: Date.now(), scripted: true });
      const text =
        scripted.body?.({ path, headers: req.headers }) ??
        JSON.stringify({ error: { message: 'scripted by the test' } });
      res.writeHead(scripted.status, { 'content-type': 'application/json', ...scripted.headers });
      res.end(text);
      return;
    }
    // The Host header as the client sent it: a fake that builds URLs from it hands out the proxy's.
    const forward = httpRequest(
      { host: this.#target.hostname, port: this.#target.port, method, path, headers: req.headers },
      (answer) => {
        this.requests.push({ method, path, status: answer.statusCode ?? 0, at: Date.now(), scripted: false });
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', (error) => {
      this.requests.push({ method, path, status: 502, at: Date.now(), scripted: false });
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${error.message}`);
    });
    forward.end(body);
  }
}
