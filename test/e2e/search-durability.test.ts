import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Search } from "@upstash/search";
import { afterAll, describe, expect, it } from "vitest";
import { ADMIN_EMAIL, ADMIN_KEY, basic } from "../helpers/management.js";
import { freshDatabase } from "../helpers/postgres.js";
import { spawnFerry } from "../helpers/process.js";
import { httpCall, TEST_TOKEN, testStore } from "../helpers/server.js";

/** Search documents are as durable as messages: an acknowledged upsert survives SIGKILL (docs/search.md). */

const dataDir = mkdtempSync(join(tmpdir(), "ferry-search-kill-"));
let dropDatabase: (() => Promise<void>) | undefined;
afterAll(async () => {
  await dropDatabase?.();
  rmSync(dataDir, { recursive: true, force: true });
});

async function databaseUrl(): Promise<string> {
  if (testStore === "sqlite") return `sqlite:${join(dataDir, "ferry.db")}`;
  const db = await freshDatabase();
  dropDatabase = db.drop;
  return db.url;
}

describe("search durability", () => {
  it("loses no acknowledged document when killed with SIGKILL in the middle of upserts", async () => {
    const env = {
      DATABASE_URL: await databaseUrl(),
      FERRY_TOKEN: TEST_TOKEN,
      FERRY_ADMIN_EMAIL: ADMIN_EMAIL,
      FERRY_ADMIN_API_KEY: ADMIN_KEY,
    };
    let ferry = await spawnFerry(env);
    const created = await httpCall(ferry.url, "POST", "/v2/search", {
      headers: { authorization: basic({ email: ADMIN_EMAIL, key: ADMIN_KEY }), "content-type": "application/json" },
      body: JSON.stringify({ name: "kill", region: "eu-west-1", type: "payg" }),
      token: null,
    });
    expect(created.status).toBe(200);
    const { endpoint, token } = created.json as { endpoint: string; token: string };
    // The index is found by its endpoint's path, so the same path answers on the restarted server's new port.
    const path = new URL(endpoint).pathname;
    const client = (base: string) => new Search({ url: `${base}${path}`, token, retry: false, enableTelemetry: false });

    const acknowledged = new Set<string>();
    let stop = false;
    const writer = async (w: number) => {
      const docs = client(ferry.url).index("crash");
      for (let i = 0; i < 2000 && !stop; i++) {
        const batch = Array.from({ length: 5 }, (_, j) => ({
          id: `w${w}-${i}-${j}`,
          content: { text: `writer ${w} batch ${i} item ${j} key k${w}x${i}x${j}` },
        }));
        try {
          await docs.upsert(batch);
          for (const d of batch) acknowledged.add(d.id);
        } catch {
          return; // the server is gone: an unanswered upsert was never acknowledged
        }
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    while (acknowledged.size < 200) await new Promise((r) => setTimeout(r, 10));
    ferry.child.kill("SIGKILL");
    stop = true;
    await Promise.all(writers);
    await ferry.exited;

    ferry = await spawnFerry(env);
    try {
      const docs = client(ferry.url).index("crash");
      const ids = [...acknowledged];
      const missing: string[] = [];
      for (let i = 0; i < ids.length; i += 100) {
        const got = await docs.fetch(ids.slice(i, i + 100));
        got.forEach((d, j) => {
          if (!d) missing.push(ids[i + j]!);
        });
      }
      expect(missing).toEqual([]);
      expect((await docs.info()).documentCount).toBeGreaterThanOrEqual(acknowledged.size);
      const hits = await docs.search({ query: "key k2x0x3", limit: 3 });
      expect(hits[0]?.id).toBe("w2-0-3");
    } finally {
      ferry.child.kill("SIGTERM");
      await ferry.exited;
    }
  }, 90_000);
});
