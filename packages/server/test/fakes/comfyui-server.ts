/**
 * A fake ComfyUI server, written from ComfyUI's own source and strict the way it is:
 *
 *   Comfy-Org/ComfyUI (formerly comfyanonymous/ComfyUI) at commit a125cd84b054a57729b5eecab930ca9408719832,
 *   version 0.3.64 (comfyui_version.py): server.py (routes, origin middleware, websocket), execution.py
 *   (validate_prompt, validate_inputs, PromptExecutor, PromptQueue), main.py (prompt_worker, hijack_progress),
 *   folder_paths.py (get_save_image_path, annotated paths), comfy_execution/progress.py (progress_state),
 *   comfy_execution/validation.py (validate_node_input), comfy_execution/caching.py (input signatures),
 *   nodes.py, comfy_extras/nodes_lt.py, nodes_video.py, nodes_hunyuan.py, nodes_custom_sampler.py,
 *   nodes_model_advanced.py, comfy_api/latest/_ui.py, comfy_api/latest/_util/video_types.py,
 *   comfy/samplers.py (sampler and scheduler names, how start/end steps cut the sigmas), comfy/cli_args.py.
 *   Where a newer ComfyUI is stricter it is followed and marked [newer] (execution.py after PR #11345,
 *   "Properly validate COMBOs defined in the 'new' way"; server.py's prompt_id check, 0.38.x).
 *
 *   Kosinkadink/ComfyUI-VideoHelperSuite at 4ee72c06 (videohelpersuite/nodes.py VideoCombine,
 *   videohelpersuite/utils.py MultiInput, video_formats/*.json): VHS_VideoCombine is a custom node, faked
 *   deliberately because operators' workflows use it; it is the only node that reports files under `gifs`.
 *
 * "A fake proves only what it refuses": this one refuses what ComfyUI refuses (a prompt without `prompt`, an
 * unknown or missing class_type, no output node, an input out of range, a value not in a combo, a link of the
 * wrong type, a missing required input, an input image that is not there, `/view` path traversal, an upload
 * without an image, a loopback Host with a foreign Origin) and ignores what it ignores (unknown top-level
 * keys, `_meta`, undeclared inputs, `step`, any Authorization header). It runs a prompt the way the executor
 * does (queue, cache by input signature, message order on `/ws`, history written only when it finished) and
 * writes real MP4s with ffmpeg at the size, frame count and fps the nodes would give: LTX-Video floors width
 * and height to multiples of 32 and frames to 8n+1; Wan (EmptyHunyuanLatentVideo) to 8 and 4n+1.
 *
 * Not ComfyUI, and said so where it is configured:
 *   - `proxy`: an authenticating reverse proxy in front of ComfyUI (ComfyUI itself has no auth at all), which
 *     can also refuse websocket upgrades or cut a websocket mid-run.
 *   - `gpu`: what happens on the GPU box, chosen by the test: a node raising (out of memory), a sampler step
 *     that never ends until interrupted, a queue that does not start prompts; and `holdPromptRequests()`,
 *     a `/prompt` whose answer the test holds back.
 * Not modelled: the picture content (a flat colour), metadata tags in saved files, image previews other than
 * placeholder JPEG bytes, `/view`'s `preview`/`channel` re-encoding, VHS formats other than video/h264-mp4,
 * integers beyond 2^53 (JSON numbers are doubles here; Python keeps them exact).
 */
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { readdirSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { posix } from 'node:path';
import { promisify } from 'node:util';
import { loadImage } from '@napi-rs/canvas';
import { WebSocketServer, type WebSocket as WsSocket } from 'ws';
import { ffmpegPath } from '../../src/media/ffmpeg-paths.js';
import { cachedFile } from './cached-file.js';
import { LoopbackServer, readBody, sendJson } from './fake-http.js';
import { fakeVideoFile } from './fake-video-file.js';

const run = promisify(execFile);

type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------------------
// Python semantics the server's behaviour depends on.
// ---------------------------------------------------------------------------------------------------------

/** A Python exception: its type (as `full_type_name` in execution.py prints it) and `str(ex)`. */
class PyError extends Error {
  constructor(
    readonly pyType: string,
    message: string,
  ) {
    super(message);
    this.name = pyType;
  }
}

/** `comfy.model_management.InterruptProcessingException`: turns into `execution_interrupted`. */
class Interrupted extends PyError {
  constructor() {
    super('comfy.model_management.InterruptProcessingException', '');
  }
}

function isDict(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function pyTypeName(value: unknown): string {
  if (value === null || value === undefined) return 'NoneType';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'string') return 'str';
  if (Array.isArray(value)) return 'list';
  return 'dict';
}

/** `repr()` of a float: `24.0`, `0.5`. */
function pyFloat(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return `${value}.0`;
  return String(value);
}

function pyRepr(value: unknown): string {
  if (typeof value === 'string') {
    return value.includes("'") && !value.includes('"')
      ? `"${value}"`
      : `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
  }
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (isDict(value)) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`)
      .join(', ')}}`;
  }
  return String(value);
}

/** `str()`: like repr, but a string is itself. */
function pyStr(value: unknown): string {
  return typeof value === 'string' ? value : pyRepr(value);
}

/** `int(val)` as validate_inputs calls it. */
function pyInt(value: unknown): number {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return Math.trunc(value);
  if (typeof value === 'string') {
    if (/^\s*[+-]?\d+(_\d+)*\s*$/.test(value)) return Number(value.trim().replaceAll('_', ''));
    throw new PyError('ValueError', `invalid literal for int() with base 10: ${pyRepr(value)}`);
  }
  throw new PyError(
    'TypeError',
    `int() argument must be a string, a bytes-like object or a real number, not '${pyTypeName(value)}'`,
  );
}

/** `float(val)`. */
function pyFloatOf(value: unknown): number {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    const text = value.trim().replaceAll(/(?<=\d)_(?=\d)/g, '');
    if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return Number(text);
    if (/^[+-]?(inf|infinity)$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
    if (/^[+-]?nan$/i.test(text)) return Number.NaN;
    throw new PyError('ValueError', `could not convert string to float: ${pyRepr(value)}`);
  }
  throw new PyError(
    'TypeError',
    `float() argument must be a string or a real number, not '${pyTypeName(value)}'`,
  );
}

/** `bool(val)`: Python truthiness ("false" is True). */
function pyBool(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isDict(value)) return Object.keys(value).length > 0;
  return Boolean(value);
}

function pyLess(a: number, b: number | bigint): boolean {
  return typeof b === 'bigint' && Number.isInteger(a) ? BigInt(a) < b : a < Number(b);
}

/** `os.path.join`: an absolute part starts over; nothing is normalised. */
function pyJoin(first: string, ...parts: string[]): string {
  let path = first;
  for (const part of parts) {
    if (part.startsWith('/')) path = part;
    else if (path === '' || path.endsWith('/')) path += part;
    else path = `${path}/${part}`;
  }
  return path;
}

/** `os.path.normpath` (posix). */
function pyNormpath(path: string): string {
  if (path === '') return '.';
  const normal = posix.normalize(path);
  return normal.length > 1 && normal.endsWith('/') ? normal.slice(0, -1) : normal;
}

/** `os.path.abspath`. */
function pyAbspath(path: string): string {
  return posix.resolve(path);
}

/** `os.path.commonpath` of two absolute paths. */
function pyCommonpath(a: string, b: string): string {
  const left = a.split('/').filter(Boolean);
  const right = b.split('/').filter(Boolean);
  const common: string[] = [];
  for (let i = 0; i < Math.min(left.length, right.length) && left[i] === right[i]; i++) {
    common.push(left[i] as string);
  }
  return `/${common.join('/')}`;
}

/** `os.path.basename`: what follows the last slash ('' for `a/`). */
function pyBasename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function pyDirname(path: string): string {
  const index = path.lastIndexOf('/');
  if (index < 0) return '';
  const head = path.slice(0, index + 1);
  return /^\/+$/.test(head) ? head : head.replace(/\/+$/, '');
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

// ---------------------------------------------------------------------------------------------------------
// Node definitions: ComfyUI's real input specs, for the nodes the test workflows and LTX-Video / Wan
// workflows use. `step` is recorded because the nodes declare it; the server never enforces it.
// ---------------------------------------------------------------------------------------------------------

const MAX_RESOLUTION = 16384; // nodes.py
const SEED_MAX = 0xffffffffffffffffn;

/** comfy/samplers.py KSAMPLER_NAMES + ["ddim", "uni_pc", "uni_pc_bh2"] (SAMPLER_NAMES). */
const SAMPLER_NAMES = [
  ...['euler', 'euler_cfg_pp', 'euler_ancestral', 'euler_ancestral_cfg_pp', 'heun', 'heunpp2', 'dpm_2'],
  ...[
    'dpm_2_ancestral',
    'lms',
    'dpm_fast',
    'dpm_adaptive',
    'dpmpp_2s_ancestral',
    'dpmpp_2s_ancestral_cfg_pp',
  ],
  ...['dpmpp_sde', 'dpmpp_sde_gpu', 'dpmpp_2m', 'dpmpp_2m_cfg_pp', 'dpmpp_2m_sde', 'dpmpp_2m_sde_gpu'],
  ...[
    'dpmpp_2m_sde_heun',
    'dpmpp_2m_sde_heun_gpu',
    'dpmpp_3m_sde',
    'dpmpp_3m_sde_gpu',
    'ddpm',
    'lcm',
    'ipndm',
  ],
  ...['ipndm_v', 'deis', 'res_multistep', 'res_multistep_cfg_pp', 'res_multistep_ancestral'],
  ...['res_multistep_ancestral_cfg_pp', 'gradient_estimation', 'gradient_estimation_cfg_pp', 'er_sde'],
  ...['seeds_2', 'seeds_3', 'sa_solver', 'sa_solver_pece', 'ddim', 'uni_pc', 'uni_pc_bh2'],
];
/** comfy/samplers.py SCHEDULER_HANDLERS keys. */
const SCHEDULER_NAMES = [
  'simple',
  'sgm_uniform',
  'karras',
  'exponential',
  'ddim_uniform',
  'beta',
  'normal',
  'linear_quadratic',
  'kl_optimal',
];
/** nodes.py CLIPLoader `type`. */
const CLIP_TYPES = [
  ...['stable_diffusion', 'stable_cascade', 'sd3', 'stable_audio', 'mochi', 'ltxv', 'pixart', 'cosmos'],
  ...['lumina2', 'wan', 'hidream', 'chroma', 'ace', 'omnigen2', 'qwen_image', 'hunyuan_image'],
];
/** VideoHelperSuite: ["image/gif", "image/webp"] + "video/" + each video_formats/*.json (gifski needs its binary). */
const VHS_FORMATS = [
  ...['image/gif', 'image/webp', 'video/16bit-png', 'video/8bit-png', 'video/ProRes', 'video/av1-webm'],
  ...['video/ffmpeg-gif', 'video/ffv1-mkv', 'video/h264-mp4', 'video/h265-mp4', 'video/nvenc_av1-mp4'],
  ...['video/nvenc_h264-mp4', 'video/nvenc_hevc-mp4', 'video/webm'],
];

/** What each model file is, for the loaders: which latent family it works in. */
export interface ModelFile {
  /** `ltxv` (128-channel latents, /32 and 8n+1) or `wan` (16-channel, /8 and 4n+1); text encoders have none. */
  readonly family?: 'ltxv' | 'wan';
  /** A checkpoint that carries a text encoder (LTX-Video checkpoints do not). */
  readonly clip?: boolean;
}

export type ModelFolder = 'checkpoints' | 'diffusion_models' | 'text_encoders' | 'vae';

const DEFAULT_MODELS: Readonly<Record<ModelFolder, Readonly<Record<string, ModelFile>>>> = {
  checkpoints: {
    'ltx-video-2b-v0.9.5.safetensors': { family: 'ltxv' },
    'ltxv-13b-0.9.7-dev.safetensors': { family: 'ltxv' },
  },
  diffusion_models: {
    'wan2.2_t2v_high_noise_14B_fp8_scaled.safetensors': { family: 'wan' },
    'wan2.2_t2v_low_noise_14B_fp8_scaled.safetensors': { family: 'wan' },
  },
  text_encoders: { 't5xxl_fp16.safetensors': {}, 'umt5_xxl_fp8_e4m3fn_scaled.safetensors': {} },
  vae: { 'wan_2.1_vae.safetensors': { family: 'wan' } },
};

/** Latent layouts (comfy/latent_formats.py, the VAEs' downscale_index_formula). */
const LATENT = {
  ltxv: { channels: 128, time: 8, space: 32 },
  wan: { channels: 16, time: 4, space: 8 },
} as const;

interface InputSpec {
  /** INT, FLOAT, STRING, BOOLEAN, COMBO, or a link type (MODEL, LATENT…). */
  readonly type: string;
  /** A V1 combo: INPUT_TYPES gives the option list itself as the type; V3 gives ("COMBO", {options}). */
  readonly v1?: boolean;
  readonly options?: (server: FakeComfyUi) => readonly string[];
  readonly min?: number | bigint;
  readonly max?: number | bigint;
  /** Declared (the UI rounds to it); never checked by the server. */
  readonly step?: number;
  readonly default?: unknown;
  /** VideoHelperSuite's MultiInput: a link of any of these types is accepted. */
  readonly accepts?: readonly string[];
}

interface NodeRun {
  readonly server: FakeComfyUi;
  readonly nodeId: string;
  readonly promptId: string;
  /** Runs `steps` sampling steps, reporting each as ComfyUI's progress hook does (GpuEvents happen here). */
  sample(steps: number): Promise<void>;
  /** A node's own progress bar (comfy.utils.ProgressBar), as VHS_VideoCombine has one per frame written. */
  progress(steps: number): void;
}

type Value = Json | null;

interface NodeResult {
  readonly result: readonly Value[];
  readonly ui?: Json;
}

interface NodeDef {
  /** The file it comes from (at the commit in the header). */
  readonly source: string;
  readonly category: string;
  readonly required: Readonly<Record<string, InputSpec>>;
  readonly optional?: Readonly<Record<string, InputSpec>>;
  readonly outputs: readonly string[];
  readonly outputNode?: boolean;
  /** VALIDATE_INPUTS / validate_inputs: the inputs it takes (these skip min, max and combo checks). */
  readonly validate?: {
    readonly inputs: readonly string[];
    check(values: Json, server: FakeComfyUi): Promise<true | string>;
  };
  /** IS_CHANGED / fingerprint_inputs, part of the cache key. */
  readonly isChanged?: (inputs: Json, server: FakeComfyUi) => Promise<string>;
  /** A hidden UNIQUE_ID input puts the node id in its cache key (comfy_execution/caching.py). */
  readonly uniqueIdInCacheKey?: boolean;
  /** It samples: GpuEvents happen at its steps rather than before it runs. */
  readonly sampler?: boolean;
  execute(run: NodeRun, inputs: Json): Promise<NodeResult>;
}

const INT = (spec: Omit<InputSpec, 'type'> = {}): InputSpec => ({ type: 'INT', ...spec });
const FLOAT = (spec: Omit<InputSpec, 'type'> = {}): InputSpec => ({ type: 'FLOAT', ...spec });
const STRING = (spec: Omit<InputSpec, 'type'> = {}): InputSpec => ({ type: 'STRING', ...spec });
const BOOLEAN = (spec: Omit<InputSpec, 'type'> = {}): InputSpec => ({ type: 'BOOLEAN', ...spec });
const LINK = (type: string): InputSpec => ({ type });
/** A V1 combo: `([options…], {…})`. */
const V1_COMBO = (options: readonly string[] | ((server: FakeComfyUi) => readonly string[])): InputSpec => ({
  type: 'COMBO',
  v1: true,
  options: typeof options === 'function' ? options : () => options,
});
/** A V3 combo: `io.Combo.Input(options=…)`. */
const V3_COMBO = (options: readonly string[], spec: Omit<InputSpec, 'type'> = {}): InputSpec => ({
  type: 'COMBO',
  options: () => options,
  ...spec,
});
const models = (folder: ModelFolder) => (server: FakeComfyUi) => server.modelNames(folder);

/** The model works in a latent of this many channels: a mismatch is the convolution error torch raises. */
function checkChannels(model: Value, latent: Value): void {
  const family = model?.family as 'ltxv' | 'wan' | undefined;
  if (!family || !latent) return;
  const want = LATENT[family].channels;
  if (latent.channels !== want) {
    throw new PyError(
      'RuntimeError',
      `Given groups=1, weight of size [${want * 16}, ${want}, 1, 2, 2], expected input[1, ${String(latent.channels)}, ${String(latent.frames)}, ${String(latent.height)}, ${String(latent.width)}] to have ${want} channels, but got ${String(latent.channels)} channels instead`,
    );
  }
}

/** `get_save_image_path` (folder_paths.py): folder, file name, counter and subfolder for a prefix. */
async function saveImagePath(
  prefix: string,
  outputDir: string,
  width = 0,
  height = 0,
): Promise<{ folder: string; filename: string; counter: number; subfolder: string }> {
  let filenamePrefix = prefix;
  if (filenamePrefix.includes('%')) {
    const now = new Date();
    const two = (n: number): string => String(n).padStart(2, '0');
    filenamePrefix = filenamePrefix
      .replaceAll('%width%', String(width))
      .replaceAll('%height%', String(height))
      .replaceAll('%year%', String(now.getFullYear()))
      .replaceAll('%month%', two(now.getMonth() + 1))
      .replaceAll('%day%', two(now.getDate()))
      .replaceAll('%hour%', two(now.getHours()))
      .replaceAll('%minute%', two(now.getMinutes()))
      .replaceAll('%second%', two(now.getSeconds()));
  }
  const subfolder = pyDirname(pyNormpath(filenamePrefix));
  const filename = pyBasename(pyNormpath(filenamePrefix));
  const folder = pyJoin(outputDir, subfolder);
  const common = pyCommonpath(outputDir, pyAbspath(folder));
  if (common !== outputDir) {
    throw new PyError(
      'Exception',
      `**** ERROR: Saving image outside the output folder is not allowed.\n full_output_folder: ${pyAbspath(folder)}\n         output_dir: ${outputDir}\n         commonpath: ${common}`,
    );
  }
  const prefixLength = pyBasename(filenamePrefix).length;
  let counter = 1;
  try {
    const counters = (await readdir(folder)).flatMap((name) => {
      const head = name.slice(0, prefixLength + 1);
      if (head.slice(0, -1) !== filename || head.at(-1) !== '_') return [];
      const digits = name.slice(prefixLength + 1).split('_')[0] ?? '';
      return [/^\d+$/.test(digits) ? Number(digits) : 0];
    });
    if (counters.length > 0) counter = Math.max(...counters) + 1;
  } catch {
    await mkdir(folder, { recursive: true });
  }
  return { folder, filename, counter, subfolder };
}

function images(value: Value): { width: number; height: number; frames: number } {
  if (!value || typeof value.width !== 'number' || typeof value.height !== 'number') {
    throw new PyError('AttributeError', "'NoneType' object has no attribute 'shape'");
  }
  return { width: value.width, height: value.height, frames: Number(value.frames ?? 1) };
}

function nodeDefinitions(): Readonly<Record<string, NodeDef>> {
  const passThrough = (...values: Value[]): Promise<NodeResult> => Promise.resolve({ result: values });
  const conditioning = (keyframes = 0): Json => ({ kind: 'CONDITIONING', keyframes });

  return {
    // ---------------------------------------------------------------- nodes.py (V1)
    CheckpointLoaderSimple: {
      source: 'nodes.py',
      category: 'loaders',
      required: { ckpt_name: V1_COMBO(models('checkpoints')) },
      outputs: ['MODEL', 'CLIP', 'VAE'],
      execute: async (run, { ckpt_name }) => {
        const file = run.server.model('checkpoints', String(ckpt_name));
        const family = file.family ?? 'wan';
        return {
          result: [{ kind: 'MODEL', family }, file.clip ? { kind: 'CLIP' } : null, { kind: 'VAE', family }],
        };
      },
    },
    UNETLoader: {
      source: 'nodes.py',
      category: 'advanced/loaders',
      required: {
        unet_name: V1_COMBO(models('diffusion_models')),
        weight_dtype: V1_COMBO(['default', 'fp8_e4m3fn', 'fp8_e4m3fn_fast', 'fp8_e5m2']),
      },
      outputs: ['MODEL'],
      execute: async (run, { unet_name }) => ({
        result: [{ kind: 'MODEL', family: run.server.model('diffusion_models', String(unet_name)).family }],
      }),
    },
    CLIPLoader: {
      source: 'nodes.py',
      category: 'advanced/loaders',
      required: { clip_name: V1_COMBO(models('text_encoders')), type: V1_COMBO(CLIP_TYPES) },
      optional: { device: V1_COMBO(['default', 'cpu']) },
      outputs: ['CLIP'],
      execute: async (_run, { type }) => ({ result: [{ kind: 'CLIP', type }] }),
    },
    VAELoader: {
      source: 'nodes.py',
      category: 'loaders',
      required: { vae_name: V1_COMBO((server) => [...server.modelNames('vae'), 'pixel_space']) },
      outputs: ['VAE'],
      execute: async (run, { vae_name }) => ({
        result: [
          vae_name === 'pixel_space'
            ? { kind: 'VAE', family: 'pixel' }
            : { kind: 'VAE', family: run.server.model('vae', String(vae_name)).family },
        ],
      }),
    },
    CLIPTextEncode: {
      source: 'nodes.py',
      category: 'conditioning',
      required: { text: STRING(), clip: LINK('CLIP') },
      outputs: ['CONDITIONING'],
      execute: async (_run, { clip }) => {
        if (clip === null || clip === undefined) {
          throw new PyError(
            'RuntimeError',
            'ERROR: clip input is invalid: None\n\nIf the clip is from a checkpoint loader node your checkpoint does not contain a valid clip or text encoder model.',
          );
        }
        return { result: [conditioning()] };
      },
    },
    VAEDecode: {
      source: 'nodes.py',
      category: 'latent',
      required: { samples: LINK('LATENT'), vae: LINK('VAE') },
      outputs: ['IMAGE'],
      execute: async (_run, { samples, vae }) => {
        const latent = samples as Json;
        const family = (vae as Json).family as 'ltxv' | 'wan';
        const format = LATENT[family];
        if (!format || latent.channels !== format.channels) {
          throw new PyError(
            'RuntimeError',
            `Given groups=1, weight of size [512, ${format?.channels ?? 3}, 3, 3, 3], expected input to have ${format?.channels ?? 3} channels, but got ${String(latent.channels)} channels instead`,
          );
        }
        const frames = Number(latent.frames);
        return {
          result: [
            {
              kind: 'IMAGE',
              width: Number(latent.width) * format.space,
              height: Number(latent.height) * format.space,
              frames: Number(latent.batch) * (1 + format.time * (frames - 1)),
            },
          ],
        };
      },
    },
    KSampler: {
      sampler: true,
      source: 'nodes.py',
      category: 'sampling',
      required: {
        model: LINK('MODEL'),
        seed: INT({ default: 0, min: 0, max: SEED_MAX }),
        steps: INT({ default: 20, min: 1, max: 10000 }),
        cfg: FLOAT({ default: 8.0, min: 0.0, max: 100.0, step: 0.1 }),
        sampler_name: V1_COMBO(SAMPLER_NAMES),
        scheduler: V1_COMBO(SCHEDULER_NAMES),
        positive: LINK('CONDITIONING'),
        negative: LINK('CONDITIONING'),
        latent_image: LINK('LATENT'),
        denoise: FLOAT({ default: 1.0, min: 0.0, max: 1.0, step: 0.01 }),
      },
      outputs: ['LATENT'],
      execute: async (run, { model, steps, denoise, latent_image }) => {
        checkChannels(model as Value, latent_image as Value);
        await run.sample(Number(denoise) <= 0 ? 0 : Number(steps));
        return { result: [latent_image as Value] };
      },
    },
    KSamplerAdvanced: {
      sampler: true,
      source: 'nodes.py',
      category: 'sampling',
      required: {
        model: LINK('MODEL'),
        add_noise: V1_COMBO(['enable', 'disable']),
        noise_seed: INT({ default: 0, min: 0, max: SEED_MAX }),
        steps: INT({ default: 20, min: 1, max: 10000 }),
        cfg: FLOAT({ default: 8.0, min: 0.0, max: 100.0, step: 0.1 }),
        sampler_name: V1_COMBO(SAMPLER_NAMES),
        scheduler: V1_COMBO(SCHEDULER_NAMES),
        positive: LINK('CONDITIONING'),
        negative: LINK('CONDITIONING'),
        latent_image: LINK('LATENT'),
        start_at_step: INT({ default: 0, min: 0, max: 10000 }),
        end_at_step: INT({ default: 10000, min: 0, max: 10000 }),
        return_with_leftover_noise: V1_COMBO(['disable', 'enable']),
      },
      outputs: ['LATENT'],
      execute: async (run, { model, steps, start_at_step, end_at_step, latent_image }) => {
        checkChannels(model as Value, latent_image as Value);
        // comfy/samplers.py KSampler.sample: sigmas[:last_step + 1], then sigmas[start_step:] (or no sampling).
        let sigmas = Number(steps) + 1;
        if (Number(end_at_step) < sigmas - 1) sigmas = Number(end_at_step) + 1;
        const start = Number(start_at_step);
        await run.sample(start < sigmas - 1 ? sigmas - 1 - start : 0);
        return { result: [latent_image as Value] };
      },
    },
    SaveImage: {
      source: 'nodes.py',
      category: 'image',
      required: { images: LINK('IMAGE'), filename_prefix: STRING({ default: 'ComfyUI' }) },
      outputs: [],
      outputNode: true,
      execute: async (run, inputs) => {
        const picture = images(inputs.images as Value);
        const { folder, filename, counter, subfolder } = await saveImagePath(
          String(inputs.filename_prefix),
          run.server.outputDir,
          picture.width,
          picture.height,
        );
        const still = await run.server.media.still(picture.width, picture.height);
        const results: Json[] = [];
        for (let i = 0; i < picture.frames; i++) {
          const file = `${filename.replaceAll('%batch_num%', String(i))}_${String(counter + i).padStart(5, '0')}_.png`;
          await copyFile(still, pyJoin(folder, file));
          results.push({ filename: file, subfolder, type: 'output' });
        }
        return { result: [], ui: { images: results } };
      },
    },
    LoadImage: {
      source: 'nodes.py',
      category: 'image',
      required: {
        image: V1_COMBO((server) => server.inputImages()),
      },
      outputs: ['IMAGE', 'MASK'],
      validate: {
        inputs: ['image'],
        check: async ({ image }, server) =>
          (await exists(server.annotatedPath(String(image)))) ? true : `Invalid image file: ${pyStr(image)}`,
      },
      isChanged: async ({ image }, server) => {
        const bytes = await readFile(server.annotatedPath(String(image))).catch(() => undefined);
        // An IS_CHANGED that raises is NaN: never equal, never cached.
        return bytes ? createHash('sha256').update(bytes).digest('hex') : `NaN-${randomUUID()}`;
      },
      execute: async (run, { image }) => {
        const path = run.server.annotatedPath(String(image));
        const picture = await loadImage(await readFile(path)).catch(() => {
          throw new PyError('PIL.UnidentifiedImageError', `cannot identify image file '${path}'`);
        });
        return {
          result: [
            { kind: 'IMAGE', width: picture.width, height: picture.height, frames: 1 },
            { kind: 'MASK' },
          ],
        };
      },
    },
    // ---------------------------------------------------------------- comfy_extras/nodes_custom_sampler.py (V1)
    KSamplerSelect: {
      source: 'comfy_extras/nodes_custom_sampler.py',
      category: 'sampling/custom_sampling/samplers',
      required: { sampler_name: V1_COMBO(SAMPLER_NAMES) },
      outputs: ['SAMPLER'],
      execute: async (_run, { sampler_name }) => passThrough({ kind: 'SAMPLER', name: sampler_name }),
    },
    BasicScheduler: {
      source: 'comfy_extras/nodes_custom_sampler.py',
      category: 'sampling/custom_sampling/schedulers',
      required: {
        model: LINK('MODEL'),
        scheduler: V1_COMBO(SCHEDULER_NAMES),
        steps: INT({ default: 20, min: 1, max: 10000 }),
        denoise: FLOAT({ default: 1.0, min: 0.0, max: 1.0, step: 0.01 }),
      },
      outputs: ['SIGMAS'],
      execute: async (_run, { steps, denoise }) =>
        passThrough({ kind: 'SIGMAS', count: Number(denoise) <= 0 ? 0 : Number(steps) + 1 }),
    },
    SamplerCustom: {
      sampler: true,
      source: 'comfy_extras/nodes_custom_sampler.py',
      category: 'sampling/custom_sampling',
      required: {
        model: LINK('MODEL'),
        add_noise: BOOLEAN({ default: true }),
        noise_seed: INT({ default: 0, min: 0, max: SEED_MAX }),
        cfg: FLOAT({ default: 8.0, min: 0.0, max: 100.0, step: 0.1 }),
        positive: LINK('CONDITIONING'),
        negative: LINK('CONDITIONING'),
        sampler: LINK('SAMPLER'),
        sigmas: LINK('SIGMAS'),
        latent_image: LINK('LATENT'),
      },
      outputs: ['LATENT', 'LATENT'],
      execute: async (run, { model, sigmas, latent_image }) => {
        checkChannels(model as Value, latent_image as Value);
        await run.sample(Math.max(0, Number((sigmas as Json).count) - 1));
        return { result: [latent_image as Value, latent_image as Value] };
      },
    },
    // ---------------------------------------------------------------- comfy_extras/nodes_model_advanced.py (V1)
    ModelSamplingSD3: {
      source: 'comfy_extras/nodes_model_advanced.py',
      category: 'advanced/model',
      required: { model: LINK('MODEL'), shift: FLOAT({ default: 3.0, min: 0.0, max: 100.0, step: 0.01 }) },
      outputs: ['MODEL'],
      execute: async (_run, { model }) => passThrough(model as Value),
    },
    // ---------------------------------------------------------------- comfy_extras/nodes_hunyuan.py (V1)
    EmptyHunyuanLatentVideo: {
      source: 'comfy_extras/nodes_hunyuan.py',
      category: 'latent/video',
      required: {
        width: INT({ default: 848, min: 16, max: MAX_RESOLUTION, step: 16 }),
        height: INT({ default: 480, min: 16, max: MAX_RESOLUTION, step: 16 }),
        length: INT({ default: 25, min: 1, max: MAX_RESOLUTION, step: 4 }),
        batch_size: INT({ default: 1, min: 1, max: 4096 }),
      },
      outputs: ['LATENT'],
      // torch.zeros([batch_size, 16, ((length - 1) // 4) + 1, height // 8, width // 8])
      execute: async (_run, { width, height, length, batch_size }) =>
        passThrough({
          kind: 'LATENT',
          channels: 16,
          batch: Number(batch_size),
          frames: Math.floor((Number(length) - 1) / 4) + 1,
          height: Math.floor(Number(height) / 8),
          width: Math.floor(Number(width) / 8),
        }),
    },
    // ---------------------------------------------------------------- comfy_extras/nodes_lt.py (V3)
    EmptyLTXVLatentVideo: {
      source: 'comfy_extras/nodes_lt.py',
      category: 'latent/video/ltxv',
      required: {
        width: INT({ default: 768, min: 64, max: MAX_RESOLUTION, step: 32 }),
        height: INT({ default: 512, min: 64, max: MAX_RESOLUTION, step: 32 }),
        length: INT({ default: 97, min: 1, max: MAX_RESOLUTION, step: 8 }),
        batch_size: INT({ default: 1, min: 1, max: 4096 }),
      },
      outputs: ['LATENT'],
      // torch.zeros([batch_size, 128, ((length - 1) // 8) + 1, height // 32, width // 32])
      execute: async (_run, { width, height, length, batch_size }) =>
        passThrough({
          kind: 'LATENT',
          channels: 128,
          batch: Number(batch_size),
          frames: Math.floor((Number(length) - 1) / 8) + 1,
          height: Math.floor(Number(height) / 32),
          width: Math.floor(Number(width) / 32),
        }),
    },
    LTXVImgToVideo: {
      source: 'comfy_extras/nodes_lt.py',
      category: 'conditioning/video_models',
      required: {
        positive: LINK('CONDITIONING'),
        negative: LINK('CONDITIONING'),
        vae: LINK('VAE'),
        image: LINK('IMAGE'),
        width: INT({ default: 768, min: 64, max: MAX_RESOLUTION, step: 32 }),
        height: INT({ default: 512, min: 64, max: MAX_RESOLUTION, step: 32 }),
        length: INT({ default: 97, min: 9, max: MAX_RESOLUTION, step: 8 }),
        batch_size: INT({ default: 1, min: 1, max: 4096 }),
        strength: FLOAT({ default: 1.0, min: 0.0, max: 1.0 }),
      },
      outputs: ['CONDITIONING', 'CONDITIONING', 'LATENT'],
      execute: async (_run, { positive, negative, vae, image, width, height, length, batch_size }) => {
        images(image as Value);
        if ((vae as Json).family !== 'ltxv') {
          throw new PyError(
            'RuntimeError',
            'expected the LTX-Video VAE: the encoded image has the wrong shape',
          );
        }
        // The image is common_upscale'd (center crop) to width x height; the latent is EmptyLTXVLatentVideo's.
        return {
          result: [
            positive as Value,
            negative as Value,
            {
              kind: 'LATENT',
              channels: 128,
              batch: Number(batch_size),
              frames: Math.floor((Number(length) - 1) / 8) + 1,
              height: Math.floor(Number(height) / 32),
              width: Math.floor(Number(width) / 32),
            },
          ],
        };
      },
    },
    LTXVAddGuide: {
      source: 'comfy_extras/nodes_lt.py',
      category: 'conditioning/video_models',
      required: {
        positive: LINK('CONDITIONING'),
        negative: LINK('CONDITIONING'),
        vae: LINK('VAE'),
        latent: LINK('LATENT'),
        image: LINK('IMAGE'),
        frame_idx: INT({ default: 0, min: -9999, max: 9999 }),
        strength: FLOAT({ default: 1.0, min: 0.0, max: 1.0, step: 0.01 }),
      },
      outputs: ['CONDITIONING', 'CONDITIONING', 'LATENT'],
      execute: async (_run, { positive, negative, latent, image, frame_idx }) => {
        const guide = images(image as Value);
        const source = latent as Json;
        const keyframes = Number((positive as Json).keyframes ?? 0);
        // encode(): images[:(n - 1) // 8 * 8 + 1] → t latent frames; get_latent_index(); append_keyframe().
        const guideFrames = Math.floor((guide.frames - 1) / 8) * 8 + 1;
        const t = Math.floor((guideFrames - 1) / 8) + 1;
        const latentLength = Number(source.frames);
        let index = Number(frame_idx);
        if (index < 0) index = Math.max((latentLength - keyframes - 1) * 8 + 1 + index, 0);
        if (guideFrames > 1 && index !== 0) index = Math.floor((index - 1) / 8) * 8 + 1;
        const latentIndex = Math.floor((index + 7) / 8);
        if (latentIndex + t > latentLength) {
          throw new PyError(
            'AssertionError',
            'Conditioning frames exceed the length of the latent sequence.',
          );
        }
        const appended = Math.min(2, t);
        return {
          result: [
            { ...(positive as Json), keyframes: keyframes + appended },
            { ...(negative as Json), keyframes: keyframes + appended },
            { ...source, frames: latentLength + appended },
          ],
        };
      },
    },
    LTXVCropGuides: {
      source: 'comfy_extras/nodes_lt.py',
      category: 'conditioning/video_models',
      required: { positive: LINK('CONDITIONING'), negative: LINK('CONDITIONING'), latent: LINK('LATENT') },
      outputs: ['CONDITIONING', 'CONDITIONING', 'LATENT'],
      execute: async (_run, { positive, negative, latent }) => {
        const keyframes = Number((positive as Json).keyframes ?? 0);
        const source = latent as Json;
        return passThrough(
          { ...(positive as Json), keyframes: 0 },
          { ...(negative as Json), keyframes: 0 },
          { ...source, frames: Number(source.frames) - keyframes },
        );
      },
    },
    LTXVConditioning: {
      source: 'comfy_extras/nodes_lt.py',
      category: 'conditioning/video_models',
      required: {
        positive: LINK('CONDITIONING'),
        negative: LINK('CONDITIONING'),
        frame_rate: FLOAT({ default: 25.0, min: 0.0, max: 1000.0, step: 0.01 }),
      },
      outputs: ['CONDITIONING', 'CONDITIONING'],
      execute: async (_run, { positive, negative }) => passThrough(positive as Value, negative as Value),
    },
    LTXVScheduler: {
      source: 'comfy_extras/nodes_lt.py',
      category: 'sampling/custom_sampling/schedulers',
      required: {
        steps: INT({ default: 20, min: 1, max: 10000 }),
        max_shift: FLOAT({ default: 2.05, min: 0.0, max: 100.0, step: 0.01 }),
        base_shift: FLOAT({ default: 0.95, min: 0.0, max: 100.0, step: 0.01 }),
        stretch: BOOLEAN({ default: true }),
        terminal: FLOAT({ default: 0.1, min: 0.0, max: 0.99, step: 0.01 }),
      },
      optional: { latent: LINK('LATENT') },
      outputs: ['SIGMAS'],
      execute: async (_run, { steps }) => passThrough({ kind: 'SIGMAS', count: Number(steps) + 1 }),
    },
    LTXVPreprocess: {
      source: 'comfy_extras/nodes_lt.py',
      category: 'image',
      required: { image: LINK('IMAGE'), img_compression: INT({ default: 35, min: 0, max: 100 }) },
      outputs: ['IMAGE'],
      execute: async (_run, { image }) => passThrough(image as Value),
    },
    // ---------------------------------------------------------------- comfy_extras/nodes_video.py (V3)
    CreateVideo: {
      source: 'comfy_extras/nodes_video.py',
      category: 'image/video',
      required: {
        images: LINK('IMAGE'),
        fps: FLOAT({ default: 30.0, min: 1.0, max: 120.0, step: 1.0 }),
      },
      optional: { audio: LINK('AUDIO') },
      outputs: ['VIDEO'],
      execute: async (_run, inputs) =>
        passThrough({ kind: 'VIDEO', ...images(inputs.images as Value), fps: Number(inputs.fps) }),
    },
    SaveVideo: {
      source: 'comfy_extras/nodes_video.py',
      category: 'image/video',
      required: {
        video: LINK('VIDEO'),
        filename_prefix: STRING({ default: 'video/ComfyUI' }),
        // VideoContainer.as_input() / VideoCodec.as_input() in 0.3.64; newer add mkv, webm / av1.
        format: V3_COMBO(['auto', 'mp4'], { default: 'auto' }),
        codec: V3_COMBO(['auto', 'h264'], { default: 'auto' }),
      },
      outputs: [],
      outputNode: true,
      execute: async (run, inputs) => {
        const video = inputs.video as Json;
        const { folder, filename, counter, subfolder } = await saveImagePath(
          String(inputs.filename_prefix),
          run.server.outputDir,
          Number(video.width),
          Number(video.height),
        );
        const file = `${filename}_${String(counter).padStart(5, '0')}_.mp4`;
        // VideoFromComponents.save_to: PyAV h264 yuv420p at Fraction(round(fps * 1000), 1000), moov at the end.
        await run.server.media.writeVideo(pyJoin(folder, file), {
          width: Number(video.width),
          height: Number(video.height),
          frames: Number(video.frames),
          fps: Math.round(Number(video.fps) * 1000) / 1000,
        });
        run.server.recordSave(run.promptId, run.nodeId, pyJoin(subfolder, file), video);
        // ui.PreviewVideo([ui.SavedResult(file, subfolder, io.FolderType.output)]).as_dict()
        return {
          result: [],
          ui: { images: [{ filename: file, subfolder, type: 'output' }], animated: [true] },
        };
      },
    },
    // ---------------------------------------------------------------- ComfyUI-VideoHelperSuite (custom node)
    VHS_VideoCombine: {
      source: 'Kosinkadink/ComfyUI-VideoHelperSuite@4ee72c06 videohelpersuite/nodes.py',
      category: 'Video Helper Suite 🎥🅥🅗🅢',
      required: {
        images: { type: 'IMAGE', accepts: ['IMAGE', 'LATENT'] },
        // floatOrInt = MultiInput("FLOAT", ["FLOAT", "INT"]): validated as FLOAT.
        frame_rate: { type: 'FLOAT', accepts: ['FLOAT', 'INT'], default: 8, min: 1, step: 1 },
        loop_count: INT({ default: 0, min: 0, max: 100, step: 1 }),
        filename_prefix: STRING({ default: 'AnimateDiff' }),
        format: V1_COMBO(VHS_FORMATS),
        pingpong: BOOLEAN({ default: false }),
        save_output: BOOLEAN({ default: true }),
      },
      optional: { audio: LINK('AUDIO'), meta_batch: LINK('VHS_BatchManager'), vae: LINK('VAE') },
      outputs: ['VHS_FILENAMES'],
      outputNode: true,
      uniqueIdInCacheKey: true,
      execute: async (run, inputs) => {
        const picture = images(inputs.images as Value);
        if (inputs.format !== 'video/h264-mp4') {
          throw new PyError('NotImplementedError', `the fake VHS_VideoCombine writes only video/h264-mp4`);
        }
        const saveOutput = inputs.save_output !== false;
        const base = saveOutput ? run.server.outputDir : run.server.tempDir;
        const { folder, filename, subfolder } = await saveImagePath(String(inputs.filename_prefix), base);
        const matcher = new RegExp(
          `^${filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}_(\\d+)\\D*\\..+$`,
          'i',
        );
        let counter = 0;
        for (const name of await readdir(folder)) {
          const match = matcher.exec(name);
          if (match) counter = Math.max(counter, Number(match[1]));
        }
        counter += 1;
        const stem = `${filename}_${String(counter).padStart(5, '0')}`;
        await copyFile(
          await run.server.media.still(picture.width, picture.height),
          pyJoin(folder, `${stem}.png`),
        );
        const frames = inputs.pingpong === true ? Math.max(1, 2 * picture.frames - 2) : picture.frames;
        const fps = Number(inputs.frame_rate);
        // pbar = ProgressBar(num_frames), updated as each frame is piped to ffmpeg.
        run.progress(picture.frames);
        await run.server.media.writeVideo(pyJoin(folder, `${stem}.mp4`), { ...picture, frames, fps });
        run.server.recordSave(run.promptId, run.nodeId, pyJoin(subfolder, `${stem}.mp4`), {
          ...picture,
          frames,
          fps,
        });
        const preview = {
          filename: `${stem}.mp4`,
          subfolder,
          type: saveOutput ? 'output' : 'temp',
          format: inputs.format,
          frame_rate: fps,
          workflow: `${stem}.png`,
          fullpath: pyJoin(folder, `${stem}.mp4`),
        };
        return { result: [null], ui: { gifs: [preview] } };
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Validation: execution.validate_prompt and validate_inputs, step by step.
// ---------------------------------------------------------------------------------------------------------

interface ComfyError {
  readonly type: string;
  readonly message: string;
  readonly details: string;
  readonly extra_info: Json;
}

type Validated = Map<string, readonly [boolean, readonly ComfyError[], string]>;

interface Validation {
  readonly ok: boolean;
  readonly error?: ComfyError;
  readonly outputs: readonly string[];
  readonly nodeErrors: Json;
}

/** comfy_execution/validation.py validate_node_input (0.3.64), with VHS's MultiInput `__ne__`. */
function linkTypeFits(received: string, spec: InputSpec): boolean {
  if (spec.accepts) return spec.accepts.includes(received);
  if (spec.type === 'COMBO') return false;
  if (received === spec.type) return true;
  const got = new Set(received.split(',').map((t) => t.trim()));
  return spec.type.split(',').some((t) => got.has(t.trim()));
}

/** The input type as INPUT_TYPES gives it (a V1 combo's type is its option list). */
function inputConfig(spec: InputSpec, server: FakeComfyUi): unknown[] {
  const options: Json = {};
  for (const key of ['default', 'min', 'max', 'step'] as const) {
    const value = spec[key];
    if (value !== undefined) options[key] = typeof value === 'bigint' ? Number(value) : value;
  }
  if (spec.type === 'COMBO' && spec.v1) return [spec.options?.(server) ?? [], options];
  if (spec.type === 'COMBO') return ['COMBO', { ...options, options: spec.options?.(server) ?? [] }];
  return [spec.type, options];
}

/**
 * execution.py validate_inputs: each declared input of a node (required ones must be there), links checked
 * for type and followed, literals converted with int()/float()/str()/bool() and then checked against min, max
 * and the combo's options (not `step`), then the node's VALIDATE_INPUTS. Undeclared inputs are never looked at.
 */
async function validateInputs(
  server: FakeComfyUi,
  prompt: Json,
  id: string,
  validated: Validated,
): Promise<readonly [boolean, readonly ComfyError[], string]> {
  const known = validated.get(id);
  if (known) return known;
  const node = prompt[id] as Json;
  if (!isDict(node.inputs)) {
    if (!('inputs' in node)) throw new PyError('KeyError', "'inputs'");
    throw new PyError('TypeError', `argument of type '${pyTypeName(node.inputs)}' is not iterable`);
  }
  const inputs = node.inputs;
  const def = server.nodes[String(node.class_type)] as NodeDef;
  const errors: ComfyError[] = [];
  let valid = true;
  const validateArgs = def.validate?.inputs ?? [];
  const all: [string, InputSpec, 'required' | 'optional'][] = [
    ...Object.entries(def.required).map(([k, v]) => [k, v, 'required'] as [string, InputSpec, 'required']),
    ...Object.entries(def.optional ?? {}).map(
      ([k, v]) => [k, v, 'optional'] as [string, InputSpec, 'optional'],
    ),
  ];
  for (const [name, spec, category] of all) {
    const info = inputConfig(spec, server);
    if (!(name in inputs)) {
      if (category === 'required') {
        errors.push({
          type: 'required_input_missing',
          message: 'Required input is missing',
          details: name,
          extra_info: { input_name: name },
        });
      }
      continue;
    }
    let value = inputs[name];
    if (Array.isArray(value)) {
      if (value.length !== 2) {
        errors.push({
          type: 'bad_linked_input',
          message: 'Bad linked input, must be a length-2 list of [node_id, slot_index]',
          details: name,
          extra_info: { input_name: name, input_config: info, received_value: value },
        });
        continue;
      }
      const [from, slot] = value as [unknown, unknown];
      // prompt[o_id]['class_type']: outside any try, so a missing node raises out of this call.
      if (typeof from !== 'string' || !isDict(prompt[from])) throw new PyError('KeyError', pyRepr(from));
      const source = server.nodes[String((prompt[from] as Json).class_type)];
      if (!source) throw new PyError('KeyError', pyRepr((prompt[from] as Json).class_type));
      if (typeof slot !== 'number' || !Number.isInteger(slot)) {
        throw new PyError('TypeError', `tuple indices must be integers or slices, not ${pyTypeName(slot)}`);
      }
      const received = source.outputs.at(slot);
      if (received === undefined || slot >= source.outputs.length || slot < -source.outputs.length) {
        throw new PyError('IndexError', 'tuple index out of range');
      }
      if (!linkTypeFits(received, spec)) {
        errors.push({
          type: 'return_type_mismatch',
          message: 'Return type mismatch between linked nodes',
          details: `${name}, received_type(${received}) mismatch input_type(${pyStr(info[0])})`,
          extra_info: { input_name: name, input_config: info, received_type: received, linked_node: value },
        });
        continue;
      }
      try {
        const inner = await validateInputs(server, prompt, from, validated);
        if (!inner[0]) valid = false;
      } catch (error) {
        valid = false;
        const ex = error instanceof PyError ? error : new PyError('Exception', String(error));
        validated.set(from, [
          false,
          [
            {
              type: 'exception_during_inner_validation',
              message: 'Exception when validating inner node',
              details: ex.message,
              extra_info: {
                input_name: name,
                input_config: info,
                exception_message: ex.message,
                exception_type: ex.pyType,
                traceback: [],
                linked_node: value,
              },
            },
          ],
          from,
        ]);
      }
      continue;
    }
    try {
      if (isDict(value) && '__value__' in value) {
        value = value.__value__;
        inputs[name] = value;
      }
      if (spec.type === 'INT') value = pyInt(value);
      if (spec.type === 'FLOAT') value = pyFloatOf(value);
      if (spec.type === 'STRING') value = pyStr(value);
      if (spec.type === 'BOOLEAN') value = pyBool(value);
      inputs[name] = value;
    } catch (error) {
      const ex = error as PyError;
      errors.push({
        type: 'invalid_input_type',
        message: `Failed to convert an input value to a ${spec.type} value`,
        details: `${name}, ${pyStr(value)}, ${ex.message}`,
        extra_info: {
          input_name: name,
          input_config: info,
          received_value: value,
          exception_message: ex.message,
        },
      });
      continue;
    }
    if (validateArgs.includes(name)) continue;
    const show = (n: number | bigint): string =>
      spec.type === 'FLOAT' && typeof n === 'number' ? pyFloat(n) : String(n);
    if (spec.min !== undefined && typeof value === 'number' && pyLess(value, spec.min)) {
      errors.push({
        type: 'value_smaller_than_min',
        message: `Value ${show(value)} smaller than min of ${show(spec.min)}`,
        details: name,
        extra_info: { input_name: name, input_config: info, received_value: value },
      });
      continue;
    }
    if (
      spec.max !== undefined &&
      typeof value === 'number' &&
      (typeof spec.max === 'bigint' && Number.isInteger(value)
        ? BigInt(value) > spec.max
        : value > Number(spec.max))
    ) {
      errors.push({
        type: 'value_bigger_than_max',
        message: `Value ${show(value)} bigger than max of ${show(spec.max)}`,
        details: name,
        extra_info: { input_name: name, input_config: info, received_value: value },
      });
      continue;
    }
    // V1 combos always; V3 combos [newer] (PR #11345) — 0.3.64 let them through to fail at execution.
    if (spec.type === 'COMBO') {
      const options = spec.options?.(server) ?? [];
      if (!options.includes(value as string)) {
        const long = options.length > 20;
        errors.push({
          type: 'value_not_in_list',
          message: 'Value not in list',
          details: `${name}: '${pyStr(value)}' not in ${long ? `(list of length ${options.length})` : pyRepr(options)}`,
          extra_info: { input_name: name, input_config: long ? null : info, received_value: value },
        });
      }
    }
  }
  if (def.validate) {
    const values: Json = {};
    for (const name of def.validate.inputs) values[name] = Array.isArray(inputs[name]) ? null : inputs[name];
    const answer = await def.validate.check(values, server);
    if (answer !== true) {
      for (const name of def.validate.inputs) {
        errors.push({
          type: 'custom_validation_failed',
          message: 'Custom validation failed for node',
          details: `${name} - ${answer}`,
          extra_info: { input_name: name },
        });
      }
    }
  }
  const result = [errors.length === 0 && valid, errors, id] as const;
  validated.set(id, result);
  return result;
}

/**
 * execution.py validate_prompt: every node needs a known class_type; the output nodes (OUTPUT_NODE, or those in
 * partial_execution_targets) are validated; the prompt runs if any output is valid, and 400s if none is.
 */
async function validatePrompt(server: FakeComfyUi, prompt: unknown, partial: unknown): Promise<Validation> {
  if (!isDict(prompt)) {
    // `for x in prompt` then `prompt[x]`: only an empty list or string gets as far as "no outputs".
    if ((Array.isArray(prompt) || typeof prompt === 'string') && prompt.length === 0) {
      return { ok: false, error: noOutputs(), outputs: [], nodeErrors: {} };
    }
    throw new PyError('TypeError', `'${pyTypeName(prompt)}' object is not subscriptable`);
  }
  const outputs: string[] = [];
  for (const [id, node] of Object.entries(prompt)) {
    if (!isDict(node) || !('class_type' in node)) {
      if (node === null || typeof node === 'number' || typeof node === 'boolean') {
        throw new PyError('TypeError', `argument of type '${pyTypeName(node)}' is not iterable`);
      }
      // 0.3.64; [newer] answers missing_node_type "Node '…' has no class_type…" with extra_info.
      return {
        ok: false,
        error: {
          type: 'invalid_prompt',
          message: 'Cannot execute because a node is missing the class_type property.',
          details: `Node ID '#${id}'`,
          extra_info: {},
        },
        outputs: [],
        nodeErrors: {},
      };
    }
    const classType = node.class_type;
    if (Array.isArray(classType) || isDict(classType)) {
      throw new PyError('TypeError', `unhashable type: '${pyTypeName(classType)}'`);
    }
    const def = typeof classType === 'string' ? server.nodes[classType] : undefined;
    if (!def) {
      return {
        ok: false,
        error: {
          type: 'invalid_prompt',
          message: `Cannot execute because node ${pyStr(classType)} does not exist.`,
          details: `Node ID '#${id}'`,
          extra_info: {},
        },
        outputs: [],
        nodeErrors: {},
      };
    }
    if (
      def.outputNode &&
      (partial === null || partial === undefined || (Array.isArray(partial) && partial.includes(id)))
    ) {
      outputs.push(id);
    }
  }
  if (outputs.length === 0) return { ok: false, error: noOutputs(), outputs: [], nodeErrors: {} };

  const good: string[] = [];
  const failed: [string, readonly ComfyError[]][] = [];
  const nodeErrors: Record<
    string,
    { errors: readonly ComfyError[]; dependent_outputs: string[]; class_type: unknown }
  > = {};
  const validated: Validated = new Map();
  for (const output of outputs) {
    let ok = false;
    let reasons: readonly ComfyError[] = [];
    try {
      [ok, reasons] = await validateInputs(server, prompt, output, validated);
    } catch (error) {
      const ex = error instanceof PyError ? error : new PyError('Exception', String(error));
      reasons = [
        {
          type: 'exception_during_validation',
          message: 'Exception when validating node',
          details: ex.message,
          extra_info: { exception_type: ex.pyType, traceback: [] },
        },
      ];
      validated.set(output, [false, reasons, output]);
    }
    if (ok) {
      good.push(output);
      continue;
    }
    failed.push([output, reasons]);
    // Every failing node seen so far is charged to this output, as execution.py does.
    for (const [id, [nodeOk, nodeReasons]] of validated) {
      if (nodeOk || nodeReasons.length === 0) continue;
      nodeErrors[id] ??= {
        errors: nodeReasons,
        dependent_outputs: [],
        class_type: (prompt[id] as Json).class_type,
      };
      nodeErrors[id].dependent_outputs.push(output);
    }
  }
  if (good.length === 0) {
    return {
      ok: false,
      error: {
        type: 'prompt_outputs_failed_validation',
        message: 'Prompt outputs failed validation',
        details: failed.flatMap(([, reasons]) => reasons.map((r) => `${r.message}: ${r.details}`)).join('\n'),
        extra_info: {},
      },
      outputs: [],
      nodeErrors,
    };
  }
  return { ok: true, outputs: good, nodeErrors };
}

function noOutputs(): ComfyError {
  return { type: 'prompt_no_outputs', message: 'Prompt has no outputs', details: '', extra_info: {} };
}

// ---------------------------------------------------------------------------------------------------------
// Media: real MP4s and PNGs, made once per size (and frame count, fps) and copied where a node saves them.
// ---------------------------------------------------------------------------------------------------------

export interface VideoShape {
  readonly width: number;
  readonly height: number;
  readonly frames: number;
  readonly fps: number;
}

class MediaCache {
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** A flat-colour H.264 yuv420p MP4 of exactly this shape (moov at the end, as PyAV writes it). */
  async writeVideo(path: string, shape: VideoShape): Promise<void> {
    const { width, height, frames, fps } = shape;
    // Float noise in a node's rate (23.976000000000003) is dropped: ffmpeg gets it to a thousandth.
    const rate = Math.round(fps * 1000) / 1000;
    const source = await fakeVideoFile(this.#dir, {
      width,
      height,
      fps: rate,
      frames,
      picture: { colour: '0x5a4fb0' },
    });
    await copyFile(source, path);
  }

  /** A PNG of this size. */
  still(width: number, height: number): Promise<string> {
    return cachedFile(posix.join(this.#dir, `still-${width}x${height}.png`), (partial) =>
      run(ffmpegPath(), [
        ...['-v', 'error', '-nostdin', '-y'],
        ...['-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=1`, '-frames:v', '1', partial],
      ]),
    );
  }
}

// ---------------------------------------------------------------------------------------------------------
// The server.
// ---------------------------------------------------------------------------------------------------------

/** A prompt ComfyUI accepted, as the engine sent it. */
export interface AcceptedPrompt {
  readonly id: string;
  readonly number: number;
  readonly clientId: string | undefined;
  /** The `prompt` object exactly as received (before validation converted any value). */
  readonly workflow: Record<string, { class_type: string; inputs: Json; [key: string]: unknown }>;
}

/** A video file a save node wrote: its path under the output (or temp) folder and its shape. */
export interface SavedVideo extends VideoShape {
  readonly promptId: string;
  readonly node: string;
  readonly file: string;
}

/**
 * NOT ComfyUI: an authenticating reverse proxy in front of it (nginx with auth_request, a cloud gateway).
 * ComfyUI itself has no authentication and ignores any Authorization header.
 */
export interface ProxyOptions {
  /** Requests (and websocket upgrades) without `Authorization: Bearer <key>` get 401. */
  bearer?: string;
  /** The proxy does not pass websocket upgrades (answers 502). */
  refuseWebSockets?: boolean;
  /** The proxy cuts the prompt's websocket once this node has finished its steps. */
  cutWebSocketAfterNode?: string;
}

/** NOT ComfyUI's choice: what happens on the GPU box during a run, set by the test. */
export interface GpuEvents {
  /** This node raises when it runs (after its first sampling step, for a sampler). */
  failNode?: { readonly node: string; readonly type: string; readonly message: string };
  /** This node's sampling step `afterSteps + 1` never ends until the prompt is interrupted. */
  stallNode?: { readonly node: string; readonly afterSteps?: number };
  /** The worker does not take prompts off the queue (another long job runs elsewhere). */
  paused?: boolean;
}

interface QueueItem {
  readonly number: number;
  readonly seq: number;
  readonly id: string;
  readonly prompt: Json;
  readonly extraData: Json;
  readonly outputs: readonly string[];
}

interface CacheEntry {
  readonly result: readonly Value[];
  readonly ui?: Json;
}

export interface FakeComfyUiEvents {
  /** A POST /prompt arrived (before it is validated). */
  'prompt-received': [];
  queued: [id: string];
  started: [id: string];
  /** A stalled sampler is waiting for an interrupt. */
  stalled: [id: string, node: string];
  interrupt: [body: Json];
  'queue-call': [body: Json];
  finished: [id: string, status: string];
}

export class FakeComfyUi {
  readonly root: string;
  readonly inputDir: string;
  readonly outputDir: string;
  readonly tempDir: string;
  readonly media: MediaCache;
  readonly nodes: Readonly<Record<string, NodeDef>> = nodeDefinitions();
  readonly events = new EventEmitter<FakeComfyUiEvents>();

  /** Every prompt ComfyUI accepted. */
  readonly prompts: AcceptedPrompt[] = [];
  /** Every video a save node wrote. */
  readonly savedVideos: SavedVideo[] = [];
  /** Bodies of POST /interrupt and POST /queue. */
  readonly interrupts: Json[] = [];
  readonly queueCalls: Json[] = [];
  /** The Authorization header of each HTTP request and each websocket upgrade. */
  readonly authorizations: (string | undefined)[] = [];
  readonly socketAuthorizations: (string | undefined)[] = [];
  /** Files uploaded since the last reset: their name as LoadImage takes it (`subfolder/name`) → bytes. */
  readonly uploads = new Map<string, Buffer>();

  /** See ProxyOptions: not ComfyUI. */
  proxy: ProxyOptions = {};
  /** See GpuEvents: not ComfyUI's choice. */
  gpu: GpuEvents = {};
  /** Send binary preview frames while sampling, as with `--preview-method auto` (default: none). */
  previews = false;
  /** `--max-upload-size` in bytes (aiohttp's client_max_size; default 100 MB). */
  maxUploadBytes = 100 * 1024 * 1024;

  readonly #http: LoopbackServer;
  readonly #sockets = new WebSocketServer({ noServer: true });
  readonly #clients = new Map<string, WsSocket>();
  #models: Record<ModelFolder, Record<string, ModelFile>> = structuredClone(DEFAULT_MODELS) as Record<
    ModelFolder,
    Record<string, ModelFile>
  >;
  #number = 0;
  #seq = 0;
  readonly #queue: QueueItem[] = [];
  #running: QueueItem | undefined;
  #runningDone: Promise<void> | undefined;
  readonly #history = new Map<string, Json>();
  #cache = new Map<string, CacheEntry>();
  #interrupted = false;
  #onInterrupt: (() => void)[] = [];
  /** The client of the prompt running now (server.client_id) and its current node (server.last_node_id). */
  #clientId: string | null = null;
  #lastNodeId: string | null = null;
  #flags: Json = {};
  #promptGate: Promise<void> | undefined;
  #releaseGate: (() => void) | undefined;
  /** POST /prompt requests being handled. */
  readonly #promptRequests = new Set<Promise<void>>();

  private constructor(root: string) {
    this.root = root;
    this.inputDir = posix.join(root, 'input');
    this.outputDir = posix.join(root, 'output');
    this.tempDir = posix.join(root, 'temp');
    this.media = new MediaCache(posix.join(root, 'media-cache'));
    this.#http = new LoopbackServer((req, res) =>
      this.#handle(req, res).catch((error: unknown) => {
        // aiohttp's answer to an exception in a handler.
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`500 Internal Server Error\n\nServer got itself in trouble (${String(error)})`);
      }),
    );
    this.#http.server.on('upgrade', (req, socket: Socket, head) => this.#upgrade(req, socket, head));
  }

  /** Starts on 127.0.0.1 (ComfyUI's default `--listen`) on a free port, with empty input/output folders. */
  static async start(): Promise<FakeComfyUi> {
    const root = await mkdtemp(posix.join(tmpdir(), 'fake-comfyui-'));
    const fake = new FakeComfyUi(root);
    await Promise.all(
      [fake.inputDir, fake.outputDir, fake.tempDir].map((d) => mkdir(d, { recursive: true })),
    );
    await fake.#http.listen();
    return fake;
  }

  get baseUrl(): string {
    return this.#http.url;
  }

  /** Resolves with the event's arguments the next time it happens. */
  waitFor<E extends keyof FakeComfyUiEvents>(event: E): Promise<FakeComfyUiEvents[E]> {
    return once(this.events as EventEmitter, event) as Promise<FakeComfyUiEvents[E]>;
  }

  /** POST /prompt requests wait (before validation) until the returned function is called. */
  holdPromptRequests(): () => void {
    let release = (): void => undefined;
    this.#promptGate = new Promise<void>((resolve) => {
      release = () => {
        this.#promptGate = undefined;
        this.#releaseGate = undefined;
        resolve();
      };
    });
    this.#releaseGate = release;
    return release;
  }

  /** Removes a model file, as if it were not installed: loaders then refuse its name. */
  uninstallModel(folder: ModelFolder, name: string): void {
    delete this.#models[folder][name];
  }

  modelNames(folder: ModelFolder): string[] {
    return Object.keys(this.#models[folder]).sort();
  }

  model(folder: ModelFolder, name: string): ModelFile {
    const file = this.#models[folder][name];
    if (!file)
      throw new PyError(
        'FileNotFoundError',
        `Model in folder '${folder}' with filename '${name}' not found.`,
      );
    return file;
  }

  /** LoadImage's options: the image files directly in the input folder (by extension), sorted. */
  inputImages(): string[] {
    return readdirSync(this.inputDir, { withFileTypes: true })
      .filter((entry) => entry.isFile() && /\.(png|jpe?g|webp|gif|bmp|tiff?)$/i.test(entry.name))
      .map((entry) => entry.name)
      .sort();
  }

  /** folder_paths.get_annotated_filepath, for the input folder. */
  annotatedPath(name: string): string {
    for (const [suffix, dir] of [
      ['[output]', this.outputDir],
      ['[input]', this.inputDir],
      ['[temp]', this.tempDir],
    ] as const) {
      if (name.endsWith(suffix)) return pyJoin(dir, name.slice(0, -(suffix.length + 1)));
    }
    return pyJoin(this.inputDir, name);
  }

  recordSave(promptId: string, node: string, file: string, shape: Json): void {
    this.savedVideos.push({
      promptId,
      node,
      file,
      width: Number(shape.width),
      height: Number(shape.height),
      frames: Number(shape.frames),
      fps: Number(shape.fps),
    });
  }

  /** The history entry of a prompt, once it has finished. */
  history(promptId: string): Json | undefined {
    return this.#history.get(promptId);
  }

  /** Resolves with the prompt's history entry once it has finished (at once if it has). */
  async settled(promptId: string): Promise<Json> {
    for (;;) {
      const entry = this.#history.get(promptId);
      if (entry) return entry;
      await this.waitFor('finished');
    }
  }

  /**
   * Back to a freshly started server behind no proxy: the running prompt is interrupted and waited for, the
   * queue emptied, the cache dropped (as `POST /free {"free_memory": true}`), models reinstalled, records
   * cleared. History and files stay, as on a real server (so save counters go on: `ComfyUI_00002_.mp4`).
   */
  async reset(): Promise<void> {
    this.gpu = {};
    this.proxy = {};
    this.previews = false;
    this.#releaseGate?.();
    await Promise.allSettled([...this.#promptRequests]);
    this.#queue.length = 0;
    if (this.#running) {
      this.#interrupt();
      await this.#runningDone;
    }
    this.#cache = new Map();
    this.#models = structuredClone(DEFAULT_MODELS) as Record<ModelFolder, Record<string, ModelFile>>;
    this.prompts.length = 0;
    this.savedVideos.length = 0;
    this.interrupts.length = 0;
    this.queueCalls.length = 0;
    this.authorizations.length = 0;
    this.socketAuthorizations.length = 0;
    this.uploads.clear();
  }

  async close(): Promise<void> {
    this.#queue.length = 0;
    if (this.#running) {
      this.#interrupt();
      await this.#runningDone;
    }
    for (const ws of this.#clients.values()) ws.terminate();
    this.#sockets.close();
    await this.#http.close();
    await rm(this.root, { recursive: true, force: true });
  }

  // ------------------------------------------------------------------------------------------- HTTP

  /** server.py create_origin_only_middleware: a loopback Host with an Origin naming another host is 403. */
  #originRefused(req: IncomingMessage): boolean {
    const host = req.headers.host;
    const origin = req.headers.origin;
    if (host === undefined || origin === undefined) return false;
    const split = (netloc: string): { hostname: string | null; port: number | null } => {
      const bare = netloc.slice(netloc.lastIndexOf('@') + 1).toLowerCase();
      const match = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(bare);
      const name = match?.[1] ?? '';
      return {
        hostname: name === '' ? null : name.replace(/^\[|\]$/g, ''),
        port: match?.[2] ? Number(match[2]) : null,
      };
    };
    let hostDomain: string | null = host.toLowerCase();
    const hostParsed = split(hostDomain);
    const netloc = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(origin)?.[1] ?? '';
    let originDomain: string | null = netloc.toLowerCase();
    const originParsed = split(netloc);
    const name = hostParsed.hostname;
    const loopback =
      name !== null && (/^127\.\d+\.\d+\.\d+$/.test(name) || name === '::1' || name === 'localhost');
    if (originParsed.port === null) hostDomain = hostParsed.hostname;
    if (hostParsed.port === null) originDomain = originParsed.hostname;
    return Boolean(loopback && hostDomain && originDomain && hostDomain !== originDomain);
  }

  /** NOT ComfyUI: the authenticating proxy's check. */
  #proxyRefused(req: IncomingMessage): boolean {
    return this.proxy.bearer !== undefined && req.headers.authorization !== `Bearer ${this.proxy.bearer}`;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.authorizations.push(req.headers.authorization);
    if (this.#proxyRefused(req)) {
      await drain(req);
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end('401 Unauthorized');
      return;
    }
    if (this.#originRefused(req)) {
      await drain(req);
      res.writeHead(403);
      res.end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://comfy.invalid');
    // Every route is also registered under /api (server.py add_routes).
    const path = url.pathname.startsWith('/api/') ? url.pathname.slice(4) : url.pathname;
    const method = req.method ?? 'GET';
    const length = Number(req.headers['content-length'] ?? 0);
    if (length > this.maxUploadBytes) {
      req.resume();
      return text(res, 413, `413: Request Entity Too Large`);
    }
    const body = await readBody(req);
    const get = method === 'GET' || method === 'HEAD';
    const route = (m: 'GET' | 'POST'): boolean => (m === 'GET' ? get : method === 'POST');
    const routes: [RegExp, 'GET' | 'POST', (match: RegExpExecArray) => Promise<void> | void][] = [
      [/^\/system_stats$/, 'GET', () => json(res, 200, this.#systemStats())],
      [/^\/features$/, 'GET', () => json(res, 200, this.#features())],
      [/^\/prompt$/, 'GET', () => json(res, 200, this.#queueInfo())],
      [
        /^\/prompt$/,
        'POST',
        () => {
          const handling = this.#postPrompt(body, res);
          this.#promptRequests.add(handling);
          return handling.finally(() => this.#promptRequests.delete(handling));
        },
      ],
      [/^\/queue$/, 'GET', () => json(res, 200, this.#currentQueue())],
      [/^\/queue$/, 'POST', () => this.#postQueue(body, res)],
      [/^\/interrupt$/, 'POST', () => this.#postInterrupt(body, res)],
      [/^\/free$/, 'POST', () => this.#postFree(body, res)],
      [/^\/history$/, 'GET', () => this.#getHistory(url, res)],
      [/^\/history$/, 'POST', () => this.#postHistory(body, res)],
      [
        /^\/history\/([^/]+)$/,
        'GET',
        (m) => {
          const id = decodeURIComponent(m[1] ?? '');
          const entry = this.#history.get(id);
          json(res, 200, entry ? { [id]: structuredClone(entry) } : {});
        },
      ],
      [/^\/view$/, 'GET', () => this.#view(url, res)],
      [/^\/upload\/image$/, 'POST', () => this.#upload(req, body, res)],
      [/^\/object_info$/, 'GET', () => json(res, 200, this.#objectInfo())],
      [
        /^\/object_info\/([^/]+)$/,
        'GET',
        (m) => {
          const name = decodeURIComponent(m[1] ?? '');
          json(res, 200, this.nodes[name] ? { [name]: this.#nodeInfo(name) } : {});
        },
      ],
      [/^\/embeddings$/, 'GET', () => json(res, 200, [])],
      [/^\/models$/, 'GET', () => json(res, 200, Object.keys(this.#models))],
      [
        /^\/models\/([^/]+)$/,
        'GET',
        (m) => {
          const folder = decodeURIComponent(m[1] ?? '') as ModelFolder;
          if (!(folder in this.#models)) return void text(res, 404, '');
          json(res, 200, this.modelNames(folder));
        },
      ],
    ];
    let pathMatched = false;
    for (const [pattern, m, handler] of routes) {
      const match = pattern.exec(path);
      if (!match) continue;
      pathMatched = true;
      if (route(m)) return handler(match);
    }
    if (pathMatched) return text(res, 405, '405: Method Not Allowed');
    text(res, 404, '404: Not Found');
  }

  /** server.py system_stats (0.3.64 fields; the numbers are made up). */
  #systemStats(): Json {
    return {
      system: {
        os: 'posix',
        ram_total: 67_108_864_000,
        ram_free: 50_000_000_000,
        comfyui_version: '0.3.64',
        required_frontend_version: '1.27.10',
        installed_templates_version: '0.1.94',
        required_templates_version: '0.1.94',
        python_version: '3.12.3 (main) [GCC 13.2.0]',
        pytorch_version: '2.8.0+cu128',
        embedded_python: false,
        argv: ['main.py', '--listen', '127.0.0.1'],
      },
      devices: [
        {
          name: 'cuda:0 NVIDIA GeForce RTX 4090 : cudaMallocAsync',
          type: 'cuda',
          index: 0,
          vram_total: 25_757_220_864,
          vram_free: 24_000_000_000,
          torch_vram_total: 0,
          torch_vram_free: 0,
        },
      ],
    };
  }

  /** comfy_api/feature_flags.py SERVER_FEATURE_FLAGS (GET /features, the websocket's feature_flags reply). */
  #features(): Json {
    return { supports_preview_metadata: true, max_upload_size: this.maxUploadBytes };
  }

  /** server.py get_queue_info: pending plus running (GET /prompt, `status` messages). */
  #queueInfo(): Json {
    return { exec_info: { queue_remaining: this.#queue.length + (this.#running ? 1 : 0) } };
  }

  /** server.py get_queue: [number, prompt_id, prompt, extra_data, outputs_to_execute] items. */
  #currentQueue(): Json {
    const item = (q: QueueItem): unknown[] => [q.number, q.id, q.prompt, q.extraData, q.outputs];
    return {
      queue_running: this.#running ? [item(this.#running)] : [],
      queue_pending: this.#ordered().map(item),
    };
  }

  #ordered(): QueueItem[] {
    return [...this.#queue].sort((a, b) => a.number - b.number || a.seq - b.seq);
  }

  /** server.py post_prompt. */
  async #postPrompt(body: Buffer, res: ServerResponse): Promise<void> {
    this.events.emit('prompt-received');
    if (this.#promptGate) await this.#promptGate;
    const data = parseJson(body);
    if (!isDict(data)) {
      if (Array.isArray(data) || typeof data === 'string') return json(res, 400, noPrompt());
      throw new PyError('TypeError', `argument of type '${pyTypeName(data)}' is not iterable`);
    }
    let number: number;
    if ('number' in data) {
      number = pyFloatOf(data.number);
    } else {
      number = this.#number;
      if ('front' in data && pyBool(data.front)) number = -number;
      this.#number += 1;
    }
    if (!('prompt' in data)) return json(res, 400, noPrompt());
    const prompt = data.prompt;
    let promptId: string;
    if ('prompt_id' in data) {
      promptId = pyStr(data.prompt_id);
      // [newer] server.py: a client prompt_id must be a canonical lowercase UUID.
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(promptId)) {
        return json(res, 400, {
          error: {
            type: 'invalid_prompt_id',
            message: 'prompt_id must be a valid UUID',
            details:
              'prompt_id must be a UUID string in canonical lowercase hyphenated form; omit it to let the server generate one',
            extra_info: {},
          },
          node_errors: {},
        });
      }
    } else {
      promptId = randomUUID();
    }
    const sent = structuredClone(prompt) as AcceptedPrompt['workflow'];
    const valid = await validatePrompt(this, prompt, data.partial_execution_targets);
    const extraData: Json = isDict(data.extra_data) ? data.extra_data : {};
    if ('client_id' in data) extraData.client_id = data.client_id;
    if (!valid.ok) return json(res, 400, { error: valid.error, node_errors: valid.nodeErrors });
    const clientId = typeof extraData.client_id === 'string' ? extraData.client_id : undefined;
    this.prompts.push({ id: promptId, number, clientId, workflow: sent });
    this.#queue.push({
      number,
      seq: this.#seq++,
      id: promptId,
      prompt: prompt as Json,
      extraData,
      outputs: valid.outputs,
    });
    this.#queueUpdated();
    json(res, 200, { prompt_id: promptId, number, node_errors: valid.nodeErrors });
    this.events.emit('queued', promptId);
    this.#pump();
  }

  /** server.py post_queue: removes pending prompts only; always 200 with an empty body. */
  #postQueue(body: Buffer, res: ServerResponse): void {
    const data = parseJson(body);
    if (!isDict(data))
      throw new PyError('TypeError', `argument of type '${pyTypeName(data)}' is not iterable`);
    this.queueCalls.push(data);
    if ('clear' in data && pyBool(data.clear)) {
      this.#queue.length = 0;
      this.#queueUpdated();
    }
    if ('delete' in data) {
      for (const id of data.delete as unknown[]) {
        const index = this.#queue.findIndex((item) => item.id === id);
        if (index >= 0) {
          this.#queue.splice(index, 1);
          this.#queueUpdated();
        }
      }
    }
    empty(res);
    this.events.emit('queue-call', data);
  }

  /** server.py post_interrupt: any body (or none); interrupts only the named prompt if it is the running one. */
  #postInterrupt(body: Buffer, res: ServerResponse): void {
    let data: unknown;
    try {
      data = parseJson(body);
    } catch {
      data = {};
    }
    if (!isDict(data))
      throw new PyError('AttributeError', `'${pyTypeName(data)}' object has no attribute 'get'`);
    this.interrupts.push(data);
    const promptId = data.prompt_id;
    if (pyBool(promptId)) {
      if (this.#running?.id === promptId) this.#interrupt();
    } else {
      this.#interrupt();
    }
    empty(res);
    this.events.emit('interrupt', data);
  }

  /** server.py post_free: flags the worker applies after the running prompt (free_memory drops the cache). */
  #postFree(body: Buffer, res: ServerResponse): void {
    const data = parseJson(body) as Json;
    if (pyBool(data.unload_models)) this.#flags.unload_models = data.unload_models;
    if (pyBool(data.free_memory)) this.#flags.free_memory = data.free_memory;
    if (!this.#running) this.#applyFlags();
    empty(res);
  }

  #applyFlags(): void {
    if (pyBool(this.#flags.free_memory)) this.#cache = new Map();
    this.#flags = {};
  }

  /** server.py get_history → PromptQueue.get_history(max_items, offset). */
  #getHistory(url: URL, res: ServerResponse): void {
    const maxItems = url.searchParams.has('max_items') ? pyInt(url.searchParams.get('max_items')) : undefined;
    let offset = url.searchParams.has('offset') ? pyInt(url.searchParams.get('offset')) : -1;
    if (offset < 0 && maxItems !== undefined) offset = this.#history.size - maxItems;
    const out: Json = {};
    let i = 0;
    for (const [id, entry] of this.#history) {
      if (i >= offset) {
        out[id] = entry;
        if (maxItems !== undefined && Object.keys(out).length >= maxItems) break;
      }
      i++;
    }
    json(res, 200, out);
  }

  /** server.py post_history: clear / delete. */
  #postHistory(body: Buffer, res: ServerResponse): void {
    const data = parseJson(body) as Json;
    if ('clear' in data && pyBool(data.clear)) this.#history.clear();
    if ('delete' in data) for (const id of data.delete as unknown[]) this.#history.delete(String(id));
    empty(res);
  }

  /** server.py view_image. */
  async #view(url: URL, res: ServerResponse): Promise<void> {
    const query = url.searchParams;
    const raw = query.get('filename');
    if (raw === null) return text(res, 404, '');
    let filename = raw;
    let outputDir: string | null = null;
    for (const [suffix, dir] of [
      ['[output]', this.outputDir],
      ['[input]', this.inputDir],
      ['[temp]', this.tempDir],
    ] as const) {
      if (raw.endsWith(suffix)) {
        filename = raw.slice(0, -(suffix.length + 1));
        outputDir = dir;
      }
    }
    if (!filename) return text(res, 400, '');
    if (filename.startsWith('/') || filename.includes('..')) return text(res, 400, '');
    if (outputDir === null) {
      const type = query.get('type') ?? 'output';
      outputDir = { output: this.outputDir, temp: this.tempDir, input: this.inputDir }[type] ?? null;
    }
    if (outputDir === null) return text(res, 400, '');
    const subfolder = query.get('subfolder');
    if (subfolder !== null) {
      const full = pyJoin(outputDir, subfolder);
      if (pyCommonpath(pyAbspath(full), outputDir) !== outputDir) return text(res, 403, '');
      outputDir = full;
    }
    const file = pyJoin(outputDir, pyBasename(filename));
    if (!(await isFile(file))) return text(res, 404, '');
    const name = pyBasename(filename);
    const types: Record<string, string> = {
      '.mp4': 'video/mp4',
      '.webm': 'video/webm',
      '.png': 'image/png',
      '.jpg': 'image/jpeg',
      '.jpeg': 'image/jpeg',
      '.webp': 'image/webp',
      '.gif': 'image/gif',
    };
    const type = types[posix.extname(name).toLowerCase()] ?? 'application/octet-stream';
    const bytes = await readFile(file);
    res.writeHead(200, {
      'content-type': type,
      'content-disposition': `filename="${name}"`,
      'content-length': bytes.length,
    });
    res.end(bytes);
  }

  /** server.py upload_image → image_upload. */
  async #upload(req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> {
    const contentType = req.headers['content-type'] ?? '';
    let form: FormData | undefined;
    if (/^(multipart\/form-data|application\/x-www-form-urlencoded)/i.test(contentType)) {
      form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
    }
    const image = form?.get('image') ?? null;
    const overwrite = form?.get('overwrite') ?? null;
    const typeField = form?.get('type') ?? null;
    const type = typeof typeField === 'string' ? typeField : 'input';
    const uploadDir = { input: this.inputDir, temp: this.tempDir, output: this.outputDir }[type];
    // get_dir_by_type leaves type_dir unbound for any other type.
    if (uploadDir === undefined) {
      throw new PyError(
        'UnboundLocalError',
        "cannot access local variable 'type_dir' where it is not associated with a value",
      );
    }
    if (image === null) return text(res, 400, '');
    if (typeof image === 'string')
      throw new PyError('AttributeError', "'str' object has no attribute 'file'");
    let filename = image.name;
    if (!filename) return text(res, 400, '');
    const subfolderField = form?.get('subfolder');
    const subfolder = typeof subfolderField === 'string' ? subfolderField : '';
    const folder = pyJoin(uploadDir, pyNormpath(subfolder));
    let path = pyAbspath(pyJoin(folder, filename));
    if (pyCommonpath(uploadDir, path) !== uploadDir) return text(res, 400, '');
    await mkdir(folder, { recursive: true });
    const bytes = Buffer.from(await image.arrayBuffer());
    const [stem, ext] = splitExt(filename);
    let duplicate = false;
    if (!(overwrite === 'true' || overwrite === '1')) {
      for (let i = 1; await exists(path); i++) {
        if ((await readFile(path)).equals(bytes)) {
          duplicate = true;
          break;
        }
        filename = `${stem} (${i})${ext}`;
        path = pyJoin(folder, filename);
      }
    }
    if (!duplicate) await writeFile(path, bytes);
    if (type === 'input') this.uploads.set(subfolder ? `${subfolder}/${filename}` : filename, bytes);
    json(res, 200, { name: filename, subfolder, type });
  }

  /** server.py node_info (GET /object_info), from the node table: inputs as INPUT_TYPES gives them. */
  #nodeInfo(name: string): Json {
    const def = this.nodes[name] as NodeDef;
    const section = (inputs: Readonly<Record<string, InputSpec>> = {}): Json =>
      Object.fromEntries(Object.entries(inputs).map(([k, spec]) => [k, inputConfig(spec, this)]));
    return {
      input: {
        required: section(def.required),
        ...(def.optional ? { optional: section(def.optional) } : {}),
      },
      input_order: {
        required: Object.keys(def.required),
        ...(def.optional ? { optional: Object.keys(def.optional) } : {}),
      },
      output: def.outputs,
      output_is_list: def.outputs.map(() => false),
      output_name: def.outputs,
      name,
      display_name: name,
      description: '',
      python_module: def.source.startsWith('Kosinkadink')
        ? 'custom_nodes.ComfyUI-VideoHelperSuite'
        : def.source.replace(/\.py$/, '').replaceAll('/', '.'),
      category: def.category,
      output_node: def.outputNode === true,
    };
  }

  #objectInfo(): Json {
    return Object.fromEntries(Object.keys(this.nodes).map((name) => [name, this.#nodeInfo(name)]));
  }

  // ------------------------------------------------------------------------------------------- websocket

  #upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://comfy.invalid');
    const refuse = (status: string): void => {
      socket.end(`HTTP/1.1 ${status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    };
    if (url.pathname !== '/ws' && url.pathname !== '/api/ws') {
      refuse('404 Not Found');
      return;
    }
    if (this.#proxyRefused(req)) {
      refuse('401 Unauthorized');
      return;
    }
    if (this.proxy.refuseWebSockets) {
      refuse('502 Bad Gateway');
      return;
    }
    if (this.#originRefused(req)) {
      refuse('403 Forbidden');
      return;
    }
    this.socketAuthorizations.push(req.headers.authorization);
    this.#sockets.handleUpgrade(req, socket, head, (ws) => {
      // server.py websocket_handler.
      const sid = url.searchParams.get('clientId') || randomUUID().replaceAll('-', '');
      this.#clients.delete(sid);
      this.#clients.set(sid, ws);
      let first = true;
      ws.on('message', (data, isBinary) => {
        if (isBinary) return;
        try {
          const message = JSON.parse(data.toString()) as unknown;
          if (first && isDict(message) && message.type === 'feature_flags')
            this.#send('feature_flags', this.#features(), sid);
          first = false;
        } catch {
          // "Invalid JSON received from client": logged, ignored.
        }
      });
      ws.on('close', () => this.#clients.delete(sid));
      this.#send('status', { status: this.#queueInfo(), sid }, sid);
      if (this.#clientId === sid && this.#lastNodeId !== null)
        this.#send('executing', { node: this.#lastNodeId }, sid);
    });
  }

  /** server.py send_json: to one client by sid, or to every socket when sid is null. */
  #send(event: string, data: Json, sid: string | null): void {
    const message = JSON.stringify({ type: event, data });
    const targets = sid === null ? [...this.#clients.values()] : [this.#clients.get(sid)].filter(Boolean);
    for (const ws of targets) if (ws && ws.readyState === ws.OPEN) ws.send(message);
  }

  #sendBinary(event: number, payload: Buffer, sid: string | null): void {
    const header = Buffer.alloc(4);
    header.writeUInt32BE(event);
    const targets = sid === null ? [...this.#clients.values()] : [this.#clients.get(sid)].filter(Boolean);
    for (const ws of targets) if (ws && ws.readyState === ws.OPEN) ws.send(Buffer.concat([header, payload]));
  }

  /** PromptQueue's server.queue_updated(): a status message to everyone. */
  #queueUpdated(): void {
    this.#send('status', { status: this.#queueInfo() }, null);
  }

  // ------------------------------------------------------------------------------------------- execution

  #interrupt(): void {
    // nodes.interrupt_processing(): a flag the running node checks.
    this.#interrupted = true;
    const waiting = this.#onInterrupt;
    this.#onInterrupt = [];
    for (const wake of waiting) wake();
  }

  #checkInterrupt(): void {
    if (this.#interrupted) throw new Interrupted();
  }

  /** main.py prompt_worker: one prompt at a time, lowest number first. */
  #pump(): void {
    if (this.#running || this.gpu.paused) return;
    const next = this.#ordered()[0];
    if (!next) return;
    this.#queue.splice(this.#queue.indexOf(next), 1);
    this.#running = next;
    this.#queueUpdated();
    this.#runningDone = this.#execute(next)
      .catch((error: unknown) => {
        // A bug of this fake, not a ComfyUI behaviour: say so loudly (the prompt gets no history).
        console.error(`fake ComfyUI: running prompt ${next.id} crashed:`, error);
      })
      .finally(() => {
        if (this.#running === next) this.#running = undefined;
        this.#applyFlags();
        setImmediate(() => this.#pump());
      });
  }

  /** Releases a paused queue. */
  resume(): void {
    this.gpu.paused = false;
    this.#pump();
  }

  /** comfy_execution/caching.py CacheKeySetInputSignature, for every node of the prompt. */
  async #signatures(prompt: Json): Promise<Map<string, string>> {
    const signatures = new Map<string, string>();
    const changed = new Map<string, string>();
    for (const [id, node] of Object.entries(prompt)) {
      const def = this.nodes[String((node as Json).class_type)];
      if (def?.isChanged) changed.set(id, await def.isChanged((node as Json).inputs as Json, this));
    }
    const signature = (id: string, seen: Set<string>): string => {
      const known = signatures.get(id);
      if (known) return known;
      const node = prompt[id];
      if (!isDict(node) || seen.has(id)) return `missing:${id}`;
      seen.add(id);
      const def = this.nodes[String(node.class_type)];
      const inputs = isDict(node.inputs) ? node.inputs : {};
      const parts = Object.keys(inputs)
        .sort()
        .map((key) => {
          const value = inputs[key];
          return Array.isArray(value) && value.length === 2 && typeof value[0] === 'string'
            ? [key, 'ANCESTOR', signature(value[0], seen), value[1]]
            : [key, value];
        });
      const own = JSON.stringify([
        node.class_type,
        changed.get(id) ?? null,
        def?.uniqueIdInCacheKey ? id : null,
        parts,
      ]);
      signatures.set(id, own);
      return own;
    };
    for (const id of Object.keys(prompt)) signature(id, new Set());
    return signatures;
  }

  /** execution.py PromptExecutor.execute_async, then prompt_worker's task_done and `executing {node: null}`. */
  async #execute(item: QueueItem): Promise<void> {
    const { id: promptId, prompt, extraData } = item;
    this.#interrupted = false;
    this.#clientId = typeof extraData.client_id === 'string' ? extraData.client_id : null;
    const client = this.#clientId;
    const messages: [string, Json][] = [];
    const addMessage = (event: string, data: Json, broadcast: boolean): void => {
      const stamped = { ...data, timestamp: Date.now() };
      messages.push([event, stamped]);
      if (client !== null || broadcast) this.#send(event, stamped, client);
    };
    this.events.emit('started', promptId);
    addMessage('execution_start', { prompt_id: promptId }, false);

    const signatures = await this.#signatures(prompt);
    // cache.set_prompt() + clean_unused(): only this prompt's signatures stay.
    const previous = this.#cache;
    this.#cache = new Map();
    for (const signature of signatures.values()) {
      const entry = previous.get(signature);
      if (entry) this.#cache.set(signature, entry);
    }
    const cachedAtStart = new Set(
      Object.keys(prompt).filter((id) => this.#cache.has(signatures.get(id) ?? '')),
    );
    addMessage('execution_cached', { nodes: [...cachedAtStart], prompt_id: promptId }, false);

    // ExecutionList: the outputs, and (recursively) the inputs of each node that is not cached.
    const order: string[] = [];
    const visit = (id: string, seen: Set<string>): void => {
      if (seen.has(id)) return;
      seen.add(id);
      const inputs = (prompt[id] as Json).inputs as Json;
      for (const value of Object.values(inputs)) {
        if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string') {
          if (!this.#cache.has(signatures.get(value[0]) ?? '')) visit(value[0], seen);
        }
      }
      order.push(id);
    };
    const seen = new Set<string>();
    for (const output of item.outputs) visit(output, seen);

    const executed = new Set<string>();
    const uiOrder: string[] = [];
    let success = true;
    for (const id of order) {
      const node = prompt[id] as Json;
      const classType = String(node.class_type);
      const def = this.nodes[classType] as NodeDef;
      const signature = signatures.get(id) ?? '';
      const cached = this.#cache.get(signature);
      if (cached) {
        if (client !== null) {
          this.#send(
            'executed',
            { node: id, display_node: id, output: cached.ui ?? null, prompt_id: promptId },
            client,
          );
        }
        if (cached.ui) uiOrder.push(id);
        continue;
      }
      try {
        this.#progressState(promptId, id, 0, 1, 'running');
        if (client !== null) {
          this.#lastNodeId = id;
          this.#send('executing', { node: id, display_node: id, prompt_id: promptId }, client);
        }
        this.#checkInterrupt();
        const inputs: Json = {};
        for (const [name, value] of Object.entries(node.inputs as Json)) {
          if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string') {
            const source = this.#cache.get(signatures.get(value[0]) ?? '');
            inputs[name] = source?.result.at(Number(value[1])) ?? null;
          } else {
            inputs[name] = value;
          }
        }
        for (const [name, spec] of Object.entries({ ...def.required, ...def.optional })) {
          if (!(name in inputs) && spec.default !== undefined) inputs[name] = spec.default;
        }
        const fail = this.gpu.failNode?.node === id ? this.gpu.failNode : undefined;
        const stall = this.gpu.stallNode?.node === id ? this.gpu.stallNode : undefined;
        const stallHere = async (): Promise<void> => {
          const woken = new Promise<void>((resolve) => this.#onInterrupt.push(resolve));
          this.events.emit('stalled', promptId, id);
          if (!this.#interrupted) await woken;
          this.#checkInterrupt();
        };
        if (!def.sampler) {
          if (stall) await stallHere();
          if (fail) throw new PyError(fail.type, fail.message);
        }
        const sample = async (steps: number): Promise<void> => {
          for (let step = 1; step <= steps; step++) {
            await new Promise<void>((resolve) => setImmediate(resolve));
            this.#checkInterrupt();
            if (stall && step - 1 === (stall.afterSteps ?? 0)) await stallHere();
            if (fail && step === Math.min(2, steps)) throw new PyError(fail.type, fail.message);
            // main.py hijack_progress: progress_state, then progress, then (with previews) a binary frame.
            this.#progressState(promptId, id, step, steps, 'running');
            this.#send('progress', { value: step, max: steps, prompt_id: promptId, node: id }, client);
            if (this.previews) {
              // PREVIEW_IMAGE (1): image type 1 (JPEG), then the image's bytes.
              this.#sendBinary(1, Buffer.from([0, 0, 0, 1, 0xff, 0xd8, 0xff, 0xe0, 0xff, 0xd9]), client);
            }
          }
        };
        const progress = (steps: number): void => {
          for (let step = 1; step <= steps; step++) {
            this.#progressState(promptId, id, step, steps, 'running');
            this.#send('progress', { value: step, max: steps, prompt_id: promptId, node: id }, client);
          }
        };
        const result = await def.execute({ server: this, nodeId: id, promptId, sample, progress }, inputs);
        this.#cache.set(signature, result);
        this.#progressState(promptId, id, 1, 1, 'finished');
        if (result.ui) {
          uiOrder.push(id);
          if (client !== null) {
            this.#send(
              'executed',
              { node: id, display_node: id, output: result.ui, prompt_id: promptId },
              client,
            );
          }
        }
        executed.add(id);
        if (this.proxy.cutWebSocketAfterNode === id && client !== null)
          this.#clients.get(client)?.terminate();
      } catch (error) {
        success = false;
        const ex = error instanceof PyError ? error : new PyError('Exception', String(error));
        // PromptExecutor.handle_execution_error.
        if (ex instanceof Interrupted) {
          addMessage(
            'execution_interrupted',
            { prompt_id: promptId, node_id: id, node_type: classType, executed: [...executed] },
            true,
          );
        } else {
          addMessage(
            'execution_error',
            {
              prompt_id: promptId,
              node_id: id,
              node_type: classType,
              executed: [...executed],
              exception_message: ex.message,
              exception_type: ex.pyType,
              traceback: [`  (the fake ComfyUI has no Python traceback for ${ex.pyType})\n`],
              current_inputs: {},
              current_outputs: [...cachedAtStart],
            },
            false,
          );
        }
        break;
      }
    }
    if (success) addMessage('execution_success', { prompt_id: promptId }, false);
    this.#lastNodeId = null;

    const outputs: Json = {};
    const meta: Json = {};
    for (const id of uiOrder) {
      outputs[id] = this.#cache.get(signatures.get(id) ?? '')?.ui;
      meta[id] = { node_id: id, display_node: id, parent_node: null, real_node_id: id };
    }
    // PromptQueue.task_done: history, then status to everyone, then `executing {node: null}` to the client.
    const sensitive = { ...extraData };
    delete sensitive.auth_token_comfy_org;
    delete sensitive.api_key_comfy_org;
    this.#history.set(promptId, {
      prompt: [item.number, promptId, prompt, sensitive, item.outputs],
      outputs,
      status: { status_str: success ? 'success' : 'error', completed: success, messages },
      meta,
    });
    this.#running = undefined;
    this.#queueUpdated();
    if (client !== null) this.#send('executing', { node: null, prompt_id: promptId }, client);
    this.events.emit('finished', promptId, success ? 'success' : 'error');
  }

  /** comfy_execution/progress.py WebUIProgressHandler: the state of the running node. */
  #progressState(promptId: string, node: string, value: number, max: number, state: string): void {
    this.#send(
      'progress_state',
      {
        prompt_id: promptId,
        nodes: {
          [node]: {
            value,
            max,
            state,
            node_id: node,
            prompt_id: promptId,
            display_node_id: node,
            parent_node_id: null,
            real_node_id: node,
          },
        },
      },
      this.#clientId,
    );
  }
}

// ---------------------------------------------------------------------------------------------------------
// aiohttp answers.
// ---------------------------------------------------------------------------------------------------------

function noPrompt(): Json {
  return {
    error: {
      type: 'no_prompt',
      message: 'No prompt provided',
      details: 'No prompt provided',
      extra_info: {},
    },
    node_errors: {},
  };
}

/** `await request.json()`: invalid JSON raises, which aiohttp answers with 500. */
function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new PyError('json.decoder.JSONDecodeError', String(error));
  }
}

function splitExt(name: string): [string, string] {
  const base = pyBasename(name);
  const dot = base.lastIndexOf('.');
  if (dot <= 0 || /^\.+$/.test(base.slice(0, dot + 1))) return [name, ''];
  const cut = name.length - (base.length - dot);
  return [name.slice(0, cut), name.slice(cut)];
}

async function drain(req: IncomingMessage): Promise<void> {
  for await (const _ of req) {
    // discard
  }
}

/** web.json_response. */
function json(res: ServerResponse, status: number, value: unknown): void {
  sendJson(res, status, value, { 'content-type': 'application/json; charset=utf-8' });
}

/** web.Response(status=…) (empty) or an HTTPException's text. */
function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, body ? { 'content-type': 'text/plain; charset=utf-8' } : {});
  res.end(body);
}

/** web.Response(status=200): empty. */
function empty(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 0 });
  res.end();
}
