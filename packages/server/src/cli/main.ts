/** The `videogen` command. */
import { parseArgs } from 'node:util';
import { ConfigError, ROLES, type Role } from '../config.js';
import { accountsCommand } from './accounts-command.js';
import { enginesCommand } from './engines-command.js';
import { keysCommand } from './keys-command.js';
import { serveCommand } from './serve-command.js';
import { webhooksCommand } from './webhooks-command.js';

const USAGE = `Usage: videogen <command> [options]

Commands:
  serve [--role all|api|worker]           Serve the API and run workers (SQLite + local files by default);
                                          api: API and callbacks only; worker: render only
  worker                                  Same as serve --role worker
  accounts create --email EMAIL [--account ID]
                                          Create an account whose owner signs in to the dashboard
                                          (password from stdin or a prompt); with --account, give
                                          that existing account its owner instead
  keys create --name NAME [--env ENV]     Create an API key and print it (ENV: development|production)
  keys list [--json]                      List API keys (never the keys themselves)
  keys revoke ID_OR_PREFIX                Revoke an API key
  webhooks secret [--account ID]          Print the account's webhook signing secret (whsec_…)
  webhooks rotate-secret [--account ID]   Make a new signing secret and print it; the old one signs
                                          beside it for 24 hours
  webhooks deliveries TASK_ID [--json]    Show a task's callback deliveries and every attempt
  engines check [--json]                  Test every engine of VIDEOGEN_ENGINES_FILE (or the built-in
                                          local engine): exit status 1 if any is not ready

Configuration comes from VIDEOGEN_* environment variables; see .env.example.`;

export class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': {
      const { values } = parseArgs({ args: rest, options: { role: { type: 'string' } }, strict: true });
      if (values.role !== undefined && !(ROLES as readonly string[]).includes(values.role)) {
        throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
      }
      return serveCommand(values.role as Role | undefined);
    }
    case 'worker':
      parseArgs({ args: rest, options: {}, strict: true });
      return serveCommand('worker');
    case 'accounts':
      return accountsCommand(rest);
    case 'keys':
      return keysCommand(rest);
    case 'webhooks':
      return webhooksCommand(rest);
    case 'engines':
      return enginesCommand(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const usage =
      error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    const prefix = error instanceof ConfigError ? 'configuration error: ' : '';
    process.stderr.write(`videogen: ${prefix}${error instanceof Error ? error.message : String(error)}\n`);
    if (usage) process.stderr.write(`\n${USAGE}\n`);
    process.exitCode = usage ? 2 : 1;
  },
);
