/**
 * The engines file (`VIDEOGEN_ENGINES_FILE`, YAML or JSON): named engines with their options, and which engine
 * renders each model ID. Checked once at start; every problem names the file and the path in it. Without a
 * file, all six model IDs go to the built-in `local` engine. A model ID the file leaves out is not served by
 * this process's workers (another worker may serve it).
 *
 *   engines:
 *     wan:
 *       type: exec
 *       command: [python, generate.py, --prompt, "{prompt}", --save_file, "{output}"]
 *   models:
 *     videogen-2.0-text-to-video: wan
 *     videogen-2.0-fast-text-to-video: local
 *
 * A model ID may also map to a route (docs/engines/README.md#routing-fallback-balancing-caps-and-circuit-breakers): a list of steps tried in order when an
 * engine is unavailable, where a step is an engine name or `{balance: {name: weight, …}}`, a weighted set of
 * equivalent engines. Any engine may have `max_concurrency` (tasks in flight on it across the cluster) and
 * `accept_timeout_seconds`; `routing:` sets the circuit breaker and when to move on.
 *
 * `${NAME}` in any string is replaced by the environment variable NAME (an unset one is an error), so keys
 * stay out of the file; `$${` writes a literal `${`.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../config.js';
import type { EngineRoute } from '../domain/engine-route.js';
import { ModelCatalogue } from '../domain/model-catalogue.js';
import { MODEL_IDS, type ModelId } from '../domain/models.js';
import type { Prices } from '../domain/prices.js';
import type { RoutingPolicy } from '../ports/engine-router.js';
import { ENGINE_TYPES, type EngineOptions, EngineOptionsSchema, findEngineType } from './engine-types.js';
import { ModelsSchema, modelEntryProblem, readModels, type WrittenRoute } from './models-file.js';
import { PricesSchema, toPrices } from './prices-file.js';

/** The built-in engine's name; it needs no entry under `engines`. */
export const LOCAL_ENGINE = 'local';

const ENGINE_NAME = '^[a-z0-9][a-z0-9_-]{0,63}$';

/** Keys any engine may have beside its type's options: how routing treats it. */
const RoutingKeysSchema = Type.Object({
  max_concurrency: Type.Optional(Type.Integer({ minimum: 1 })),
  accept_timeout_seconds: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  max_requests_per_second: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  job_timeout_seconds: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
});
const ROUTING_KEYS = Object.keys(RoutingKeysSchema.properties);

const RoutingSchema = Type.Object(
  {
    /** How long an engine with a next step in the route has to accept a job before the task moves on. */
    accept_timeout_seconds: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    circuit_breaker: Type.Optional(
      Type.Object(
        {
          failures: Type.Optional(Type.Integer({ minimum: 1 })),
          cooldown_seconds: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
        },
        { additionalProperties: false },
      ),
    ),
    /** Move on after a refusal of the content (`upstream_refused`) too. */
    fallback_on_refusal: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const EnginesFileSchema = Type.Object(
  {
    engines: Type.Optional(Type.Record(Type.String({ pattern: ENGINE_NAME }), EngineOptionsSchema)),
    models: ModelsSchema,
    routing: Type.Optional(RoutingSchema),
    prices: Type.Optional(PricesSchema),
  },
  { additionalProperties: false },
);

/** How routing treats one engine. */
export interface EngineLimits {
  /** The most tasks in flight on it across the cluster; unlimited when absent. */
  readonly maxConcurrency?: number;
  /** Overrides `RoutingPolicy.acceptTimeoutMs` for this engine. */
  readonly acceptTimeoutMs?: number;
  /** Polls a process sends its upstream per second at most; `DEFAULT_REQUESTS_PER_SECOND` when absent. */
  readonly maxRequestsPerSecond?: number;
  /** How long an upstream job may take from its submission; `DEFAULT_JOB_TIMEOUT_MS` when absent. */
  readonly jobTimeoutMs?: number;
}

/**
 * The time limit of an upstream job, from its submission, on an engine that sets none. Within what every
 * provider keeps a job for (Ark 48 h, Replicate and fal a day or more), and far past any render: a provider that
 * is only busy still finishes, one that lost the job does not hold the task for ever.
 */
export const DEFAULT_JOB_TIMEOUT_MS = 24 * 3600 * 1000;

/**
 * The request budget of an engine that sets none, per process: the status reads (polls) of its jobs. Well inside
 * the providers' published rate limits, and far above what a few jobs need.
 */
export const DEFAULT_REQUESTS_PER_SECOND = 20;

export const DEFAULT_ROUTING: RoutingPolicy = {
  acceptTimeoutMs: 60_000,
  circuit: { failures: 5, cooldownMs: 30_000 },
  fallbackOnRefusal: false,
};

export interface EnginesConfig {
  /** Every engine a model ID uses, by name (`local` included when used). */
  readonly engines: ReadonlyMap<string, EngineOptions>;
  /** The built-in models and those the file defines, with their aliases. */
  readonly catalogue: ModelCatalogue;
  /** Model ID → its route, for the model IDs this process serves. */
  readonly models: ReadonlyMap<ModelId, EngineRoute>;
  /** Engine name → its routing limits, for the engines that have some. */
  readonly limits: ReadonlyMap<string, EngineLimits>;
  readonly routing: RoutingPolicy;
  /** Where relative paths in engine options start: the file's directory (the working directory without a file). */
  readonly baseDir: string;
  /** The engines file, for messages; undefined for the default. */
  readonly file: string | undefined;
  /** What video costs (prices-file.ts); undefined when the file has no `prices`. */
  readonly prices: Prices | undefined;
}

export class EnginesFileError extends ConfigError {
  constructor(file: string, problem: string) {
    super(file, problem);
    this.name = 'EnginesFileError';
  }
}

/** All six model IDs to the built-in engine. */
export function defaultEnginesConfig(baseDir = process.cwd()): EnginesConfig {
  return {
    engines: new Map([[LOCAL_ENGINE, { type: 'local' }]]),
    catalogue: ModelCatalogue.BUILT_IN,
    models: new Map(MODEL_IDS.map((id) => [id, [[{ engine: LOCAL_ENGINE, weight: 1 }]]])),
    limits: new Map(),
    routing: DEFAULT_ROUTING,
    baseDir,
    file: undefined,
    prices: undefined,
  };
}

type Env = Readonly<Record<string, string | undefined>>;

/** Replaces `${NAME}` in every string of `value`; `$${` is a literal `${`. */
function substituteEnv(value: unknown, env: Env, path: string, file: string): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$(\$)?\{([^}]*)\}/g, (match, escaped: string | undefined, name: string) => {
      if (escaped) return match.slice(1);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        throw new EnginesFileError(
          file,
          `${path}: "\${${name}}" is not a valid environment variable reference`,
        );
      }
      const found = env[name];
      if (found === undefined)
        throw new EnginesFileError(file, `${path}: the environment variable ${name} is not set`);
      return found;
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => substituteEnv(item, env, `${path}/${i}`, file));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, substituteEnv(item, env, `${path}/${key}`, file)]),
    );
  }
  return value;
}

const checker = TypeCompiler.Compile(EnginesFileSchema);
const optionCheckers = new Map<string, ReturnType<typeof TypeCompiler.Compile>>(
  ENGINE_TYPES.map((engineType) => [engineType.type, TypeCompiler.Compile(engineType.optionsSchema)]),
);

/** The first schema problem, said against the engine's own schema when the `type` is known (clearer than the union's). */
function firstProblem(data: unknown): string | undefined {
  const engines = (data as { engines?: unknown } | null)?.engines;
  if (engines && typeof engines === 'object') {
    for (const [name, options] of Object.entries(engines)) {
      const type = (options as { type?: unknown } | null)?.type;
      const optionChecker = typeof type === 'string' ? optionCheckers.get(type) : undefined;
      if (!optionChecker) {
        return `/engines/${name}/type: must be one of ${[...optionCheckers.keys()].join(', ')}`;
      }
      const error = optionChecker.Errors(options).First();
      if (error) return `/engines/${name}${error.path}: ${error.message}`;
    }
  }
  const models = (data as { models?: unknown } | null)?.models;
  if (models && typeof models === 'object' && !Array.isArray(models)) {
    for (const [id, entry] of Object.entries(models)) {
      const problem = modelEntryProblem(id, entry);
      if (problem) return problem;
    }
  }
  const error = checker.Errors(data).First();
  if (!error) return undefined;
  return `${error.path || '/'}: ${error.message}`;
}

const routingKeysChecker = TypeCompiler.Compile(RoutingKeysSchema);

/**
 * Takes the routing keys (`max_concurrency`, …) out of each engine's options, which are then checked against
 * their type's schema alone, and checks them.
 */
function splitRoutingKeys(data: unknown, file: string): { data: unknown; limits: Map<string, EngineLimits> } {
  const limits = new Map<string, EngineLimits>();
  const engines = (data as { engines?: unknown } | null)?.engines;
  if (!engines || typeof engines !== 'object' || Array.isArray(engines)) return { data, limits };
  const cleaned: Record<string, unknown> = {};
  for (const [name, options] of Object.entries(engines)) {
    if (!options || typeof options !== 'object' || Array.isArray(options)) {
      cleaned[name] = options;
      continue;
    }
    const own = Object.fromEntries(Object.entries(options).filter(([key]) => !ROUTING_KEYS.includes(key)));
    const routing = Object.fromEntries(Object.entries(options).filter(([key]) => ROUTING_KEYS.includes(key)));
    const error = routingKeysChecker.Errors(routing).First();
    if (error) throw new EnginesFileError(file, `/engines/${name}${error.path}: ${error.message}`);
    const keys = routing as Static<typeof RoutingKeysSchema>;
    const type = (options as { type?: unknown }).type;
    const engineType = typeof type === 'string' ? findEngineType(type) : undefined;
    if (keys.job_timeout_seconds !== undefined && engineType && !engineType.hasUpstreamJobs) {
      const article = /^[aeiou]/.test(engineType.type) ? 'an' : 'a';
      const instead = engineType.ownTimeout ? ` (${engineType.ownTimeout})` : '';
      throw new EnginesFileError(
        file,
        `/engines/${name}/job_timeout_seconds: ${article} ${engineType.type} engine has no upstream jobs${instead}`,
      );
    }
    if (Object.keys(keys).length > 0) {
      limits.set(name, {
        ...(keys.max_concurrency !== undefined && { maxConcurrency: keys.max_concurrency }),
        ...(keys.accept_timeout_seconds !== undefined && {
          acceptTimeoutMs: Math.round(keys.accept_timeout_seconds * 1000),
        }),
        ...(keys.max_requests_per_second !== undefined && {
          maxRequestsPerSecond: keys.max_requests_per_second,
        }),
        ...(keys.job_timeout_seconds !== undefined && {
          jobTimeoutMs: Math.round(keys.job_timeout_seconds * 1000),
        }),
      });
    }
    cleaned[name] = own;
  }
  return { data: { ...(data as object), engines: cleaned }, limits };
}

function routingPolicy(routing: Static<typeof RoutingSchema> | undefined): RoutingPolicy {
  const seconds = (value: number | undefined, fallback: number) =>
    value === undefined ? fallback : Math.round(value * 1000);
  return {
    acceptTimeoutMs: seconds(routing?.accept_timeout_seconds, DEFAULT_ROUTING.acceptTimeoutMs),
    circuit: {
      failures: routing?.circuit_breaker?.failures ?? DEFAULT_ROUTING.circuit.failures,
      cooldownMs: seconds(routing?.circuit_breaker?.cooldown_seconds, DEFAULT_ROUTING.circuit.cooldownMs),
    },
    fallbackOnRefusal: routing?.fallback_on_refusal ?? DEFAULT_ROUTING.fallbackOnRefusal,
  };
}

/** A route as written (a name, a balanced set, or a list of both) as steps of weighted engines. */
function toRoute(written: WrittenRoute): EngineRoute {
  const steps = Array.isArray(written) ? written : [written];
  return steps.map((step) =>
    typeof step === 'string'
      ? [{ engine: step, weight: 1 }]
      : Object.entries(step.balance).map(([engine, weight]) => ({ engine, weight })),
  );
}

/** Checks a parsed engines file; `file` only names it in messages. */
export function parseEnginesConfig(data: unknown, file: string, env: Env = process.env): EnginesConfig {
  const substituted = substituteEnv(data, env, '', file);
  const { data: withoutRoutingKeys, limits } = splitRoutingKeys(substituted, file);
  const problem = firstProblem(withoutRoutingKeys);
  if (problem) throw new EnginesFileError(file, problem);
  const parsed = withoutRoutingKeys as Static<typeof EnginesFileSchema>;
  const declared = new Map<string, EngineOptions>(Object.entries(parsed.engines ?? {}));
  if (declared.has(LOCAL_ENGINE) && declared.get(LOCAL_ENGINE)?.type !== 'local') {
    throw new EnginesFileError(
      file,
      `/engines/${LOCAL_ENGINE}: the name "${LOCAL_ENGINE}" is the built-in engine's`,
    );
  }
  const engines = new Map<string, EngineOptions>();
  const models = new Map<ModelId, EngineRoute>();
  const { catalogue, routes } = readModels(
    parsed.models,
    (path, message) => new EnginesFileError(file, `${path}: ${message}`),
  );
  for (const [id, route] of routes) {
    const steps = toRoute(route);
    const seen = new Set<string>();
    for (const { engine: name } of steps.flat()) {
      if (seen.has(name)) {
        throw new EnginesFileError(file, `/models/${id}: the route names "${name}" twice`);
      }
      seen.add(name);
      const options = name === LOCAL_ENGINE ? { type: 'local' as const } : declared.get(name);
      if (!options) {
        throw new EnginesFileError(
          file,
          `/models/${id}: no engine named "${name}" (declare it under engines)`,
        );
      }
      engines.set(name, options);
    }
    models.set(id, steps);
  }
  if (models.size === 0) throw new EnginesFileError(file, '/models: maps no model ID to an engine');
  const prices =
    parsed.prices &&
    toPrices(
      parsed.prices,
      catalogue,
      (path, message) => new EnginesFileError(file, `/prices${path}: ${message}`),
    );
  return {
    engines,
    catalogue,
    models,
    limits: new Map([...limits].filter(([name]) => engines.has(name))),
    routing: routingPolicy(parsed.routing),
    baseDir: dirname(resolve(file)),
    file,
    prices,
  };
}

/** Reads and checks the engines file at `path` (YAML, of which JSON is a subset). */
export function loadEnginesFile(path: string, env: Env = process.env): EnginesConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new EnginesFileError(path, `cannot be read (${reason})`);
  }
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new EnginesFileError(path, `is not valid YAML or JSON: ${reason}`);
  }
  return parseEnginesConfig(data, path, env);
}
