/** `videogen serve` and `videogen worker`: serve the process's role until SIGTERM or SIGINT. */
import { createFirstKey } from '../accounts/api-keys.js';
import { loadConfig, type Role } from '../config.js';
import { createLogger } from '../logger.js';
import { startService } from '../service.js';

function firstKeyBanner(key: string, accountId: string, baseUrl: string): string {
  return `
  videogen created the first development API key. It is shown only this once; store it now
  (for example in VIDEOGEN_API_KEY or your secret manager):

    ${key}

  Try it:

    curl -s ${baseUrl}/v1/videos/generations \\
      -H "Authorization: Bearer ${key}" \\
      -H "Content-Type: application/json" \\
      -d '{"model": "videogen-2.0-fast-text-to-video", "prompt": "a red kite over green hills at sunset"}'

    curl -s ${baseUrl}/v1/tasks/<id from the answer above> -H "Authorization: Bearer ${key}"

  To use the dashboard (${baseUrl}/dashboard) with this account, give it an owner:

    npx videogen accounts create --email you@example.com --account ${accountId}

`;
}

/** Runs until SIGTERM or SIGINT; `role` (from `--role` or `videogen worker`) overrides `VIDEOGEN_ROLE`. */
export async function serveCommand(role?: Role): Promise<number> {
  const loaded = loadConfig();
  const config = role ? { ...loaded, role } : loaded;
  const logger = createLogger(config.logLevel);
  const service = await startService(config, logger);

  if (config.role !== 'worker') {
    const first = await createFirstKey(service.store);
    if (first) process.stdout.write(firstKeyBanner(first.key, first.record.accountId, service.publicUrl));
  }

  return new Promise((resolve) => {
    let closing = false;
    const shutdown = (signal: NodeJS.Signals) => {
      if (closing) {
        logger.warn({ signal }, 'second signal: exiting at once');
        process.exit(1);
      }
      closing = true;
      logger.info({ signal }, 'shutting down');
      service.close().then(
        () => resolve(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', shutdown);
    process.on('SIGINT', shutdown);
  });
}
