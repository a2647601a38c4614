import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { SearchUsage } from "../../src/services/search-usage.js";
import { openSqliteStore } from "../../src/store/sqlite/index.js";
import type { Store } from "../../src/store/store.js";
import { aSearchIndex } from "./factories.js";

/**
 * The search data plane's buffered counters (src/services/search-usage.ts) against a real SQLite store. A flush's
 * write is visible in the store before its promise resolves (that waits for the fsync); the store is wrapped here to
 * hold that resolution back for 200 ms, a slow disk, so the window is wide enough to read in.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it("counts an operation once while a flush writes it, through `consistently`", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ferry-search-usage-"));
  dirs.push(dir);
  const store = openSqliteStore({ path: join(dir, "f.db"), synchronous: "FULL" });
  const slowDisk = new Proxy(store, {
    get(target, key, receiver) {
      if (key !== "searchUsageConsume") return Reflect.get(target, key, receiver);
      return async (p: Parameters<Store["searchUsageConsume"]>[0]) => {
        const written = await target.searchUsageConsume(p);
        await sleep(200);
        return written;
      };
    },
  });
  const usage = new SearchUsage(slowDisk);
  const sum = async () =>
    (await store.searchUsageSum({ indexId: "i1", kind: "query", since: 0 })) + usage.buffered("i1", "query", 0);
  try {
    await store.searchIndexInsert({ index: aSearchIndex("i1") });
    usage.add("i1", "query", 5, 60_000);
    expect(await usage.consistently(sum)).toBe(5);
    const flushed = usage.flush();
    await sleep(100); // the write is in the store; its promise is held back
    expect(await sum()).toBe(10); // read outside the gate: in the store and still listed as being written
    expect(await usage.consistently(sum)).toBe(5);
    await flushed;
    expect(await usage.consistently(sum)).toBe(5);
    expect(usage.buffered("i1", "query", 0)).toBe(0);
  } finally {
    await store.close();
  }
});
