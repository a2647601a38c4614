/**
 * P4 seeder: inserts `SEED_COUNT` pending delayed messages (due in about a day) into a Ferry database through
 * Ferry's own code: `loadConfig` (the same environment the server gets), `openStore`, `ensureDefaultAccount`, the plan table, and
 * the publish path's `parsePublishConfig` + `buildMessages` to build each message, then `Store.messageInsertMany`
 * in batches (each message gets its CREATED log entry and usage, exactly as a publish would write it).
 * Run before the server starts, on the same DATABASE_URL, with the code of the checkout under test. Prints one JSON line with the count and the time taken.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";

// Ferry's code is loaded from the checkout under test (BENCH_FERRY_ROOT, see --ferry-root), typed as this one's.
const root = process.env.BENCH_FERRY_ROOT ?? new URL("../../", import.meta.url).pathname;
const load = <T>(file: string): Promise<T> => import(pathToFileURL(join(root, file)).href) as Promise<T>;
const { loadConfig } = await load<typeof import("../../src/config.js")>("src/config.ts");
/** The first of `files` that loads: a module that moved is found in the older checkouts a bench compares with. */
const loadFirst = async <T>(...files: string[]): Promise<T> => {
  for (const file of files.slice(0, -1)) {
    try {
      return await load<T>(file);
    } catch {
      // Not in this checkout: try the next place.
    }
  }
  return load<T>(files.at(-1)!);
};
const { dialectFor } = await loadFirst<typeof import("../../src/domain/dialect.js")>(
  "src/domain/dialect.ts",
  "src/http/dialect.ts",
);
const { ensureDefaultAccount } = await load<typeof import("../../src/services/accounts.js")>(
  "src/services/accounts.ts",
);
const { planTable } = await load<typeof import("../../src/domain/plans.js")>("src/domain/plans.ts");
const { buildMessages } = await load<typeof import("../../src/services/publish.js")>("src/services/publish.ts");
const { parsePublishConfig } = await load<typeof import("../../src/domain/publish-config.js")>(
  "src/domain/publish-config.ts",
);
const { openStore } = await load<typeof import("../../src/store/open.js")>("src/store/open.ts");

const count = Number(process.env.SEED_COUNT ?? "1000000");
const bodyBytes = Number(process.env.SEED_BODY_BYTES ?? "1024");
const destination = process.env.SEED_URL ?? "http://127.0.0.1:9/never";
const BATCH = 2000;
const DAY_MS = 86_400_000;

const config = loadConfig();
const store = await openStore(config);
await store.migrate();
const { account } = await ensureDefaultAccount(config, store, Date.now());
const dialect = dialectFor(config.dialect, "bench");
const limits = planTable(config.planOverrides)[account.plan] ?? planTable(config.planOverrides).paid;
const body = Buffer.alloc(bodyBytes, "s");
const started = Date.now();
let inserted = 0;
let lastReport = started;
while (inserted < count) {
  const now = Date.now();
  const n = Math.min(BATCH, count - inserted);
  const items = [];
  for (let k = 0; k < n; k++) {
    // About one day, spread over an hour so the due index is not one value.
    const delaySec = DAY_MS / 1000 + ((inserted + k) % 3600);
    const headers = { "content-type": "application/octet-stream", [dialect.key("delay")]: `${delaySec}s` };
    const parsed = parsePublishConfig({ headers, query: new Map() }, dialect, limits, now);
    items.push(
      ...buildMessages(
        { account, destination, body, callerIp: "127.0.0.1" },
        [{ url: destination }],
        parsed,
        now,
      ),
    );
  }
  await store.messageInsertMany({ items, now, dedupWindowMs: config.dedupWindowMs });
  inserted += n;
  if (Date.now() - lastReport > 10_000) {
    lastReport = Date.now();
    process.stderr.write(`seeded ${inserted}/${count}\n`);
  }
}
await store.close();
process.stdout.write(`${JSON.stringify({ inserted, ms: Date.now() - started })}\n`);
