/** The `videogen` command. */
import { parseArgs } from 'node:util';
import { ConfigError, ROLES, type Role } from '../config.js';
import { loadDotEnv } from './dot-env.js';
import { UsageError } from './usage-error.js';

const USAGE = `Usage: videogen <command> [options]

Commands:
  serve [--role all|api|worker]           Serve the API and run workers (SQLite + local files by default);
                                          api: API and callbacks only; worker: render only
  worker                                  Same as serve --role worker
  accounts create --email EMAIL [--account ID]
                                          Create an account whose owner signs in to the dashboard
                                          (password from stdin or a prompt); with --account, give
                                          that existing account its owner instead
  accounts reset-password --email EMAIL   Set a new password (stdin or a prompt); ends the account's
                                          dashboard sessions and lifts a sign-in lockout
  accounts limits --account ID [--monthly-video-seconds N|none] [--monthly-budget AMOUNT|none]
                                          Set (or show) the account's monthly limits
  keys create --name NAME [--env ENV] [--monthly-video-seconds N] [--monthly-budget AMOUNT]
                                          Create an API key and print it (ENV: development|production)
  keys list [--json]                      List API keys (never the keys themselves)
  keys limits ID_OR_PREFIX [--monthly-video-seconds N|none] [--monthly-budget AMOUNT|none]
                                          Set (or show) an API key's monthly limits
  keys revoke ID_OR_PREFIX                Revoke an API key
  webhooks secret [--account ID]          Print the account's webhook signing secret (whsec_…)
  webhooks rotate-secret [--account ID]   Make a new signing secret and print it; the old one signs
                                          beside it for 24 hours
  webhooks deliveries TASK_ID [--json]    Show a task's callback deliveries and every attempt
  engines check [--json]                  Test every engine of VIDEOGEN_ENGINES_FILE (or the built-in
                                          local engine): exit status 1 if any is not ready

API client commands (against VIDEOGEN_URL, else http://localhost:$VIDEOGEN_PORT, with VIDEOGEN_API_KEY;
or --url and --api-key; --json everywhere; see docs/cli.md):
  generate --prompt TEXT [--model ID | --mode text|image|reference] [--fast]
           [--image FILE_OR_URL]... [--video FILE_OR_URL]... [--audio FILE_OR_URL]...
           [--duration S] [--quality Q] [--aspect-ratio R] [--seed N] [--callback-url URL]
           [--no-sound] [--output FILE.mp4] [--no-wait]
                                          Make a video (local files are uploaded), wait, download it
  tasks get TASK_ID [--wait S]            Show a task
  tasks list [--limit N | --all] [--status S] [--model ID]
                                          List tasks, newest first
  tasks cancel TASK_ID                    Cancel a pending or processing task
  tasks delete TASK_ID                    Delete a completed or failed task and its video
  tasks watch TASK_ID                     Follow a task until it ends (exit status 1 if it fails)

Configuration comes from VIDEOGEN_* environment variables; see .env.example.`;

// Each command is imported when it runs: the API client commands start in a fraction of the time the server's
// dependencies (Fastify, the stores, canvas, the engines) take to load.
async function main(argv: string[]): Promise<number> {
  loadDotEnv();
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve': {
      const { values } = parseArgs({ args: rest, options: { role: { type: 'string' } }, strict: true });
      if (values.role !== undefined && !(ROLES as readonly string[]).includes(values.role)) {
        throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
      }
      return (await import('./serve-command.js')).serveCommand(values.role as Role | undefined);
    }
    case 'worker':
      parseArgs({ args: rest, options: {}, strict: true });
      return (await import('./serve-command.js')).serveCommand('worker');
    case 'accounts':
      return (await import('./accounts-command.js')).accountsCommand(rest);
    case 'keys':
      return (await import('./keys-command.js')).keysCommand(rest);
    case 'webhooks':
      return (await import('./webhooks-command.js')).webhooksCommand(rest);
    case 'engines':
      return (await import('./engines-command.js')).enginesCommand(rest);
    case 'generate':
      return (await import('./generate-command.js')).generateCommand(rest);
    case 'tasks':
      return (await import('./tasks-command.js')).tasksCommand(rest);
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
