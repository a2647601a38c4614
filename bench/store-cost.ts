/**
 * The SQLite store path of a P1 message alone, for instruction counts (docs/threading.md "The P1 path now"): per
 * message, a fast-path `messageInsertMany` (its configuration parsed and its message built as the publish route does)
 * and a plain `messageFinish`, through Ferry's real SQLite store, in batches of `--batch` (default 20) with 1 KiB
 * bodies, after a warm-up of 1,000 messages. Run it under callgrind twice, with `--messages=N` and `--messages=0`:
 * (instructions of N − instructions of 0) ÷ N is the store path's cost per message, which, unlike time, does not
 * depend on how busy the machine is:
 *
 *   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p node --import tsx bench/store-cost.ts --messages=8000
 *
 * `--ferry-root=<checkout>` measures another checkout's store (A/B). `--sql=<statement>` runs one statement on the
 * fresh database before the warm-up (e.g. `DROP INDEX messages_delivered`, to weigh an index).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const arg = (name: string): string | undefined =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const root = arg("ferry-root") ?? new URL("../", import.meta.url).pathname;
const load = <T>(file: string): Promise<T> => import(pathToFileURL(join(root, file)).href) as Promise<T>;
const { openSqliteStore } = await load<typeof import("../src/store/sqlite/index.js")>("src/store/sqlite/index.ts");
const { dialectFor } = await load<typeof import("../src/domain/dialect.js")>("src/domain/dialect.ts");
const { buildMessages } = await load<typeof import("../src/services/publish.js")>("src/services/publish.ts");
const { parsePublishConfig } = await load<typeof import("../src/domain/publish-config.js")>(
  "src/domain/publish-config.ts",
);
const { planTable } = await load<typeof import("../src/domain/plans.js")>("src/domain/plans.ts");
const { logEntry } = await load<typeof import("../src/domain/log.js")>("src/domain/log.ts");
type Message = import("../src/domain/message.js").Message;

const messages = Number(arg("messages") ?? "8000");
const batch = Number(arg("batch") ?? "20");
const OWNER = "node-cost";
const dir = mkdtempSync(join(tmpdir(), "ferry-store-cost-"));
const store = openSqliteStore({ path: join(dir, "ferry.db"), synchronous: "FULL" });
const { default: Database } = await import("better-sqlite3");
const extraSql = arg("sql");
if (extraSql) {
  // Only for A/B runs of the schema; the store's own connection is the one measured.
  const db = new Database(join(dir, "ferry.db"));
  db.exec(extraSql);
  db.close();
}
const { loadConfig } = await load<typeof import("../src/config.js")>("src/config.ts");
const { ensureDefaultAccount } = await load<typeof import("../src/services/accounts.js")>("src/services/accounts.ts");
const config = loadConfig();
const { account } = await ensureDefaultAccount(config, store, Date.now());
const dialect = dialectFor("neutral", "bench");
const limits = planTable(config.planOverrides)[account.plan] ?? planTable(config.planOverrides).paid;
const body = Buffer.alloc(1024, "b");
const destination = "http://127.0.0.1:9/cost";

async function round(n: number): Promise<void> {
  for (let done = 0; done < n; done += batch) {
    const now = Date.now();
    const items = [];
    for (let k = 0; k < Math.min(batch, n - done); k++) {
      const parsed = parsePublishConfig(
        { headers: { "content-type": "application/octet-stream" }, query: new Map() },
        dialect,
        limits,
        now,
      );
      for (const item of buildMessages({ account, destination, body, callerIp: "127.0.0.1" }, [{ url: destination }], parsed, now)) {
        items.push({ ...item, leaseOwner: OWNER, leaseUntil: now + 60_000 });
      }
    }
    const results = await store.messageInsertMany({ items, now, dedupWindowMs: 600_000 });
    const finished = results.map((r) => {
      const m = r.message as Message;
      return store.messageFinish({
        message: m,
        owner: OWNER,
        now,
        outcome: { kind: "delivered" },
        logs: [logEntry(m, "DELIVERED", now, { responseStatus: 200 })],
        newMessages: [],
      });
    });
    await Promise.all(finished);
  }
}

await round(1000);
await round(messages);
await store.close();
// Every message must have taken the fast path and ended DELIVERED, or the figure measures something else.
const check = new Database(join(dir, "ferry.db"), { readonly: true });
const states = check.prepare("SELECT state, COUNT(*) AS n FROM messages GROUP BY state").all();
const indexes = (check.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'messages'").pluck().all() as string[]).length;
check.close();
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ messages, batch, states, indexes })}\n`);
