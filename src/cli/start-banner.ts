import type { Config } from "../config.js";
import { DIALECT_NAMES, dialectFor } from "../domain/dialect.js";
import type { BootstrapResult } from "../services/accounts.js";

/**
 * What `ferry serve` prints for a person (docs/operations.md, "First start"), outside the JSON log stream: on the
 * start that generated credentials, where Ferry listens, the console, each credential with what it is for, and a
 * `curl` that works as printed; on any start where the environment replaced a stored credential, a line saying so
 * (the old value stops working, which is otherwise a surprise). Secrets are printed here once and never logged.
 */
export function startBanner(p: {
  url: string;
  config: Pick<Config, "databaseUrl" | "dialect" | "host">;
  bootstrap: Pick<BootstrapResult, "generated" | "replaced">;
  version: string;
}): string {
  const { generated, replaced } = p.bootstrap;
  const out: string[] = [];
  for (const name of replaced) out.push(`${name} ${REPLACED[name]}`);
  if (Object.keys(generated).length === 0) return out.length > 0 ? `${out.join("\n")}\n` : "";

  // Fastify's address names one of the addresses a wildcard host listens on: say what FERRY_HOST asked for instead.
  const port = new URL(p.url).port;
  const everywhere = ["0.0.0.0", "::", ""].includes(p.config.host);
  const local = reachableUrl(new URL(p.url));
  // Both dialects are spoken on one server; FERRY_DIALECT names the one for what no request decided (the curl below).
  const dialect = dialectFor(p.config.dialect, p.version);
  const other = dialectFor(DIALECT_NAMES.find((n) => n !== p.config.dialect)!, p.version);
  const where = everywhere ? `port ${port} on every interface (FERRY_HOST=${p.config.host})` : `${p.config.host}:${port}`;
  out.unshift(
    `Ferry ${p.version} is listening on ${where}, data in ${withoutPassword(p.config.databaseUrl)}`,
    `  API:      ${local}   (reference: ${local}/docs)`,
    `  Console:  ${local}/console   (sign in with the token or the admin e-mail and API key below)`,
    "",
    "First start: these credentials were generated and stored in the database. They are shown only now; set them in",
    "the environment to pin them.",
  );
  const credential = (line: string | false | undefined, what: string) => {
    if (line) out.push(`  ${line}`, `      ${what}`);
  };
  credential(
    generated.token && `FERRY_TOKEN=${generated.token}`,
    'the messaging token: send "Authorization: Bearer <token>" to publish and to use the API and the console',
  );
  credential(
    generated.readOnlyToken && `read-only token: ${generated.readOnlyToken}`,
    "for dashboards and people who may look but not change: it reads messages, logs, the DLQ, queues and schedules; " +
      "every write is refused (403)",
  );
  if (generated.currentSigningKey) out.push(`  FERRY_CURRENT_SIGNING_KEY=${generated.currentSigningKey}`);
  credential(
    generated.nextSigningKey && `FERRY_NEXT_SIGNING_KEY=${generated.nextSigningKey}`,
    `your receivers check the ${dialect.header("Signature")} header of each delivery with these two keys ` +
      `(${other.header("Signature")} for messages published with ${other.prefix} names; the next key takes over ` +
      "when the keys are rotated)",
  );
  if (generated.adminEmail) out.push(`  FERRY_ADMIN_EMAIL=${generated.adminEmail}`);
  credential(
    generated.adminApiKey && `FERRY_ADMIN_API_KEY=${generated.adminApiKey}`,
    "the management API (customers, accounts, plans) with HTTP Basic e-mail:api_key; it also signs in to the console",
  );
  // A configured token is not printed: the curl then reads it from the shell, where the operator set it. The message
  // goes to Ferry's own /health (GET), so it is delivered as printed without any other server (README, Quick start).
  const token = generated.token ?? "$FERRY_TOKEN";
  out.push(
    "",
    "Try it (publishes a message that Ferry delivers to its own /health; answers with the message's id):",
    `  curl -X POST ${local}/v2/publish/${local}/health -H "Authorization: Bearer ${token}" -H "${dialect.header("Method")}: GET" -d 'hello'`,
    "",
  );
  return `${out.join("\n")}\n`;
}

/** DATABASE_URL as it may be shown: a PostgreSQL password is replaced by `***`. */
function withoutPassword(databaseUrl: string): string {
  if (!/^postgres(ql)?:/.test(databaseUrl)) return databaseUrl;
  try {
    const u = new URL(databaseUrl);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "PostgreSQL";
  }
}

/** A URL a person on this machine can call: the wildcard addresses are not addresses to connect to. */
function reachableUrl(listening: URL): string {
  const u = new URL(listening.href);
  if (u.hostname === "0.0.0.0") u.hostname = "127.0.0.1";
  if (u.hostname === "[::]") u.hostname = "[::1]";
  return u.origin;
}

const REPLACED: Record<BootstrapResult["replaced"][number], string> = {
  FERRY_TOKEN: "replaced the messaging token stored in the database: the previous token no longer works.",
  FERRY_CURRENT_SIGNING_KEY: "replaced the stored current signing key: deliveries are signed with the new one now.",
  FERRY_NEXT_SIGNING_KEY: "replaced the stored next signing key: receivers must know the new one.",
  FERRY_ADMIN_EMAIL: "replaced the first customer's stored e-mail: the management API takes the new one.",
  FERRY_ADMIN_API_KEY: "replaced the first customer's stored API key: the previous key no longer works.",
};
