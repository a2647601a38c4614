import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/domain/clock.js";
import { searchLimits } from "../../src/domain/search.js";
import { adminEnv, manage } from "../helpers/management.js";
import { httpCall, type HttpResult, startTestServer, type TestServer } from "../helpers/server.js";

/**
 * The two plan limits too large to reach by traffic in a test (docs/search.md "Limits"): 10,000 queries a day and
 * 50 GB of bandwidth a month on a free index. Most of the allowance is counted beforehand through the store's own
 * counter (the one the server's buffered counts are flushed into); the last requests then spend the rest through
 * the HTTP routes, so the refusal comes from the real counting path: store sum plus what the server buffered.
 */

const free = searchLimits.free;
const DAY_MS = 86_400_000;
// Mid-day and mid-month, so that advancing a day or 32 days crosses exactly one boundary.
const start = new Date();
const clock = new ManualClock(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), 15, 12));
let server: TestServer;

interface Index {
  id: string;
  endpoint: string;
  token: string;
}

async function createIndex(name: string): Promise<Index> {
  const created = await manage(server, "POST", "/v2/search", { body: { name, region: "eu-west-1", type: "free" } });
  expect(created.status, created.text).toBe(200);
  return created.json;
}

const call = (index: Index, route: string, body: unknown): Promise<HttpResult> =>
  httpCall(index.endpoint, "POST", `/${route}`, {
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
    token: index.token,
  });

/** Counts `n` of `kind` now, as the server's flush does (no limit on the write itself). */
const spend = (index: Index, kind: "query" | "bandwidth", n: number) =>
  server.ferry.services.store.searchUsageConsume({ indexId: index.id, kind, n, now: clock.now(), since: clock.now(), limit: -1 });

function expectLimit(res: HttpResult, limit: string): void {
  expect(res.status, res.text).toBe(429);
  expect(res.json).toMatchObject({ status: 429 });
  expect(res.json.error).toContain(limit);
}

beforeAll(async () => {
  server = await startTestServer({ env: adminEnv, clock });
});
afterAll(async () => server?.stop());

describe("spent search allowances", () => {
  it("refuses the query past max_daily_queries until the next day", async () => {
    const index = await createIndex("queries");
    expect((await call(index, "upsert-data/a", [{ id: "d1", content: { text: "alpha" } }])).status).toBe(200);
    await spend(index, "query", free.max_daily_queries - 2);
    // The last two of the day: one search, one fetch (both are queries); their counts stay buffered in the server.
    expect((await call(index, "search/a", { query: "alpha" })).json.result[0].id).toBe("d1");
    expect((await call(index, "fetch/a", { ids: ["d1"] })).status).toBe(200);
    expectLimit(await call(index, "search/a", { query: "alpha" }), "max_daily_queries");
    expectLimit(await call(index, "fetch/a", { ids: ["d1"] }), "max_daily_queries");
    // Writes have their own allowance.
    expect((await call(index, "upsert-data/a", [{ id: "d2", content: { text: "beta" } }])).status).toBe(200);
    const stats = await manage(server, "GET", `/v2/search/${index.id}/stats`);
    expect(stats.json.daily_queries).toBe(free.max_daily_queries);
    clock.advance(DAY_MS);
    expect((await call(index, "search/a", { query: "beta" })).json.result[0].id).toBe("d2");
  });

  it("refuses a request whose body would pass max_monthly_bandwidth until the next month", async () => {
    const index = await createIndex("bandwidth");
    const remaining = 6000;
    await spend(index, "bandwidth", free.max_monthly_bandwidth - remaining);
    // ~1 KB in and a short answer out: both counted.
    const doc = [{ id: "d1", content: { text: "gamma ".repeat(170) } }];
    expect((await call(index, "upsert-data/a", doc)).status).toBe(200);
    const stats = await manage(server, "GET", `/v2/search/${index.id}/stats`);
    const left = free.max_monthly_bandwidth - stats.json.monthly_bandwidth;
    expect(left).toBeLessThan(remaining - JSON.stringify(doc).length);
    expect(left).toBeGreaterThan(0);
    // A body larger than what is left is refused and not counted (only the short error answer is) …
    const big = [{ id: "d2", content: { text: "x".repeat(left) } }];
    expectLimit(await call(index, "upsert-data/a", big), "max_monthly_bandwidth");
    const after = (await manage(server, "GET", `/v2/search/${index.id}/stats`)).json.monthly_bandwidth;
    expect(after).toBeGreaterThan(free.max_monthly_bandwidth - left);
    expect(after).toBeLessThan(free.max_monthly_bandwidth);
    // … while a small one still fits.
    expect((await call(index, "search/a", { query: "gamma" })).json.result[0].id).toBe("d1");
    clock.advance(32 * DAY_MS);
    expect((await call(index, "upsert-data/a", big)).status).toBe(200);
  });
});
