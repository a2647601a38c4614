import { customersCli } from "./cli/customers.js";
import { ConfigError, loadConfig } from "./config.js";
import { startFerry } from "./server.js";

/** Process entry: `ferry serve` (the default command). */
async function serve(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const ferry = await startFerry(config);
  const { generated, account } = ferry.bootstrap;
  if (Object.keys(generated).length > 0) {
    // Printed once, on the start that generated them; they are stored and reused afterwards.
    const lines = [
      "Ferry generated credentials for the default messaging account (shown once; set them in the environment to pin them):",
      generated.token ? `  FERRY_TOKEN=${generated.token}` : "",
      generated.readOnlyToken ? `  read-only token (reads only): ${generated.readOnlyToken}` : "",
      generated.currentSigningKey ? `  FERRY_CURRENT_SIGNING_KEY=${generated.currentSigningKey}` : "",
      generated.nextSigningKey ? `  FERRY_NEXT_SIGNING_KEY=${generated.nextSigningKey}` : "",
      generated.adminApiKey ? "Management API (HTTP Basic e-mail:api_key) credentials of the first customer:" : "",
      generated.adminEmail ? `  FERRY_ADMIN_EMAIL=${generated.adminEmail}` : "",
      generated.adminApiKey ? `  FERRY_ADMIN_API_KEY=${generated.adminApiKey}` : "",
    ].filter((l) => l !== "");
    process.stdout.write(`${lines.join("\n")}\n`);
  }
  ferry.services.log.info({ url: ferry.url, account: account.id, dialect: config.dialect }, "ferry listening");

  const shutdown = (signal: string) => {
    ferry.services.log.info({ signal }, "shutting down");
    ferry.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        ferry.services.log.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => shutdown("SIGTERM"));
  process.once("SIGINT", () => shutdown("SIGINT"));
}

const command = process.argv[2] ?? "serve";
if (command === "serve") {
  serve().catch((error: unknown) => {
    process.stderr.write(
      `ferry failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
} else if (command === "customers") {
  customersCli(process.argv.slice(3)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`ferry customers failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
} else {
  process.stderr.write(`unknown command "${command}"; usage: ferry serve | ferry customers create --email <e>\n`);
  process.exit(2);
}
