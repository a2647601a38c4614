import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { metricValue, parseMetrics, scrape } from "../helpers/metrics.js";
import { postgresAvailable } from "../helpers/postgres.js";
import { Receiver } from "../helpers/receiver.js";
import { httpCall, startTestServer, type TestServer, testStore } from "../helpers/server.js";

/**
 * /metrics against a real running Ferry: the counters and gauges of docs/metrics.md move after a publish and a
 * delivery, labels stay bounded, the token is enforced. Runs on SQLite, and on PostgreSQL when a cluster is there.
 * Metrics are process-wide (several servers share this process's registry), so the checks read differences.
 */
const stores: ("sqlite" | "postgres")[] = postgresAvailable() && testStore === "sqlite" ? ["sqlite", "postgres"] : [testStore];

describe.each(stores)("/metrics on %s", (store) => {
  let server: TestServer;
  let receiver: Receiver;
  beforeAll(async () => {
    server = await startTestServer({ store });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });

  it("answers the Prometheus text format with the process defaults and Ferry's metrics", async () => {
    const res = await httpCall(server.url, "GET", "/metrics", { token: null });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parseMetrics(res.text);
    expect(metricValue(samples, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    for (const name of ["ferry_messages", "ferry_dlq_size", "ferry_delivery_lag_seconds", "ferry_queue_lag_messages"]) {
      expect(samples.some((s) => s.name === name), name).toBe(true);
    }
  });

  it("counts a publish and its delivery, the attempt, the commit and the HTTP request", async () => {
    const account = (await server.ferry.services.store.accountGetByToken({ token: server.token }))!.id;
    const before = await scrape(server.url);
    const res = await server.call("POST", `/v2/publish/${receiver.url("/m/ok")}`, { body: "x" });
    expect(res.status).toBe(200);
    await receiver.next();
    const after = await eventually(async () => {
      const s = await scrape(server.url);
      const delivered = (x: typeof s) => metricValue(x, "ferry_deliveries_total", { account, outcome: "delivered" });
      expect(delivered(s) - delivered(before)).toBe(1);
      return s;
    });
    const diff = (name: string, labels: Record<string, string> = {}) =>
      metricValue(after, name, labels) - metricValue(before, name, labels);
    expect(diff("ferry_publishes_total", { account, outcome: "accepted" })).toBe(1);
    expect(diff("ferry_delivery_attempt_duration_seconds_count", { outcome: "delivered" })).toBe(1);
    expect(diff("ferry_publish_to_first_attempt_seconds_count")).toBe(1);
    expect(diff("ferry_store_commit_batch_size_count")).toBeGreaterThanOrEqual(1);
    expect(diff("ferry_store_commit_duration_seconds_count")).toBeGreaterThanOrEqual(1);
    expect(diff("ferry_http_requests_total", { route: "/v2/publish/*", method: "POST", status: "200" })).toBe(1);
    // Labels never carry a URL, a token or a body.
    const text = (await httpCall(server.url, "GET", "/metrics", {})).text;
    for (const secret of [receiver.url("/m/ok"), server.token, "/m/ok"]) expect(text).not.toContain(secret);
  });

  it("counts refusals and duplicates, and reads delayed messages, the DLQ and the delivery lag from the store", async () => {
    const account = (await server.ferry.services.store.accountGetByToken({ token: server.token }))!.id;
    const before = await scrape(server.url);
    const refused = await server.call("POST", `/v2/publish/${receiver.url("/m/bad")}`, {
      body: "x",
      headers: { "svc-retries": "many" },
    });
    expect(refused.status).toBe(400);
    const dedup = { "svc-deduplication-id": "m-dup" };
    await server.call("POST", `/v2/publish/${receiver.url("/m/dup")}`, { body: "d", headers: dedup });
    await server.call("POST", `/v2/publish/${receiver.url("/m/dup")}`, { body: "d", headers: dedup });
    const delayed = await server.call("POST", `/v2/publish/${receiver.url("/m/later")}`, {
      body: "later",
      headers: { "svc-delay": "1h" },
    });
    expect(delayed.status).toBe(200);
    // By path, not by order: the duplicate's delivery may still be on its way when this message is sent.
    receiver.setDefault((url) => (url === "/m/fail" ? { status: 500, body: "no" } : { status: 200, body: "ok" }));
    await server.call("POST", `/v2/publish/${receiver.url("/m/fail")}`, {
      body: "f",
      headers: { "svc-retries": "0" },
    });
    const after = await eventually(async () => {
      const s = await scrape(server.url);
      expect(metricValue(s, "ferry_dlq_entries_total", { account }) - metricValue(before, "ferry_dlq_entries_total", { account })).toBe(1);
      expect(metricValue(s, "ferry_dlq_size")).toBeGreaterThanOrEqual(1);
      expect(metricValue(s, "ferry_messages", { state: "delayed" })).toBeGreaterThanOrEqual(1);
      return s;
    }, 10_000);
    const diff = (name: string, labels: Record<string, string>) =>
      metricValue(after, name, labels) - metricValue(before, name, labels);
    expect(diff("ferry_deliveries_total", { account, outcome: "failed" })).toBe(1);
    expect(diff("ferry_publishes_total", { account, outcome: "duplicate" })).toBe(1);
    expect(diff("ferry_publishes_total", { account, outcome: "refused", reason: "invalid_input" })).toBe(1);
    expect(metricValue(after, "ferry_delivery_lag_seconds")).toBeGreaterThanOrEqual(0);
  });
});

describe("FERRY_METRICS_TOKEN", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { FERRY_METRICS_TOKEN: "metrics-token-0123456789" } });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("is required as a Bearer token when set", async () => {
    const none = await httpCall(server.url, "GET", "/metrics", {});
    expect(none.status).toBe(401);
    expect(none.json.error).toMatch(/^invalid authorization/);
    expect((await httpCall(server.url, "GET", "/metrics", {}, server.token)).status).toBe(401);
    expect((await httpCall(server.url, "GET", "/metrics", {}, "metrics-token-0123456789")).status).toBe(200);
  });
});

describe("docs/metrics.md", () => {
  it("lists every metric Ferry registers", async () => {
    const doc = readFileSync(new URL("../../docs/metrics.md", import.meta.url), "utf8");
    const { threadRegistry } = await import("../../src/metrics/registry.js");
    await import("../../src/metrics/metrics.js");
    const names = (await threadRegistry.getMetricsAsJSON()).map((m) => m.name).filter((n) => n.startsWith("ferry_"));
    expect(names.length).toBeGreaterThan(15);
    for (const name of names) expect(doc, name).toContain(`\`${name}\``);
  });
});
