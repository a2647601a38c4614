import { afterEach, describe, expect, it } from "vitest";
import { arrayRows, LOG_COLUMNS, messageInsertSql, unnestInsertSql } from "../../src/store/postgres/rows.js";
import { postgresAvailable } from "../helpers/postgres.js";
import { openPostgresTestStores } from "./adapters.js";
import { aMessage, anAccount, NOW } from "./factories.js";

/**
 * Parallel arrays as rows (rows.ts, arrayRows; docs/postgres.md "Arrays as rows"): set-returning functions in a
 * select list, not `FROM unnest(…)`, whose function scans copy every array into a tuplestore of its own per call.
 */
describe.runIf(postgresAvailable())("PostgreSQL arrays as rows", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const open = async () => {
    const opened = await openPostgresTestStores();
    cleanups.push(opened.dispose);
    return opened;
  };

  it("pairs the arrays' elements by position, a shorter array giving NULLs, as multi-argument unnest did", async () => {
    const { sql } = await open();
    const columns = [
      ["n", "int4"],
      ["s", "text"],
    ] as const;
    const rows = await sql<{ n: number; s: string | null }>(`SELECT n, s FROM ${arrayRows("r", columns)}`, [
      [1, 2, 3],
      ["a"],
    ]);
    expect(rows).toEqual([
      { n: 1, s: "a" },
      { n: 2, s: null },
      { n: 3, s: null },
    ]);
    // The same parameters numbered from elsewhere, or one by one.
    const later = await sql<{ n: number }>(`SELECT $1::int AS x, n FROM ${arrayRows("r", columns, 2)}`, [9, [4], ["d"]]);
    expect(later).toEqual([{ x: 9, n: 4 }]);
    const named = await sql<{ s: string }>(`SELECT s FROM ${arrayRows("r", columns, ["$2", "$1"])}`, [["e"], [5]]);
    expect(named).toEqual([{ s: "e" }]);
    expect(await sql(`SELECT * FROM ${arrayRows("r", columns)}`, [[], []])).toEqual([]);
  });

  it("the message and log inserts read their arrays element by element: no function scan in their plans", async () => {
    const { sql } = await open();
    for (const text of [messageInsertSql(), unnestInsertSql("logs", LOG_COLUMNS)]) {
      const plan = (await sql<{ "QUERY PLAN": string }>(`EXPLAIN (GENERIC_PLAN) ${text}`))
        .map((r) => r["QUERY PLAN"])
        .join("\n");
      expect(plan).toContain("ProjectSet");
      expect(plan).not.toContain("Function Scan");
      expect(plan).not.toContain("Sort");
    }
  });

  it("a publish's rows take their log positions in the order they were published", async () => {
    const { store, sql } = await open();
    const account = anAccount("acc-array-rows");
    await store.accountInsert({ account });
    const messages = Array.from({ length: 40 }, (_, i) =>
      aMessage(account.id, { body: Buffer.from(`body ${i}`), dueAt: NOW + 60_000 }),
    );
    await store.messageInsertMany({ items: messages.map((message) => ({ message })), now: NOW, dedupWindowMs: 0 });
    const rows = await sql<{ id: string; body: Buffer }>("SELECT id, body FROM messages ORDER BY seq");
    expect(rows.map((r) => r.id)).toEqual(messages.map((m) => m.id));
    expect(rows.map((r) => r.body.toString())).toEqual(messages.map((_, i) => `body ${i}`));
  });
});
