/**
 * The `exec` engine's command: `{placeholders}` in its arguments, checked when the engine is built and filled
 * from each job. `{{` and `}}` stand for literal braces; any other brace, and any name not listed in
 * PLACEHOLDERS, is a configuration error. The program (the first element) takes no placeholders, so that
 * `check()` can look for it without a job.
 *
 * A placeholder without a value (`{image}` for a task without images) leaves out the whole group (a list
 * element) it is in. In a plain argument it fails the task with `invalid_asset`: the request was valid, but
 * this command cannot run without that asset, and the client can fix it by sending one.
 */
import { join } from 'node:path';
import { TaskFailure } from '../../domain/errors.js';
import { nearestAspectRatio } from '../../domain/frame-size.js';
import type { LocalAsset, RenderJob } from '../../ports/engine.js';
import type { ExecOptions } from './exec-options.js';
import type { GeneratorFormat } from './generator-format.js';

const numbered = (prefix: string, count: number): string[] =>
  Array.from({ length: count }, (_, i) => `${prefix}_${i + 1}`);

export const PLACEHOLDERS: ReadonlySet<string> = new Set([
  'prompt',
  'seed',
  'duration',
  'frames',
  'fps',
  'width',
  'height',
  'size',
  'size_star',
  'quality',
  'aspect_ratio',
  'generate_audio',
  'output',
  'work_dir',
  'image',
  'last_image',
  ...numbered('image', 9),
  ...numbered('video', 3),
  ...numbered('audio', 3),
]);

/** The file name of `{output}` inside the job's work directory. */
export const RAW_OUTPUT_NAME = 'raw.mp4';

type Part = { readonly text: string } | { readonly placeholder: string };
type Argument = readonly Part[];
type Element = { readonly argument: Argument } | { readonly group: readonly Argument[] };

export interface CommandTemplate {
  readonly program: string;
  readonly elements: readonly Element[];
}

/** Values by placeholder name; `undefined` where the job has none (no second image). */
export type PlaceholderValues = Readonly<Record<string, string | undefined>>;

function parseArgument(source: string, where: string, label: string): Argument {
  const parts: Part[] = [];
  let text = '';
  let i = 0;
  while (i < source.length) {
    const char = source[i];
    const next = source[i + 1];
    if ((char === '{' && next === '{') || (char === '}' && next === '}')) {
      text += char;
      i += 2;
    } else if (char === '{') {
      const end = source.indexOf('}', i);
      if (end < 0) {
        throw new Error(
          `${label}: ${where} has an unmatched "{" (write "{{" for a literal brace): ${JSON.stringify(source)}`,
        );
      }
      const name = source.slice(i + 1, end);
      if (!PLACEHOLDERS.has(name)) {
        throw new Error(
          `${label}: unknown placeholder {${name}} in ${where} (write "{{" and "}}" for literal braces); ` +
            `known: ${[...PLACEHOLDERS].join(', ')}`,
        );
      }
      if (text) parts.push({ text });
      text = '';
      parts.push({ placeholder: name });
      i = end + 1;
    } else if (char === '}') {
      throw new Error(
        `${label}: ${where} has an unmatched "}" (write "}}" for a literal brace): ${JSON.stringify(source)}`,
      );
    } else {
      text += char;
      i++;
    }
  }
  if (text || parts.length === 0) parts.push({ text });
  return parts;
}

/** Checks and parses a configured command; throws an Error naming the problem. `label`: `exec engine "wan"`. */
export function parseCommand(command: ExecOptions['command'], label: string): CommandTemplate {
  const [program, ...rest] = command;
  if (typeof program !== 'string' || program.trim() === '') {
    throw new Error(`${label}: the command's first element must be the program, a non-empty string.`);
  }
  if (/[{}]/.test(program)) {
    throw new Error(
      `${label}: the program ${JSON.stringify(program)} cannot contain placeholders or braces.`,
    );
  }
  const elements = rest.map((element, index): Element => {
    const where = `command element ${index + 2}`;
    if (typeof element === 'string') return { argument: parseArgument(element, where, label) };
    return { group: element.map((item, j) => parseArgument(item, `${where}, item ${j + 1}`, label)) };
  });
  return { program, elements };
}

/** Every placeholder the command's arguments use. */
export function commandPlaceholders(template: CommandTemplate): Set<string> {
  const used = new Set<string>();
  for (const element of template.elements) {
    for (const argument of 'group' in element ? element.group : [element.argument]) {
      for (const part of argument) if ('placeholder' in part) used.add(part.placeholder);
    }
  }
  return used;
}

function fill(argument: Argument, values: PlaceholderValues): string | undefined {
  let result = '';
  for (const part of argument) {
    if ('text' in part) {
      result += part.text;
      continue;
    }
    const value = values[part.placeholder];
    if (value === undefined) return undefined;
    result += value;
  }
  return result;
}

function missingPlaceholder(argument: Argument, values: PlaceholderValues): string {
  for (const part of argument) {
    if ('placeholder' in part && values[part.placeholder] === undefined) return part.placeholder;
  }
  return '';
}

/** The arguments (without the program) for one job. */
export function fillCommand(template: CommandTemplate, values: PlaceholderValues, label: string): string[] {
  const args: string[] = [];
  for (const element of template.elements) {
    if ('group' in element) {
      const filled = element.group.map((argument) => fill(argument, values));
      if (filled.every((value) => value !== undefined)) args.push(...(filled as string[]));
      continue;
    }
    const value = fill(element.argument, values);
    if (value === undefined) {
      const name = missingPlaceholder(element.argument, values);
      throw new TaskFailure(
        'invalid_asset',
        `${label}: its command needs {${name}}, which this task does not have; send the asset it names.`,
      );
    }
    args.push(value);
  }
  return args;
}

function paths(
  assets: readonly LocalAsset[],
  prefix: string,
  count: number,
): Record<string, string | undefined> {
  return Object.fromEntries(numbered(prefix, count).map((name, i) => [name, assets[i]?.path]));
}

/** Every placeholder's value for `job`; sizes and frames are what the generator is asked for (`format`). */
export function placeholderValues(job: RenderJob, format: GeneratorFormat): PlaceholderValues {
  const { width, height } = format.size;
  const { params } = job;
  return {
    prompt: params.prompt,
    seed: String(params.seed),
    duration: String(params.duration),
    frames: String(format.frames),
    fps: String(format.fps),
    width: String(width),
    height: String(height),
    size: `${width}x${height}`,
    size_star: `${width}*${height}`,
    quality: params.quality,
    // `adaptive` was resolved into the job's frame; the frame's own ratio is the resolved one.
    aspect_ratio:
      params.aspect_ratio === 'adaptive'
        ? nearestAspectRatio(job.frame.width, job.frame.height)
        : params.aspect_ratio,
    generate_audio: String(params.generate_audio),
    output: join(job.workDir, RAW_OUTPUT_NAME),
    work_dir: job.workDir,
    image: job.images[0]?.path,
    last_image: job.images.length === 2 ? job.images[1]?.path : undefined,
    ...paths(job.images, 'image', 9),
    ...paths(job.videos, 'video', 3),
    ...paths(job.audios, 'audio', 3),
  };
}
