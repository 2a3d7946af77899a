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
 * `${NAME}` in any string is replaced by the environment variable NAME (an unset one is an error), so keys
 * stay out of the file; `$${` writes a literal `${`.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../config.js';
import { MODEL_IDS, type ModelId } from '../domain/models.js';
import type { Prices } from '../domain/prices.js';
import { ArkOptionsSchema } from './ark/ark-options.js';
import { ComfyUiOptionsSchema } from './comfyui/comfyui-options.js';
import { ExecOptionsSchema } from './exec/exec-options.js';
import { FalOptionsSchema } from './fal/fal-options.js';
import { GeminiOptionsSchema } from './gemini/gemini-options.js';
import { OpenAiOptionsSchema } from './openai/openai-options.js';
import { PricesSchema, toPrices } from './prices-file.js';
import { RelayOptionsSchema } from './relay/relay-options.js';
import { ReplicateOptionsSchema } from './replicate/replicate-options.js';
import { RunwayOptionsSchema } from './runway/runway-options.js';

/** The built-in engine's name; it needs no entry under `engines`. */
export const LOCAL_ENGINE = 'local';

const LocalOptionsSchema = Type.Object({ type: Type.Literal('local') }, { additionalProperties: false });

export const EngineOptionsSchema = Type.Union([
  LocalOptionsSchema,
  ArkOptionsSchema,
  ExecOptionsSchema,
  OpenAiOptionsSchema,
  ComfyUiOptionsSchema,
  RelayOptionsSchema,
  RunwayOptionsSchema,
  FalOptionsSchema,
  GeminiOptionsSchema,
  ReplicateOptionsSchema,
]);

export type EngineOptions = Static<typeof EngineOptionsSchema>;
export type EngineType = EngineOptions['type'];

const ENGINE_NAME = '^[a-z0-9][a-z0-9_-]{0,63}$';

const EnginesFileSchema = Type.Object(
  {
    engines: Type.Optional(Type.Record(Type.String({ pattern: ENGINE_NAME }), EngineOptionsSchema)),
    models: Type.Partial(
      Type.Record(
        Type.Union(MODEL_IDS.map((id) => Type.Literal(id))),
        Type.String({ pattern: ENGINE_NAME }),
        { additionalProperties: false },
      ),
    ),
    prices: Type.Optional(PricesSchema),
  },
  { additionalProperties: false },
);

export interface EnginesConfig {
  /** Every engine a model ID uses, by name (`local` included when used). */
  readonly engines: ReadonlyMap<string, EngineOptions>;
  /** Model ID → engine name, for the model IDs this process serves. */
  readonly models: ReadonlyMap<ModelId, string>;
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
    models: new Map(MODEL_IDS.map((id) => [id, LOCAL_ENGINE])),
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
const optionCheckers: Record<EngineType, ReturnType<typeof TypeCompiler.Compile>> = {
  local: TypeCompiler.Compile(LocalOptionsSchema),
  ark: TypeCompiler.Compile(ArkOptionsSchema),
  exec: TypeCompiler.Compile(ExecOptionsSchema),
  openai: TypeCompiler.Compile(OpenAiOptionsSchema),
  comfyui: TypeCompiler.Compile(ComfyUiOptionsSchema),
  relay: TypeCompiler.Compile(RelayOptionsSchema),
  runway: TypeCompiler.Compile(RunwayOptionsSchema),
  fal: TypeCompiler.Compile(FalOptionsSchema),
  gemini: TypeCompiler.Compile(GeminiOptionsSchema),
  replicate: TypeCompiler.Compile(ReplicateOptionsSchema),
};

/** The first schema problem, said against the engine's own schema when the `type` is known (clearer than the union's). */
function firstProblem(data: unknown): string | undefined {
  const engines = (data as { engines?: unknown } | null)?.engines;
  if (engines && typeof engines === 'object') {
    for (const [name, options] of Object.entries(engines)) {
      const type = (options as { type?: unknown } | null)?.type;
      if (typeof type !== 'string' || !(type in optionCheckers)) {
        return `/engines/${name}/type: must be one of ${Object.keys(optionCheckers).join(', ')}`;
      }
      const error = optionCheckers[type as EngineType].Errors(options).First();
      if (error) return `/engines/${name}${error.path}: ${error.message}`;
    }
  }
  const error = checker.Errors(data).First();
  if (!error) return undefined;
  if (
    error.path.startsWith('/models/') &&
    error.value !== undefined &&
    !MODEL_IDS.includes(error.path.slice(8) as ModelId)
  ) {
    return `${error.path}: not a model ID (model IDs: ${MODEL_IDS.join(', ')})`;
  }
  return `${error.path || '/'}: ${error.message}`;
}

/** Checks a parsed engines file; `file` only names it in messages. */
export function parseEnginesConfig(data: unknown, file: string, env: Env = process.env): EnginesConfig {
  const substituted = substituteEnv(data, env, '', file);
  const problem = firstProblem(substituted);
  if (problem) throw new EnginesFileError(file, problem);
  const parsed = substituted as Static<typeof EnginesFileSchema>;
  const declared = new Map<string, EngineOptions>(Object.entries(parsed.engines ?? {}));
  if (declared.has(LOCAL_ENGINE) && declared.get(LOCAL_ENGINE)?.type !== 'local') {
    throw new EnginesFileError(
      file,
      `/engines/${LOCAL_ENGINE}: the name "${LOCAL_ENGINE}" is the built-in engine's`,
    );
  }
  const engines = new Map<string, EngineOptions>();
  const models = new Map<ModelId, string>();
  for (const id of MODEL_IDS) {
    const name = (parsed.models as Partial<Record<ModelId, string>>)[id];
    if (name === undefined) continue;
    const options = name === LOCAL_ENGINE ? { type: 'local' as const } : declared.get(name);
    if (!options) {
      throw new EnginesFileError(file, `/models/${id}: no engine named "${name}" (declare it under engines)`);
    }
    engines.set(name, options);
    models.set(id, name);
  }
  if (models.size === 0) throw new EnginesFileError(file, '/models: maps no model ID to an engine');
  const prices = parsed.prices && toPrices(parsed.prices);
  return { engines, models, baseDir: dirname(resolve(file)), file, prices };
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
