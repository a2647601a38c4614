import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { adminEnv, addCustomer, admin, basic, type Credentials, manage } from "../helpers/management.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import type { FuzzContext } from "./requests.js";

/**
 * A running Ferry for the fuzzer: one dialect, its accounts (the fuzzed one, another one, one whose token was
 * rotated, and the default account that carries only the ledger's clean publishes), and ids that exist.
 */
export interface FuzzTarget {
  server: TestServer;
  ctx: FuzzContext;
  tokens: { valid: string; readOnly: string; other: string; rotated: string; ledger: string };
  creds: { valid: Credentials; admin: Credentials };
  messageIdHeader: string;
}

/** A destination that answers 200 at once and remembers only the message ids it saw (bodies are not kept). */
export class LedgerReceiver {
  readonly seen = new Set<string>();
  received = 0;
  private constructor(private readonly server: Server) {}

  static async start(): Promise<LedgerReceiver> {
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        receiver.received++;
        const id = req.headers["svc-message-id"] ?? req.headers["upstash-message-id"];
        if (typeof id === "string") receiver.seen.add(id);
        res.end("ok");
      });
      req.on("error", () => {});
    });
    server.keepAliveTimeout = 60_000;
    const receiver = new LedgerReceiver(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const json = (value: unknown) => ({ headers: { "content-type": "application/json" }, body: JSON.stringify(value) });

export async function startTarget(dialect: "neutral" | "upstash", ledger: LedgerReceiver): Promise<FuzzTarget> {
  const server = await startTestServer({
    store: "sqlite",
    env: { ...adminEnv, FERRY_DIALECT: dialect, FERRY_LOG_LEVEL: "silent", FERRY_SHUTDOWN_GRACE_MS: "0" },
  });
  const prefix = dialect === "upstash" ? "Upstash-" : "Svc-";
  const seg = dialect === "upstash" ? "qstash" : "msgsvc";
  const fuzzed = await addCustomer(server, `fuzz-${dialect}@test.local`);
  const other = await addCustomer(server, `other-${dialect}@test.local`);
  const rotatedCustomer = await addCustomer(server, `rotated-${dialect}@test.local`);
  const rotate = await manage(server, "POST", `/v2/${seg}/rotate-token/${rotatedCustomer.accountId}`, {
    auth: rotatedCustomer.credentials,
  });
  if (rotate.status !== 200) throw new Error(`rotate-token answered ${rotate.status}: ${rotate.text}`);

  // Things that exist in the fuzzed account, so generated paths hit real ids as well as unknown ones.
  const call = (method: string, path: string, opts: Parameters<TestServer["call"]>[2] = {}) =>
    server.call(method, path, { ...opts, token: fuzzed.token });
  const message = await call("POST", `/v2/publish/${ledger.url}/known`, { headers: { [`${prefix}Delay`]: "1d" }, body: "k" });
  const schedule = await call("POST", `/v2/schedules/${ledger.url}/scheduled`, { headers: { [`${prefix}Cron`]: "0 0 1 1 *" } });
  await call("POST", "/v2/topics/known-group/endpoints", json({ endpoints: [{ url: `${ledger.url}/group` }] }));
  await call("POST", `/v2/enqueue/known-queue/${ledger.url}/queued`, { body: "q" });
  await call("POST", `/v2/publish/http://127.0.0.1:9/dead`, { headers: { [`${prefix}Retries`]: "0" }, body: "d" });
  await call("POST", `/v2/publish/${ledger.url}/flow`, {
    headers: { [`${prefix}Flow-Control-Key`]: "known-key", [`${prefix}Flow-Control-Value`]: "parallelism=1" },
  });
  let dlq = "";
  for (let i = 0; i < 200 && dlq === ""; i++) {
    const page = await call("GET", "/v2/dlq");
    dlq = (page.json?.messages?.[0]?.dlqId as string | undefined) ?? "";
    if (dlq === "") await new Promise((r) => setTimeout(r, 25));
  }
  const readOnly = (await server.ferry.services.store.accountGet({ id: fuzzed.accountId }))?.readOnlyToken;
  if (readOnly === undefined) throw new Error("fuzz setup failed: the fuzzed account has no read-only token");
  const ids = [message.json?.messageId, schedule.json?.scheduleId];
  if (ids.some((id) => typeof id !== "string")) throw new Error(`fuzz setup failed: ${message.text} ${schedule.text}`);

  return {
    server,
    ctx: {
      prefix,
      managementSegment: seg,
      tokenQuery: dialect === "upstash" ? "qstash_token" : "svc_token",
      ledgerUrl: ledger.url,
      knownIds: {
        message: ids[0] as string,
        schedule: ids[1] as string,
        dlq: dlq || "0-0",
        topic: "known-group",
        queue: "known-queue",
        flowKey: "known-key",
        account: fuzzed.accountId,
      },
    },
    tokens: { valid: fuzzed.token, readOnly, other: other.token, rotated: rotatedCustomer.token, ledger: server.token },
    creds: { valid: fuzzed.credentials, admin },
    messageIdHeader: `${prefix}Message-Id`,
  };
}

export { basic };
