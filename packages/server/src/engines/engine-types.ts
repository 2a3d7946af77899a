/**
 * Every engine type an engines file may name, one line each (engine-type.ts): adding a provider is its folder,
 * with its `<type>-engine-type.ts`, one line here and its docs page. The engines file's schema, the engines'
 * construction, the input checks and the provider callbacks all read this list.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { EngineCapabilities } from '../domain/engine-capabilities.js';
import { arkEngineType } from './ark/ark-engine-type.js';
import { comfyUiEngineType } from './comfyui/comfyui-engine-type.js';
import type { EngineType } from './engine-type.js';
import { execEngineType } from './exec/exec-engine-type.js';
import { falEngineType } from './fal/fal-engine-type.js';
import { geminiEngineType } from './gemini/gemini-engine-type.js';
import { localEngineType } from './local/local-engine-type.js';
import { openAiEngineType } from './openai/openai-engine-type.js';
import { relayEngineType } from './relay/relay-engine-type.js';
import { replicateEngineType } from './replicate/replicate-engine-type.js';
import { runwayEngineType } from './runway/runway-engine-type.js';

export const ENGINE_TYPES = [
  localEngineType,
  arkEngineType,
  execEngineType,
  openAiEngineType,
  comfyUiEngineType,
  relayEngineType,
  runwayEngineType,
  falEngineType,
  geminiEngineType,
  replicateEngineType,
] as const;

/** Any engine's options: one of the types' schemas, told apart by `type`. */
export const EngineOptionsSchema = Type.Union(ENGINE_TYPES.map((engineType) => engineType.optionsSchema));

export type EngineOptions = Static<typeof EngineOptionsSchema>;
export type EngineTypeName = EngineOptions['type'];

const BY_NAME: ReadonlyMap<string, EngineType> = new Map(
  ENGINE_TYPES.map((engineType): [string, EngineType] => [engineType.type, engineType]),
);

/** The engine type called `name`, if there is one. */
export function findEngineType(name: string): EngineType | undefined {
  return BY_NAME.get(name);
}

/** The type of these options (checked against the schema, so their `type` is one of the list's). */
export function engineTypeOf(options: EngineOptions): EngineType {
  const engineType = BY_NAME.get(options.type);
  if (!engineType) throw new Error(`no engine type "${options.type}"`);
  return engineType;
}

/**
 * What an engine of these options can take (engine-capabilities.ts), from the options alone. `baseDir`: the
 * engines file's directory, which a `comfyui` engine's `workflow` is relative to.
 */
export function capabilitiesOf(options: EngineOptions, baseDir = '.'): EngineCapabilities {
  return engineTypeOf(options).capabilities(options, baseDir);
}
