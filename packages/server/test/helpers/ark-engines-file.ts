/** An engines file that routes one model ID to an `ark` engine named `seedance` on a fake of Ark. */
import { writeFile } from 'node:fs/promises';

export interface ArkEnginesFile {
  readonly baseUrl: string;
  readonly apiKey: string;
  /** Ark's model: `dreamina-seedance-2-0-fast-260128`. */
  readonly arkModel: string;
  /** The model ID routed to it; or `models`. */
  readonly modelId?: string;
  /** The file's `models:` entries, each a line (`ark-text: { route: seedance, mode: text }`), for more than one. */
  readonly models?: readonly string[];
  /** More of the engine's options, each a `key: value` line. */
  readonly options?: Readonly<Record<string, string | number>>;
}

export async function writeArkEnginesFile(path: string, file: ArkEnginesFile): Promise<string> {
  const options = Object.entries(file.options ?? {}).map(([key, value]) => `    ${key}: ${value}`);
  await writeFile(
    path,
    [
      'engines:',
      '  seedance:',
      '    type: ark',
      `    base_url: ${file.baseUrl}`,
      `    api_key: ${file.apiKey}`,
      `    model: ${file.arkModel}`,
      ...options,
      'models:',
      ...(file.models ?? [`${file.modelId}: seedance`]).map((entry) => `  ${entry}`),
      '',
    ].join('\n'),
  );
  return path;
}
