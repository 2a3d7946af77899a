/**
 * A ComfyUI workflow in API format (File → Export (API)) with `{{placeholders}}` in its string inputs, filled
 * with a job's values (comfyui-request.ts). A string that is exactly one numeric placeholder (`"{{seed}}"`)
 * becomes a number; a placeholder inside longer text is replaced by its text. Placeholders:
 *
 *   {{prompt}} {{negative_prompt}} (empty)     {{seed}} {{width}} {{height}} {{fps}} {{duration}} (seconds)
 *   {{frames}} = {{length}} = duration × fps   {{frames_plus_one}} (the 8n+1 / 4n+1 counts of LTX-Video, Wan)
 *   {{image}} = {{image_1}} … {{image_9}}      {{last_image}} (the last of two or more images)
 *
 * Image placeholders become the name ComfyUI gave the uploaded file, for a `LoadImage` node's `image` input.
 */
import { readFileSync } from 'node:fs';

export interface WorkflowNode {
  readonly class_type: string;
  readonly inputs: Readonly<Record<string, unknown>>;
  readonly [key: string]: unknown;
}

/** Node ID → node: what `POST /prompt` takes as `prompt`. */
export type Workflow = Readonly<Record<string, WorkflowNode>>;

const NUMBER_PLACEHOLDERS = [
  'seed',
  'width',
  'height',
  'fps',
  'duration',
  'frames',
  'length',
  'frames_plus_one',
] as const;
const TEXT_PLACEHOLDERS = ['prompt', 'negative_prompt'] as const;
const IMAGE_PLACEHOLDERS = [
  'image',
  ...Array.from({ length: 9 }, (_, i) => `image_${i + 1}`),
  'last_image',
] as const;

const KNOWN = new Set<string>([...TEXT_PLACEHOLDERS, ...NUMBER_PLACEHOLDERS, ...IMAGE_PLACEHOLDERS]);
const NUMERIC = new Set<string>(NUMBER_PLACEHOLDERS);

/** `{{ name }}`; the name is checked against the known ones when the workflow is loaded. */
const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g;
const WHOLE_PLACEHOLDER = /^\{\{\s*([A-Za-z0-9_]+)\s*\}\}$/;

/** What each placeholder is replaced by; image placeholders map to uploaded file names. */
export type PlaceholderValues = ReadonlyMap<string, string | number>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `KSamplerSelect` and `SamplerEulerAncestral`-style nodes only pick a sampler; they run no steps. */
function isSamplingClass(classType: string): boolean {
  if (!/sampler/i.test(classType) || classType === 'KSamplerSelect') return false;
  return !classType.startsWith('Sampler') || classType.startsWith('SamplerCustom');
}

function collectPlaceholders(value: unknown, found: Set<string>): void {
  if (typeof value === 'string') {
    for (const match of value.matchAll(PLACEHOLDER)) found.add(match[1] as string);
  } else if (Array.isArray(value)) {
    for (const item of value) collectPlaceholders(item, found);
  } else if (isRecord(value)) {
    for (const item of Object.values(value)) collectPlaceholders(item, found);
  }
}

function fillValue(value: unknown, values: PlaceholderValues): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE_PLACEHOLDER.exec(value);
    if (whole) return values.get(whole[1] as string) ?? value;
    return value.replace(PLACEHOLDER, (match, name: string) => String(values.get(name) ?? match));
  }
  if (Array.isArray(value)) return value.map((item) => fillValue(item, values));
  if (isRecord(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fillValue(item, values)]));
  }
  return value;
}

function describeNodeProblem(id: string, node: unknown): string | undefined {
  if (!isRecord(node)) return `node "${id}" is not an object`;
  if (typeof node.class_type !== 'string' || node.class_type === '') return `node "${id}" has no class_type`;
  if (!isRecord(node.inputs)) return `node "${id}" (${node.class_type}) has no inputs object`;
  return undefined;
}

export class WorkflowTemplate {
  readonly #workflow: Workflow;
  /** Every placeholder the workflow uses. */
  readonly placeholders: ReadonlySet<string>;

  private constructor(workflow: Workflow, placeholders: ReadonlySet<string>) {
    this.#workflow = workflow;
    this.placeholders = placeholders;
  }

  /** Reads and checks the workflow at `path`; throws an Error naming the file and what is wrong with it. */
  static load(path: string): WorkflowTemplate {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`the workflow ${path} cannot be read (${reason}).`);
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`the workflow ${path} is not valid JSON: ${reason}`);
    }
    return WorkflowTemplate.fromData(data, path);
  }

  /** Checks a parsed workflow; `path` only names it in messages. */
  static fromData(data: unknown, path: string): WorkflowTemplate {
    const problem = (text: string): Error => new Error(`the workflow ${path} ${text}.`);
    if (!isRecord(data)) throw problem('is not a JSON object of nodes');
    if (Array.isArray(data.nodes) && 'links' in data) {
      throw problem('is in the editor format; save it with File → Export (API) instead');
    }
    const entries = Object.entries(data);
    if (entries.length === 0) throw problem('has no nodes');
    for (const [id, node] of entries) {
      const nodeProblem = describeNodeProblem(id, node);
      if (nodeProblem) throw problem(`is not in API format: ${nodeProblem}`);
    }
    const placeholders = new Set<string>();
    collectPlaceholders(data, placeholders);
    const unknown = [...placeholders].filter((name) => !KNOWN.has(name));
    if (unknown.length > 0) {
      const listed = unknown.map((name) => `{{${name}}}`).join(', ');
      throw problem(
        `uses unknown placeholder${unknown.length === 1 ? '' : 's'} ${listed} (known: ${[...KNOWN].map((name) => `{{${name}}}`).join(', ')})`,
      );
    }
    return new WorkflowTemplate(data as Workflow, placeholders);
  }

  /** The image placeholders the workflow uses, in a stable order. */
  get imagePlaceholders(): string[] {
    return IMAGE_PLACEHOLDERS.filter((name) => this.placeholders.has(name));
  }

  /** Whether the workflow has a node with this ID. */
  hasNode(id: string): boolean {
    return Object.hasOwn(this.#workflow, id);
  }

  /** The IDs of the nodes that sample (`KSampler`, `SamplerCustomAdvanced`, `WanVideoSampler`…): the long steps. */
  samplerNodes(): Set<string> {
    return new Set(
      Object.entries(this.#workflow)
        .filter(([, node]) => isSamplingClass(node.class_type))
        .map(([id]) => id),
    );
  }

  /** A copy of the workflow with every placeholder replaced; numeric placeholders alone in a string become numbers. */
  fill(values: PlaceholderValues): Workflow {
    for (const name of this.placeholders) {
      if (!values.has(name)) throw new Error(`no value for the placeholder {{${name}}}`);
      if (NUMERIC.has(name) && typeof values.get(name) !== 'number') {
        throw new Error(`the placeholder {{${name}}} needs a number`);
      }
    }
    return fillValue(this.#workflow, values) as Workflow;
  }
}
