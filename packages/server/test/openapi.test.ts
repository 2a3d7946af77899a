/**
 * `GET /openapi.json` and `GET /docs`: the document is valid OpenAPI 3.1 for an independent validator, it lists
 * every route the running server has (and nothing else), it documents authentication, errors and headers as the
 * server actually answers them, and the reference page loads nothing from a CDN.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { ERROR_CATALOGUE } from '../src/domain/errors.js';
import { ERROR_STATUSES } from '../src/http/error-statuses.js';
import { VERSION } from '../src/version.js';
import { isPage, serverRoutes, undocumentedRoutes } from './helpers/server-routes.js';
import { startTestService, type TestService } from './helpers/test-service.js';

interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  responses: Record<
    string,
    { headers?: Record<string, unknown>; content?: Record<string, { schema?: { $ref?: string } }> }
  >;
}
interface Document {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<
      string,
      { properties?: Record<string, { properties?: Record<string, { enum?: string[] }> }> }
    >;
    headers: Record<string, unknown>;
    securitySchemes: Record<string, { type: string; scheme?: string }>;
  };
}

const HTTP_METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options', 'trace'];
const ERROR_REF = '#/components/schemas/Error';
/**
 * The error bodies of an operation: the OpenAI Videos API's are OpenAI's envelope, or either body where the server
 * answers the status before any route too (`AnyError`), or only before (`Error`).
 */
function errorRefs(operation: Operation): string[] {
  return (operation as { tags?: string[] }).tags?.includes('OpenAI Videos')
    ? ['#/components/schemas/OpenAIError', '#/components/schemas/AnyError', ERROR_REF]
    : [ERROR_REF];
}
/** Hosts the reference page must not load anything from. */
const CDN_PATTERN =
  /cdn\.jsdelivr|unpkg\.com|cdnjs|jsdelivr\.net|fonts\.googleapis|fonts\.scalar\.com|esm\.sh|skypack/i;

const operations = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => ({ path, method, operation })),
  );

let server: TestService;
let doc: Document;
let key: string;

before(async () => {
  server = await startTestService();
  key = (await server.newKey()).key;
  const response = await fetch(`${server.url}/openapi.json`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  doc = (await response.json()) as Document;
});
after(() => server.close());

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document for @apidevtools/swagger-parser', async () => {
    assert.match(doc.openapi, /^3\.1\./);
    assert.equal(doc.info.title, 'videogen');
    assert.equal(doc.info.version, VERSION);
    await SwaggerParser.validate(structuredClone(doc) as never);
  });

  it('needs no API key', async () => {
    const response = await fetch(`${server.url}/openapi.json`, { headers: { authorization: 'Bearer nope' } });
    assert.equal(response.status, 200);
  });

  it('lists every route of the running server, and only those', () => {
    const app = server.service.app;
    const routes = serverRoutes(app).filter((route) => !isPage(route.url));
    // The listing is parsed: check the parse against Fastify before trusting it.
    assert.ok(routes.length >= 10, `only ${routes.length} routes parsed`);
    for (const route of routes) {
      assert.ok(
        app.hasRoute(route as never),
        `parsed a route the server lacks: ${route.method} ${route.url}`,
      );
    }
    const missing = undocumentedRoutes(app, doc.paths);
    assert.deepEqual(missing, [], `routes missing from /openapi.json: ${missing.join(', ')}`);

    const byUrl = new Map<string, Set<string>>();
    for (const { method, url } of routes) byUrl.set(url, (byUrl.get(url) ?? new Set()).add(method));
    for (const { path, method } of operations(doc)) {
      const url = path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
      assert.ok(byUrl.get(url)?.has(method.toUpperCase()), `documented but not served: ${method} ${path}`);
    }
  });

  it('has unique operation ids, a summary and a tag on every operation', () => {
    const ids = new Set<string>();
    for (const { path, method, operation } of operations(doc)) {
      const op = operation as Operation & { summary?: string; tags?: string[] };
      assert.ok(op.operationId, `${method} ${path} has no operationId`);
      assert.ok(!ids.has(op.operationId), `operationId ${op.operationId} is not unique`);
      ids.add(op.operationId);
      assert.ok(op.summary, `${method} ${path} has no summary`);
      assert.ok(op.tags?.length, `${method} ${path} has no tag`);
    }
  });

  it('documents the bearer key, and the 401 wherever the server asks for it', async () => {
    assert.deepEqual(doc.components.securitySchemes.apiKey, {
      ...doc.components.securitySchemes.apiKey,
      type: 'http',
      scheme: 'bearer',
    });
    let authenticated = 0;
    for (const { path, method, operation } of operations(doc)) {
      const url = path.replace(/\{[A-Za-z0-9_]+\}/g, 'task-unified-00000000000000000000000000');
      const response = await fetch(server.url + url, { method: method.toUpperCase() });
      await response.arrayBuffer();
      // A key or, for the dashboard's own routes, the session cookie.
      const documented = (operation.security ?? []).length > 0;
      const name = `${method.toUpperCase()} ${path}`;
      if (response.status === 401) {
        authenticated += 1;
        assert.ok(documented, `${name} asks for credentials but does not document its security`);
        const unauthorized = operation.responses['401'];
        assert.ok(unauthorized, `${name} answers 401 but does not document it`);
        const ref = unauthorized.content?.['application/json']?.schema?.$ref ?? '';
        assert.ok(errorRefs(operation).includes(ref), `${name}: ${ref}`);
      } else {
        assert.ok(!documented, `${name} documents credentials but answered ${response.status} without any`);
        // Sign-in needs no credentials to be called; its 401 is the answer to wrong ones. So is a provider
        // callback's, to a signature that does not verify.
        if (operation.operationId !== 'signIn' && operation.operationId !== 'takeProviderCallback') {
          assert.equal(operation.responses['401'], undefined, `${name} documents a 401 it does not answer`);
        }
      }
    }
    assert.ok(authenticated >= 5, `only ${authenticated} authenticated operations`);
  });

  it('documents every error with the error body, its codes from the catalogue', () => {
    const code = doc.components.schemas.Error?.properties?.error?.properties?.code;
    assert.deepEqual(code?.enum, Object.keys(ERROR_CATALOGUE));
    for (const { path, method, operation } of operations(doc)) {
      if (!path.startsWith('/v1/')) continue;
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        const ref = response.content?.['application/json']?.schema?.$ref ?? '';
        assert.ok(
          errorRefs(operation).includes(ref),
          `${method} ${path} ${status} is not the error body: ${ref}`,
        );
        const codes = Object.entries(ERROR_STATUSES).filter(([, entry]) => String(entry.status) === status);
        assert.ok(codes.length > 0, `${method} ${path} documents ${status}, which no error code has`);
      }
      assert.ok(operation.responses['500'], `${method} ${path} does not document the 500`);
    }
  });

  it('documents x-request-id on every response, and the headers the server actually sends', async () => {
    for (const name of [
      'x-request-id',
      'Retry-After',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
    ]) {
      assert.ok(doc.components.headers[name], `components.headers lacks ${name}`);
    }
    for (const { path, method, operation } of operations(doc)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        assert.ok(response.headers?.['x-request-id'], `${method} ${path} ${status} lacks x-request-id`);
        if (status === '429')
          assert.ok(response.headers?.['Retry-After'], `${method} ${path} 429 lacks Retry-After`);
      }
    }
    // What an authenticated answer carries is documented on it.
    const response = await fetch(`${server.url}/v1/tasks`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(response.status, 200);
    const documented = Object.keys(doc.paths['/v1/tasks']?.get?.responses['200']?.headers ?? {});
    for (const name of documented)
      assert.ok(response.headers.has(name), `GET /v1/tasks did not send ${name}`);
    assert.ok(documented.includes('RateLimit-Remaining'));
  });

  it("requires the signed result link's expires and signature, which every link carries", () => {
    const parameters = (
      doc.paths['/v1/results/{file}']?.get as
        | (Operation & { parameters?: { in: string; name: string; required?: boolean }[] })
        | undefined
    )?.parameters;
    for (const name of ['expires', 'signature']) {
      const parameter = parameters?.find((entry) => entry.in === 'query' && entry.name === name);
      assert.equal(parameter?.required, true, name);
    }
  });

  it('describes the request body with the schema that validates it', () => {
    const create = doc.paths['/v1/videos/generations']?.post as
      | (Operation & { requestBody?: { content: Record<string, { schema: { properties: object } }> } })
      | undefined;
    const schema = create?.requestBody?.content['application/json']?.schema;
    assert.deepEqual(Object.keys(schema?.properties ?? {}).sort(), [
      'aspect_ratio',
      'audio_urls',
      'callback_url',
      'duration',
      'generate_audio',
      'image_urls',
      'model',
      'prompt',
      'quality',
      'return_last_frame',
      'seed',
      'video_urls',
      'web_search',
    ]);
    assert.equal(
      create?.responses['200']?.content?.['application/json']?.schema?.$ref,
      '#/components/schemas/Task',
    );
  });
});

describe('GET /docs', () => {
  /** The reference page, after the redirect from `/docs` to `/docs/`. */
  async function referencePage(): Promise<Response> {
    const redirect = await fetch(`${server.url}/docs`, { redirect: 'manual' });
    assert.equal(redirect.status, 302);
    const location = new URL(redirect.headers.get('location') ?? '', `${server.url}/docs`);
    assert.equal(location.pathname, '/docs/');
    return fetch(location);
  }

  /** The configuration the page hands to Swagger UI, a JSON block of the page. */
  function viewerConfiguration(html: string): Record<string, unknown> {
    const json = /<script type="application\/json" id="reference-configuration">([\s\S]*?)<\/script>/.exec(
      html,
    )?.[1];
    assert.ok(json, `no configuration in ${html}`);
    return JSON.parse(json) as Record<string, unknown>;
  }

  it('serves the reference page and its scripts from this server, with nothing from a CDN', async () => {
    const page = await referencePage();
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const policy = page.headers.get('content-security-policy') ?? '';
    assert.match(policy, /script-src 'self'(;|$)/);
    assert.match(policy, /connect-src 'self'(;|$)/);
    const html = await page.text();
    assert.doesNotMatch(html, CDN_PATTERN);
    const sources = [...html.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)].map((match) => match[1] ?? '');
    const styles = [...html.matchAll(/<link[^>]*\bhref="([^"]+)"/g)].map((match) => match[1] ?? '');
    assert.deepEqual(sources, ['swagger-ui-bundle.js', 'reference.js']);
    let viewerBytes = 0;
    for (const source of [...sources, ...styles]) {
      assert.doesNotMatch(source, /^(https?:)?\/\//, `a file from another host: ${source}`);
      const file = await fetch(new URL(source, page.url));
      assert.equal(file.status, 200, source);
      assert.match(
        file.headers.get('content-type') ?? '',
        source.endsWith('.js') ? /javascript/ : /text\/css/,
      );
      const text = await file.text();
      assert.doesNotMatch(text, CDN_PATTERN, source);
      if (source === 'swagger-ui-bundle.js') viewerBytes = text.length;
    }
    assert.ok(viewerBytes > 1_000_000, 'the bundled Swagger UI script is served');
    // The page reads the document at /openapi.json, relative to itself.
    const configuration = viewerConfiguration(html);
    assert.equal(new URL(String(configuration.url), page.url).pathname, '/openapi.json');
  });

  it("sends the document to no validator (Swagger UI's default is validator.swagger.io)", async () => {
    const configuration = viewerConfiguration(await (await referencePage()).text());
    assert.equal(configuration.validatorUrl, null);
  });

  it('serves no other file of the viewer package or of the page folder', async () => {
    for (const path of [
      '/docs/index.css',
      '/docs/package.json',
      '/docs/swagger-initializer.js',
      '/docs/../package.json',
    ]) {
      const response = await fetch(`${server.url}${path}`);
      assert.equal(response.status, 404, path);
      assert.equal(((await response.json()) as { error?: { code?: string } }).error?.code, 'not_found', path);
    }
  });
});

describe('GET /favicon.ico', () => {
  it('answers an icon, cached for a day and revalidated by its ETag', async () => {
    const response = await fetch(`${server.url}/favicon.ico`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'image/x-icon');
    assert.equal(response.headers.get('cache-control'), 'public, max-age=86400');
    const icon = Buffer.from(await response.arrayBuffer());
    // An ICO directory (reserved 0, type 1) of PNG images, each where its entry says.
    assert.equal(icon.readUInt16LE(0), 0);
    assert.equal(icon.readUInt16LE(2), 1);
    const count = icon.readUInt16LE(4);
    assert.ok(count >= 1);
    const sizes: number[] = [];
    for (let i = 0; i < count; i++) {
      const entry = 6 + 16 * i;
      const length = icon.readUInt32LE(entry + 8);
      const offset = icon.readUInt32LE(entry + 12);
      assert.ok(offset + length <= icon.length, `image ${i} lies outside the file`);
      const png = icon.subarray(offset, offset + length);
      assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      sizes.push(png.readUInt32BE(16));
    }
    assert.ok(sizes.includes(16) && sizes.includes(32), `sizes ${sizes.join(', ')}`);

    const etag = response.headers.get('etag');
    assert.ok(etag);
    const again = await fetch(`${server.url}/favicon.ico`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal((await again.arrayBuffer()).byteLength, 0);
    const head = await fetch(`${server.url}/favicon.ico`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-type'), 'image/x-icon');
  });
});

describe('a worker process', () => {
  it('serves neither the document nor the page', async () => {
    const worker = await startTestService({ VIDEOGEN_ROLE: 'worker' });
    try {
      for (const path of ['/openapi.json', '/docs', '/docs/']) {
        const response = await fetch(worker.url + path);
        await response.arrayBuffer();
        assert.equal(response.status, 404, path);
      }
      assert.equal((await fetch(`${worker.url}/healthz`)).status, 200);
    } finally {
      await worker.close();
    }
  });
});
