/** `videogen engines check`: builds every engine of the engines file and tests that it can work now. */
import { parseArgs } from 'node:util';
import { loadEnginesConfig, openEngines } from '../adapters.js';
import { loadConfig } from '../config.js';
import { routeEngines } from '../domain/engine-route.js';
import { printTable } from './print-table.js';
import { UsageError } from './usage-error.js';

const CHECK_TIMEOUT_MS = 30_000;

interface CheckResult {
  readonly engine: string;
  readonly type: string;
  readonly models: readonly string[];
  readonly ok: boolean;
  readonly problem?: string;
}

export async function enginesCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  if (action !== 'check') throw new UsageError(`unknown engines action ${JSON.stringify(action ?? '')}`);
  const { values } = parseArgs({
    args: rest,
    options: { json: { type: 'boolean', default: false } },
    strict: true,
  });
  const opened = openEngines(loadEnginesConfig(loadConfig()));
  const { config, engines } = opened;
  const results = await Promise.all(
    [...engines].map(async ([name, engine]): Promise<CheckResult> => {
      const models = [...config.models]
        .filter(([, route]) => routeEngines(route).includes(name))
        .map(([id]) => id);
      const type = config.engines.get(name)?.type ?? '';
      try {
        await engine.check(AbortSignal.timeout(CHECK_TIMEOUT_MS));
        return { engine: name, type, models, ok: true };
      } catch (error) {
        const problem = error instanceof Error ? error.message : String(error);
        return { engine: name, type, models, ok: false, problem };
      }
    }),
  );
  await opened.close();
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ file: config.file ?? null, engines: results }, null, 2)}\n`);
  } else {
    printTable(
      ['ENGINE', 'TYPE', 'STATUS', 'MODELS'],
      results.map((r) => [r.engine, r.type, r.ok ? 'ready' : 'FAILED', r.models.join(', ')]),
    );
    for (const result of results) {
      if (!result.ok) process.stderr.write(`${result.engine}: ${result.problem}\n`);
    }
  }
  return results.every((r) => r.ok) ? 0 : 1;
}
