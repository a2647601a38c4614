/**
 * Ceiling 3: the durable forwarder. The bare forwarder (forwarder.ts: Fastify in, undici out, at most 512 in flight)
 * plus exactly the storage and signing work a P1 message costs Ferry, and nothing else:
 * - the publish writes Ferry's rows through Ferry's own SQLite layer (`openSqlite`: its schema, statements, group
 *   commit and WAL fsync off the event loop): the message row stored ACTIVE and leased, deriving its CREATED and
 *   first ACTIVE entries (docs/states.md "The message row": the body written once, in the row), and the `requests`
 *   usage; the 200 is sent only once that commit is durable;
 * - each delivery is signed with Ferry's `signDelivery` (HS256 JWT with the body's SHA-256);
 * - its outcome ends the row as DELIVERED, which stands for the DELIVERED entry, and writes the `delivered` usage, in
 *   a group commit (the row stays until retention, as Ferry's).
 * No validation, no accounts, no flow control, no dispatcher, no metrics, no retries beyond the forwarder's: what any
 * durable, signing, logging forwarder on Ferry's rows must do at the least. With BENCH_ROWS=message it writes the
 * message row and its deletion only, no log entries and no usage: the least any durable at-least-once forwarder
 * writes: the row inserted and deleted, as Ferry did before migration 060. The scenario (bench/scenarios/durable-forwarder.ts) says how its figures bound P1 (docs/threading.md).
 * Port from BENCH_PORT, database file from BENCH_DB, Ferry's code from BENCH_FERRY_ROOT (the checkout under test).
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Agent, request } from "undici";
import { deliveryPump } from "./delivery-pump.js";
import { servePublishEndpoint } from "./publish-endpoint.js";

const root = process.env.BENCH_FERRY_ROOT ?? new URL("../../", import.meta.url).pathname;
const load = <T>(file: string): Promise<T> => import(pathToFileURL(join(root, file)).href) as Promise<T>;
const { openSqlite } = await load<typeof import("../../src/store/sqlite/context.js")>("src/store/sqlite/context.ts");
const { newMessageId } = await load<typeof import("../../src/domain/ids.js")>("src/domain/ids.ts");
const { signDelivery } = await load<typeof import("../../src/domain/signing.js")>("src/domain/signing.ts");
type Message = import("../../src/domain/message.js").Message;

const LEASE_MS = 60_000;
const OWNER = "durable-forwarder";
const ACCOUNT = "acc_bench";
const SIGNING_KEY = "sig_benchbenchbenchbenchbenchbenchbe";
const LOGGED = process.env.BENCH_ROWS !== "message";

const store = openSqlite(process.env.BENCH_DB ?? "./durable-forwarder.sqlite", "FULL");
const deleteOwned = store.db.prepare("DELETE FROM messages WHERE id = ? AND lease_owner = ? AND state = 'ACTIVE'");
// Ferry's plain delivery of a row that derives its log (src/store/sqlite/messages.ts `deliverKept`).
const deliverKept = store.db.prepare(
  `UPDATE OR FAIL messages SET state = 'DELIVERED', outcome = 'DELIVERED', lease_owner = NULL, lease_until = NULL,
     finished_at = ?, finished_seq = ?, last_status = ?, attempts = attempts + 1
   WHERE id = ? AND lease_owner = ? AND state = 'ACTIVE'`,
);
const agent = new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
const enqueue = deliveryPump<{ message: Message; attempt: number }>(512, deliver);

async function deliver(job: { message: Message; attempt: number }): Promise<void> {
  const m = job.message;
  let status = 0;
  try {
    const signature = signDelivery({ key: SIGNING_KEY, issuer: "Ferry", url: m.url, body: m.body, nowMs: Date.now() });
    const res = await request(m.url, {
      dispatcher: agent,
      method: "POST",
      headers: { "content-type": m.spec.headers["Content-Type"]![0]!, "svc-signature": signature },
      body: m.body,
    });
    await res.body.dump();
    status = res.statusCode;
  } catch {
    status = 0;
  }
  if (status >= 200 && status < 300) {
    const now = Date.now();
    await store.write(() => {
      if (!LOGGED) {
        deleteOwned.run(m.id, OWNER);
        return;
      }
      deliverKept.run(now, store.nextLogSeq(), status, m.id, OWNER);
      store.addUsage(m.accountId, now, "delivered", 1, m.body?.length ?? 0);
    });
  } else if (job.attempt < 3) {
    enqueue({ message: m, attempt: job.attempt + 1 });
  }
}

await servePublishEndpoint(
  async ({ url, body, contentType, ip }) => {
    const now = Date.now();
    const message: Message = {
      id: newMessageId(now),
      accountId: ACCOUNT,
      kind: "message",
      state: "ACTIVE",
      url,
      body,
      spec: { method: "POST", headers: { "Content-Type": [contentType ?? "application/octet-stream"] }, retries: 3 },
      createdAt: now,
      notBefore: now,
      dueAt: now,
      retried: 0,
      callerIp: ip,
      cancelRequested: false,
      leaseOwner: OWNER,
      leaseUntil: now + LEASE_MS,
      ...(LOGGED ? { derivedLog: true, firstLeasedAt: now } : {}),
    };
    await store.write(() => {
      store.insertMessage(message, OWNER, now + LEASE_MS);
      if (!LOGGED) return;
      store.addUsage(ACCOUNT, now, "requests", 1, body.length);
    });
    enqueue({ message, attempt: 1 });
    return { messageId: message.id, url };
  },
  () => store.close(),
);
