/** An engines file that routes one model ID to an `ark` engine named `seedance` on a fake of Ark. */
import { writeFile } from 'node:fs/promises';

export interface ArkEnginesFile {
  readonly baseUrl: string;
  readonly apiKey: string;
  /** Ark's model: `dreamina-seedance-2-0-fast-260128`. */
  readonly arkModel: string;
  /** The model ID routed to it. */
  readonly modelId: string;
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
      `  ${file.modelId}: seedance`,
      '',
    ].join('\n'),
  );
  return path;
}
