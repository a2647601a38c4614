import { ConfigError, loadConfig } from "../config.js";
import { planBook, type PlanName } from "../domain/plans.js";
import { systemClock } from "../domain/clock.js";
import { AppError } from "../errors.js";
import { dialectFor } from "../domain/dialect.js";
import { accountRecord, parsePlanName, wirePlanName } from "../http/views/account-view.js";
import { version } from "../server.js";
import { bootstrap, createCustomer } from "../services/customers.js";
import { openStore } from "../store/open.js";

const USAGE = "usage: ferry customers create --email <e-mail> [--plan <plan>] [--enterprise <id>]";

interface Output {
  write(text: string): unknown;
}

/** `--name value` and `--name=value`; unknown flags are refused so a typo never creates the wrong customer. */
function parseFlags(args: string[], known: readonly string[]): Record<string, string> {
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!name.startsWith("--") || !known.includes(name.slice(2)))
      throw new AppError("invalid_input", `unknown argument ${arg}`);
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value === "") throw new AppError("invalid_input", `${name} needs a value`);
    flags[name.slice(2)] = value;
  }
  return flags;
}

/** Everything is checked before the store is opened: a refused command writes nothing. */
function parseArgs(args: string[], env: Record<string, string | undefined>) {
  const [command, ...rest] = args;
  if (command !== "create") throw new AppError("invalid_input", `unknown command "customers ${command ?? ""}"`);
  const config = loadConfig(env);
  const flags = parseFlags(rest, ["email", "plan", "enterprise"]);
  if (flags.email === undefined) throw new AppError("invalid_input", "missing --email");
  const dialect = dialectFor(config.dialect, version);
  const plan: PlanName = parsePlanName(flags.plan ?? wirePlanName(config.defaultPlan, dialect), dialect, "--plan");
  return { config, dialect, email: flags.email, plan, enterpriseId: flags.enterprise };
}

/**
 * `ferry customers create`: opens the store of DATABASE_URL directly (safe while the server runs: SQLite WAL and a
 * busy timeout let both write; on PostgreSQL the CLI is one more client), creates a customer with a generated API
 * key and its own messaging account, and prints `{"email", "api_key", "account": <account record>}` as one JSON
 * line. Returns the exit code.
 */
export async function customersCli(
  args: string[],
  env: Record<string, string | undefined> = process.env,
  out: Output = process.stdout,
  err: Output = process.stderr,
): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(args, env);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof AppError) {
      err.write(`${error.message}\n${USAGE}\n`);
      return 2;
    }
    throw error;
  }
  const { config, dialect, email, plan, enterpriseId } = parsed;
  const store = await openStore(config);
  try {
    await store.migrate();
    const boot = await bootstrap(config, store, systemClock.now());
    // A first start made by the CLI: the operator must see the generated secrets once, as `ferry serve` shows them.
    for (const [name, value] of Object.entries(boot.generated)) err.write(`generated ${name}: ${value}\n`);
    const p: Parameters<typeof createCustomer>[2] = { email, plan, now: systemClock.now() };
    if (enterpriseId !== undefined) p.enterpriseId = enterpriseId;
    const created = await createCustomer(config, store, p);
    out.write(
      `${JSON.stringify({
        email: created.customer.email,
        api_key: created.apiKey,
        account: accountRecord(created.account, dialect, planBook(config.planOverrides)),
      })}\n`,
    );
    return 0;
  } catch (error) {
    if (error instanceof AppError) {
      err.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await store.close();
  }
}
