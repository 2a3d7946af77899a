/**
 * The `input` of a job for hosted model marketplaces (fal, Replicate), where every model names its inputs its
 * own way: the engines file gives the model's input as JSON with `{{placeholders}}`, the same names as the
 * exec and ComfyUI templates, and each job fills them.
 *
 *   {{prompt}} {{seed}} {{duration}} {{fps}} {{frames}} {{width}} {{height}} {{size}} (WxH)
 *   {{aspect_ratio}} {{resolution}} (480p, 720p, 1080p)
 *   {{image}} = {{image_1}} … {{image_9}}  {{last_image}} (the second of exactly two images)  {{images}} (all)
 *   {{video_1}} … {{video_3}}  {{videos}}  {{audio_1}} … {{audio_3}}  {{audios}}
 *   {{generate_audio}} (true or false: whether the model is to make sound)
 *
 * A string that is exactly one placeholder takes the value's own type (a number for `{{seed}}`, a list for
 * `{{images}}`); `{{name|text}}` makes it text (`"5"` for a model that takes the duration as a string); inside
 * longer text a placeholder is replaced by its text. A property or list item that is exactly one placeholder
 * the job has no value for is left out, so optional inputs (`end_image_url: "{{last_image}}"`) go only when the
 * job has them. Which placeholders a template uses also says which inputs the engine can take, and whether its
 * model makes sound: a template without `{{generate_audio}}` makes none (any track the model makes is removed).
 */
import { ANY_INPUT, type EngineCapabilities } from '../../domain/engine-capabilities.js';

export type TemplateValue = string | number | boolean | readonly string[];
export type TemplateValues = ReadonlyMap<string, TemplateValue>;

const NUMBERED = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix}_${i + 1}`);

export const TEMPLATE_PLACEHOLDERS: ReadonlySet<string> = new Set([
  'prompt',
  'seed',
  'duration',
  'fps',
  'frames',
  'width',
  'height',
  'size',
  'aspect_ratio',
  'resolution',
  'generate_audio',
  'image',
  'last_image',
  'images',
  'videos',
  'audios',
  ...NUMBERED('image', 9),
  ...NUMBERED('video', 3),
  ...NUMBERED('audio', 3),
]);

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)(\|text)?\s*\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z0-9_]+)(\|text)?\s*\}\}$/;

/** Left out of its object or list. */
const OMIT = Symbol('omit');

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function placeholdersIn(value: unknown, found: Set<string>): void {
  if (typeof value === 'string') {
    for (const match of value.matchAll(PLACEHOLDER)) found.add(match[1] as string);
  } else if (Array.isArray(value)) {
    for (const item of value) placeholdersIn(item, found);
  } else if (isRecord(value)) {
    for (const item of Object.values(value)) placeholdersIn(item, found);
  }
}

function fill(value: unknown, values: TemplateValues): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) {
      const found = values.get(whole[1] as string);
      if (found === undefined) return OMIT;
      return whole[2] ? (Array.isArray(found) ? found.join(',') : String(found)) : found;
    }
    return value.replace(PLACEHOLDER, (_match, name: string) => {
      const found = values.get(name);
      return found === undefined ? '' : Array.isArray(found) ? found.join(',') : String(found);
    });
  }
  if (Array.isArray(value)) return value.map((item) => fill(item, values)).filter((item) => item !== OMIT);
  if (isRecord(value)) {
    const entries = Object.entries(value).map(([key, item]) => [key, fill(item, values)] as const);
    return Object.fromEntries(entries.filter(([, item]) => item !== OMIT));
  }
  return value;
}

export class InputTemplate {
  readonly #input: Readonly<Record<string, unknown>>;
  readonly placeholders: ReadonlySet<string>;

  /** Throws an Error naming an unknown placeholder. */
  constructor(input: Readonly<Record<string, unknown>>) {
    const found = new Set<string>();
    placeholdersIn(input, found);
    for (const name of found) {
      if (!TEMPLATE_PLACEHOLDERS.has(name)) {
        throw new Error(
          `input: unknown placeholder {{${name}}} (known: ${[...TEMPLATE_PLACEHOLDERS].join(', ')})`,
        );
      }
    }
    this.#input = input;
    this.placeholders = found;
  }

  fill(values: TemplateValues): Record<string, unknown> {
    return fill(this.#input, values) as Record<string, unknown>;
  }

  /** The inputs a job can have for this template: those it has a placeholder for. */
  capabilities(): EngineCapabilities {
    const uses = (name: string) => this.placeholders.has(name);
    // The highest numbered placeholder used: a job with more inputs than that would lose some.
    const highest = (prefix: string, count: number) =>
      NUMBERED(prefix, count).reduce((most, name, i) => (uses(name) ? i + 1 : most), 0);
    const most = (list: string, prefix: string, count: number) =>
      uses(list) ? Number.POSITIVE_INFINITY : highest(prefix, count);
    const images = uses('images')
      ? Number.POSITIVE_INFINITY
      : Math.max(uses('image') ? 1 : 0, highest('image', 9));
    return {
      firstFrame: uses('image') || uses('image_1') || uses('images'),
      lastFrame: uses('last_image') || uses('image_2') || uses('images'),
      referenceImages: images,
      referenceVideos: most('videos', 'video', 3),
      referenceAudios: most('audios', 'audio', 3),
      audio: uses('generate_audio'),
    };
  }
}

/**
 * What an engine of a template (fal, Replicate) can take, from its options alone: the inputs its `input` has
 * placeholders for, or with `unsupported_inputs: drop` anything (the template leaves out what it has no place
 * for).
 */
export function templateCapabilities(options: {
  readonly input: Readonly<Record<string, unknown>>;
  readonly unsupported_inputs?: 'refuse' | 'drop';
}): EngineCapabilities {
  if (options.unsupported_inputs === 'drop') return ANY_INPUT;
  try {
    return new InputTemplate(options.input).capabilities();
  } catch {
    // A template with an unknown placeholder stops the worker that would build this engine, naming the
    // placeholder; an API process that builds no engines has nothing better to refuse with.
    return ANY_INPUT;
  }
}
