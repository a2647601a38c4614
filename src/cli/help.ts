/**
 * `ferry --help`, `ferry help [<command>]`, `ferry <command> --help` and `ferry --version` (docs/operations.md, "The
 * ferry command"). Help and version print to stdout and exit 0 on every command; a bare `ferry` prints the usage
 * instead of starting a server (`npm start` runs `ferry serve`). Nothing here opens a store or reads the
 * configuration, so help works on a machine where the configuration is still wrong.
 */

const OVERVIEW = `Ferry: durable HTTP message delivery with the hosted service's wire format, on SQLite or PostgreSQL.

Usage: ferry <command> [options]

Commands:
  serve              run the service (what \`npm start\` runs); configured by environment variables
  dev                a local development server with the official SDK's well-known dev credentials
  customers create   create a customer of the management API and print its API key
  help [<command>]   this text, or a command's
  version            print the version

Every command takes -h/--help. ferry --version (or -v) prints the version.
Configuration: docs/configuration.md. Operations: docs/operations.md.
`;

const SERVE = `Usage: ferry serve

Runs Ferry until SIGTERM or SIGINT. Configured by environment variables (every one: docs/configuration.md), chiefly:
  FERRY_PORT=8080                  port of the API and the console (/console)
  FERRY_HOST=0.0.0.0               address to listen on
  DATABASE_URL=sqlite:./data/ferry.db   or postgres://user:password@host:5432/db
  FERRY_TOKEN                      the messaging token; generated, stored and printed on the first start when unset
  FERRY_CURRENT_SIGNING_KEY, FERRY_NEXT_SIGNING_KEY   the delivery signing keys; generated likewise
  FERRY_LOG_LEVEL=info             fatal, error, warn, info, debug (also every request), trace or silent
  FERRY_LOG_FILE                   append JSON log lines to this file instead of stdout

The first start prints where it listens, the console's address, the credentials and a curl to try.
`;

const DEV = `Usage: ferry dev [--port <port>] [--dialect upstash|neutral] [--data <dir>] [--reset]

A durable drop-in for the hosted service's local development server: listens on localhost only, with the
well-known credentials the official JS SDK carries for its dev server, every destination allowed.
  --port <port>       port to listen on (8080)
  --dialect <d>       upstash (the default: Upstash- headers, /v2/qstash) or neutral (Svc- headers)
  --data <dir>        where the SQLite database lives (./.ferry-dev); kept across restarts
  --reset             start with an empty database
`;

const CUSTOMERS = `Usage: ferry customers create --email <e-mail> [--plan <plan>] [--enterprise <id>]

Creates a customer of the management API in the database of DATABASE_URL (safe while the server runs) with its own
messaging account, and prints {"email", "api_key", "account"} as one JSON line. The API key is shown only here.
  --email <e-mail>     the customer's e-mail, its user name for HTTP Basic on the management API
  --plan <plan>        the plan of its messaging account (FERRY_DEFAULT_PLAN when absent)
  --enterprise <id>    the enterprise the customer belongs to
`;

const VERSION_USAGE = `Usage: ferry version (or ferry --version, ferry -v)

Prints Ferry's version.
`;

const commandHelp: Record<string, string> = {
  serve: SERVE,
  dev: DEV,
  customers: CUSTOMERS,
  help: OVERVIEW,
  version: VERSION_USAGE,
};

const isHelpFlag = (arg: string) => arg === "--help" || arg === "-h";
const isVersionFlag = (arg: string) => arg === "--version" || arg === "-v";

/** What the command line asks for when it is help or version: the text for stdout, exit 0. */
export interface Informational {
  stdout: string;
}

/**
 * Help or version for these arguments (process.argv after the script), or undefined when a command should run.
 * An unknown command is not answered here: main.ts refuses it with the usage on stderr and exit 2.
 */
export function informational(args: readonly string[], version: string): Informational | undefined {
  const [command, ...rest] = args;
  if (command === undefined || isHelpFlag(command)) return { stdout: OVERVIEW };
  if (isVersionFlag(command) || command === "version") {
    return rest.some(isHelpFlag) ? { stdout: VERSION_USAGE } : { stdout: `ferry ${version}\n` };
  }
  if (command === "help") {
    const topic = rest[0];
    return { stdout: topic !== undefined && commandHelp[topic] !== undefined ? commandHelp[topic] : OVERVIEW };
  }
  const help = commandHelp[command];
  // `--help` anywhere after a known command, e.g. `ferry customers create --help`. An option value that is literally
  // "--help" is not a thing any of these commands takes.
  if (help !== undefined && rest.some(isHelpFlag)) return { stdout: help };
  return undefined;
}

/** The overview, for an unknown command's error (stderr). */
export const usage = OVERVIEW;
