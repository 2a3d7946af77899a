/**
 * The deployment files, checked by validators made for them, since no container engine, cluster or systemd runs
 * here (docs/deployment.md#what-was-run-here says what was run and what only validated):
 *
 * - compose.yaml against the Compose Specification's JSON schema (deploy/schemas/compose-spec.json, vendored
 *   from compose-spec/compose-spec, its commit at its top);
 * - the Dockerfile with dockerfile-utils (rcjsuen's, the linter of the VS Code Docker language server);
 * - deploy/kubernetes as kustomize renders it (`kubectl kustomize`, with and without its autoscaling component),
 *   each object against Kubernetes' OpenAPI schemas (kubernetes-models);
 * - the systemd units with `systemd-analyze verify` (Debian's systemd).
 *
 * kubectl and systemd-analyze are programs of the machine: without them these tests skip, unless CI=true, which
 * makes them fail (.ci/run installs systemd; kubectl comes with this kind of machine). What the files promise
 * each other is held too: the graces are longer than VIDEOGEN_SHUTDOWN_GRACE_SECONDS, the probes are /readyz and
 * /healthz, the autoscaler's metric is one /metrics exports, and the image runs deploy/install-server.sh, the
 * script scripts/check-installed-server.mjs runs in CI.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { parse, parseAllDocuments } from 'yaml';
import { MODEL_IDS } from '../src/domain/models.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const scratch = mkdtempSync(join(tmpdir(), 'videogen-deploy-files-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** The default of VIDEOGEN_SHUTDOWN_GRACE_SECONDS, read from config.ts so that a change there is seen here. */
function defaultShutdownGraceSeconds(): number {
  const match = read('packages/server/src/config.ts').match(/'VIDEOGEN_SHUTDOWN_GRACE_SECONDS', (\d+)/);
  assert.ok(match, 'config.ts reads VIDEOGEN_SHUTDOWN_GRACE_SECONDS with a default');
  return Number(match[1]);
}

/** Whether `program` runs here; without it a test skips, or fails under CI=true. */
function programOrSkip(t: TestContext, program: string, args: string[]): boolean {
  const ran = spawnSync(program, args, { encoding: 'utf8' });
  if (!ran.error) return true;
  assert.notEqual(process.env.CI, 'true', `${program} is required in CI: ${ran.error.message}`);
  t.skip(`${program} is not installed`);
  return false;
}

type Json = Record<string, unknown>;

describe('compose.yaml', () => {
  // Compose takes YAML merge keys (`<<: *videogen`).
  const compose = parse(read('compose.yaml'), { merge: true }) as {
    services: Record<string, Json & { environment?: Record<string, string>; volumes?: string[] }>;
    'x-videogen': { environment: Record<string, string> };
  };

  it('is valid under the Compose Specification', () => {
    const schema = JSON.parse(read('deploy/schemas/compose-spec.json'));
    // Draft 07, Ajv's default, named by an address Ajv does not know it by (https, no `#`).
    assert.equal(schema.$schema, 'https://json-schema.org/draft-07/schema');
    delete schema.$schema;
    const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
    const validate = ajv.compile(schema);
    assert.ok(validate(compose), JSON.stringify(validate.errors, null, 2));
  });

  it('runs PostgreSQL, MinIO with its bucket, an API process and workers that scale, from one image', () => {
    const { postgres, minio, bucket, api, worker } = compose.services;
    assert.ok(postgres && minio && bucket && api && worker);
    assert.equal(api.image, worker.image);
    assert.deepEqual(api.command, ['serve', '--role', 'api']);
    assert.deepEqual(worker.command, ['worker']);
    // A fixed name or a published port would stop `--scale worker=3`.
    assert.equal(worker.container_name, undefined);
    assert.equal(worker.ports, undefined);
    assert.match(
      String((bucket.entrypoint as string[]).join(' ')),
      /mc mb --ignore-existing store\/videogen/,
    );
    assert.ok(api.volumes?.some((volume) => volume.startsWith('./deploy/engines.yaml:')));
    assert.equal(api.env_file, '.env');
  });

  it('gives a stopping process longer than its shutdown grace', () => {
    const grace = Number(compose['x-videogen'].environment.VIDEOGEN_SHUTDOWN_GRACE_SECONDS);
    for (const name of ['api', 'worker']) {
      const stop = String(compose.services[name]?.stop_grace_period);
      assert.ok(Number(stop.replace(/s$/, '')) > grace, `${name}: stop_grace_period ${stop} <= ${grace} s`);
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');

  it('passes dockerfile-utils with no diagnostic', () => {
    assert.deepEqual(
      lintDockerfile(dockerfile).map(
        (diagnostic) => `${diagnostic.range.start.line + 1}: ${diagnostic.message}`,
      ),
      [],
    );
  });

  it('installs the tarball with deploy/install-server.sh, as CI does, and runs it as a non-root user under tini', () => {
    const runtime = dockerfile.slice(dockerfile.indexOf(' AS runtime'));
    assert.match(runtime, /sh \/usr\/local\/lib\/videogen\/install-server\.sh \/tmp\/tarball\/videogen\.tgz/);
    assert.match(runtime, /COPY deploy\/install-server\.sh /);
    assert.match(runtime, /^USER node$/m);
    assert.match(runtime, /^ENTRYPOINT \["\/usr\/bin\/tini", "--", "videogen"\]$/m);
    assert.match(runtime, /^HEALTHCHECK .*\n.*\/readyz/m);
    assert.match(runtime, /^VOLUME \["\/var\/lib\/videogen"\]$/m);
    assert.match(read('scripts/check-installed-server.mjs'), /'deploy', 'install-server\.sh'/);
  });
});

describe('the engines file the deployments mount', () => {
  it('routes every model ID, and kustomize has the same file', () => {
    const engines = read('deploy/engines.yaml');
    assert.deepEqual(Object.keys(parse(engines).models).sort(), [...MODEL_IDS].sort());
    assert.equal(read('deploy/kubernetes/engines.yaml'), engines);
  });
});

describe('deploy/kubernetes', () => {
  const MODELS = { ConfigMap, Secret, Service, Deployment, HorizontalPodAutoscaler } as const;

  /** The objects `kubectl kustomize` renders, with secrets.env made from its example. */
  function render(withAutoscaling: boolean): Json[] {
    const dir = mkdtempSync(join(scratch, 'kustomize-'));
    cpSync(join(ROOT, 'deploy/kubernetes'), dir, { recursive: true });
    cpSync(join(dir, 'secrets.env.example'), join(dir, 'secrets.env'));
    if (withAutoscaling) {
      writeFileSync(
        join(dir, 'kustomization.yaml'),
        `${readFileSync(join(dir, 'kustomization.yaml'), 'utf8')}\ncomponents:\n  - autoscaling\n`,
      );
    }
    const output = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
    return parseAllDocuments(output).map((document) => document.toJSON() as Json);
  }

  function validate(object: Json): void {
    const Model = MODELS[object.kind as keyof typeof MODELS];
    assert.ok(Model, `no model for ${String(object.kind)}`);
    // kustomize folds a long Secret value's base64 over lines, which the API server's decoder (Go's) skips
    // and the schema's `byte` format does not.
    const data = object.kind === 'Secret' ? (object.data as Record<string, string>) : {};
    for (const [name, value] of Object.entries(data)) data[name] = value.replace(/\n/g, '');
    // Throws with the schema's path of the first problem.
    new Model(object as never).validate();
  }

  it('renders objects valid under the Kubernetes schemas, the autoscaler with its component', (t) => {
    if (!programOrSkip(t, 'kubectl', ['version', '--client'])) return;
    const plain = render(false);
    assert.deepEqual(plain.map((object) => object.kind).sort(), [
      'ConfigMap',
      'ConfigMap',
      'Deployment',
      'Deployment',
      'Secret',
      'Service',
    ]);
    const scaled = render(true);
    assert.equal(scaled.filter((object) => object.kind === 'HorizontalPodAutoscaler').length, 1);
    for (const object of scaled) validate(object);
  });

  it('probes /readyz and /healthz, asks for resources and outlasts the shutdown grace', (t) => {
    if (!programOrSkip(t, 'kubectl', ['version', '--client'])) return;
    const objects = render(true);
    const settings = objects.find(
      (object) =>
        object.kind === 'ConfigMap' && String((object.metadata as Json).name).startsWith('videogen-settings'),
    ) as { data: Record<string, string> };
    const grace = Number(settings.data.VIDEOGEN_SHUTDOWN_GRACE_SECONDS ?? defaultShutdownGraceSeconds());
    const deployments = objects
      .filter((object) => object.kind === 'Deployment')
      .map((object) => new Deployment(object));
    assert.deepEqual(deployments.map((deployment) => deployment.metadata?.name).sort(), [
      'videogen-api',
      'videogen-worker',
    ]);
    for (const deployment of deployments) {
      const pod = deployment.spec!.template.spec!;
      const [container] = pod.containers;
      assert.ok(container);
      assert.ok((pod.terminationGracePeriodSeconds ?? 30) > grace, `${deployment.metadata?.name}: grace`);
      assert.equal(container.readinessProbe?.httpGet?.path, '/readyz');
      assert.equal(container.livenessProbe?.httpGet?.path, '/healthz');
      assert.ok(container.resources?.requests?.cpu && container.resources.requests.memory);
      assert.deepEqual(
        container.envFrom?.map((source) =>
          (source.configMapRef ?? source.secretRef)?.name?.replace(/-[a-z0-9]{10}$/, ''),
        ),
        ['videogen-settings', 'videogen-secrets'],
      );
    }
    const [api, worker] = deployments.sort((a, b) =>
      String(a.metadata?.name).localeCompare(String(b.metadata?.name)),
    );
    assert.deepEqual(api?.spec?.template.spec?.containers[0]?.args, ['serve', '--role', 'api']);
    assert.deepEqual(worker?.spec?.template.spec?.containers[0]?.args, ['worker']);

    const autoscaler = new HorizontalPodAutoscaler(
      objects.find((object) => object.kind === 'HorizontalPodAutoscaler'),
    );
    assert.equal(autoscaler.spec?.scaleTargetRef.name, 'videogen-worker');
    const metric = autoscaler.spec?.metrics?.[0]?.external?.metric.name;
    assert.ok(
      metric && read('packages/server/src/metrics.ts').includes(`name: '${metric}'`),
      `${metric} on /metrics`,
    );
  });
});

describe('deploy/systemd', () => {
  const units = ['videogen-api.service', 'videogen-worker@.service'];

  it('passes systemd-analyze verify with nothing to say', (t) => {
    if (!programOrSkip(t, 'systemd-analyze', ['--version'])) return;
    // verify checks that ExecStart's program exists: a stand-in at a path of its own replaces the install's.
    const dir = mkdtempSync(join(scratch, 'systemd-'));
    const program = join(dir, 'videogen');
    writeFileSync(program, '#!/bin/sh\n');
    chmodSync(program, 0o755);
    for (const unit of units) {
      const text = read(`deploy/systemd/${unit}`);
      assert.match(text, /^ExecStart=\/opt\/videogen\/node_modules\/\.bin\/videogen /m);
      writeFileSync(join(dir, unit), text.replaceAll('/opt/videogen/node_modules/.bin/videogen', program));
    }
    for (const unit of ['videogen-api.service', 'videogen-worker@9101.service']) {
      const verified = spawnSync('systemd-analyze', ['verify', join(dir, unit)], {
        cwd: dir,
        encoding: 'utf8',
      });
      assert.equal(`${verified.stdout}${verified.stderr}`, '', unit);
      assert.equal(verified.status, 0, unit);
    }
    assert.deepEqual(readdirSync(join(ROOT, 'deploy/systemd')).sort(), units);
  });

  it('restart on failure, read the env file, keep a data directory and outlast the shutdown grace', () => {
    for (const unit of units) {
      const text = read(`deploy/systemd/${unit}`);
      assert.match(text, /^Restart=on-failure$/m, unit);
      assert.match(text, /^EnvironmentFile=\/etc\/videogen\/videogen\.env$/m, unit);
      assert.match(text, /^StateDirectory=videogen\//m, unit);
      assert.match(text, /^Environment=VIDEOGEN_DATA_DIR=%S\/videogen\//m, unit);
      const stop = Number(text.match(/^TimeoutStopSec=(\d+)$/m)?.[1]);
      assert.ok(stop > defaultShutdownGraceSeconds(), `${unit}: TimeoutStopSec ${stop}`);
    }
    assert.match(read('deploy/systemd/videogen-worker@.service'), /^Environment=VIDEOGEN_PORT=%i$/m);
  });
});
