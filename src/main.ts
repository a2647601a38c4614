import pino from "pino";
import { customersCli } from "./cli/customers.js";
import { informational, usage } from "./cli/help.js";
import { startBanner } from "./cli/start-banner.js";
import { devBanner, devEnvironment, parseDevArgs } from "./cli/dev.js";
import { type Config, ConfigError, loadConfig } from "./config.js";
import { limitHeapGrowth } from "./heap-growth.js";
import { createLogger } from "./logger.js";
import { startFerry, version } from "./server.js";

/** Loads the configuration; a bad value ends the process with the variable's name (exit 2). */
function configOrExit<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    // `ferry dev --reset` under a running dev server (src/cli/dev.ts): a message, not a stack.
    if (error instanceof Error && error.name === "StartupError") {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/**
 * Process entry: `ferry serve` (the default command) and `ferry dev`. `banner` replaces the printout of generated
 * credentials (the dev server's are fixed and printed every time).
 */
async function serve(config: Config, banner?: (port: number) => string): Promise<void> {
  // Memory under load: full collections sooner than V8's default on a large machine (src/heap-growth.ts).
  limitHeapGrowth();
  // FERRY_LOG_FILE: JSON lines appended to a file, reopened on SIGHUP so logrotate can move it (docs/operations.md).
  const file = config.logFile ? pino.destination({ dest: config.logFile, append: true, mkdir: true, sync: false }) : undefined;
  const log = createLogger(config.logLevel, file);
  const ferry = await startFerry(config, { log });
  const { account, replaced } = ferry.bootstrap;
  // The dev server's credentials are fixed and printed every time; otherwise the first start's human block and any
  // credential the environment replaced (src/cli/start-banner.ts).
  const port = Number(new URL(ferry.url).port);
  process.stdout.write(banner ? banner(port) : startBanner({ url: ferry.url, config, bootstrap: ferry.bootstrap, version }));
  if (replaced.length > 0) ferry.services.log.warn({ replaced }, "stored credentials replaced from the environment");
  ferry.services.log.info({ url: ferry.url, account: account.id, dialect: config.dialect }, "ferry listening");

  const shutdown = (signal: string) => {
    ferry.services.log.info({ signal }, "shutting down");
    ferry.stop().then(
      () => {
        file?.flushSync();
        process.exit(0);
      },
      (error: unknown) => {
        ferry.services.log.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => shutdown("SIGTERM"));
  process.once("SIGINT", () => shutdown("SIGINT"));
  // SIGHUP would end the process by default; here it only reopens the log file (a no-op for stdout).
  process.on("SIGHUP", () => {
    file?.reopen();
    ferry.services.log.info({ signal: "SIGHUP", file: config.logFile ?? "stdout" }, "logs reopened");
  });
}

const fail = (what: string) => (error: unknown) => {
  // A StartupError (src/errors.ts) is a message for the operator: no stack.
  const expected = error instanceof Error && error.name === "StartupError";
  process.stderr.write(`${what}: ${error instanceof Error ? (expected ? error.message : (error.stack ?? error.message)) : String(error)}\n`);
  process.exit(1);
};

// Help and version on every command, and a bare `ferry`, print to stdout and exit 0 (src/cli/help.ts).
const info = informational(process.argv.slice(2), version);
const command = info ? "" : process.argv[2];
if (info) {
  process.stdout.write(info.stdout);
} else if (command === "serve") {
  serve(configOrExit(() => loadConfig())).catch(fail("ferry failed to start"));
} else if (command === "dev") {
  const dev = configOrExit(() => {
    const options = parseDevArgs(process.argv.slice(3));
    return { options, config: loadConfig(devEnvironment(options, process.env)) };
  });
  serve(dev.config, (port) => devBanner(dev.options, port)).catch(fail("ferry dev failed to start"));
} else if (command === "customers") {
  customersCli(process.argv.slice(3)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`ferry customers failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
} else {
  process.stderr.write(`ferry: unknown command "${command}"\n\n${usage}`);
  process.exit(2);
}
