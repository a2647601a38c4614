import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminEnv, manage } from "../helpers/management.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * The read-only token (docs/errors.md "Read-only token") against every route the messaging scope registered.
 * `READ` lists the routes it may call; every other registered messaging route must refuse it with 403. A route
 * that is in neither list fails the test, so a new route cannot be added without deciding.
 */
const READ = new Set([
  "GET /v2/messages",
  "GET /v2/messages/:id",
  "GET /v2/events",
  "GET /v2/logs",
  "GET /v2/dlq",
  "GET /v2/dlq/:dlqId",
  "GET /v2/dlq/count",
  "GET /v2/messages/:id/actions",
  "GET /v2/schedules",
  "GET /v2/schedules/:id",
  "GET /v2/queues",
  "GET /v2/queues/:name",
  "GET /v2/topics",
  "GET /v2/topics/:name",
  "GET /v2/flowControl",
  "GET /v2/flowControl/:key",
  "GET /v2/globalParallelism",
  "GET /v2/account",
  "GET /v2/account/stats",
  "GET /v2/account/health",
  "GET /v2/account/queue-throughput",
  "GET /v2/workflows/runs/:id",
  "GET /v2/waiters/:eventId",
  "GET /v2/workflows/events",
]);

const WRITE = new Set([
  "POST /v2/publish/*",
  "POST /v2/enqueue/*",
  "POST /v2/batch",
  "DELETE /v2/messages/:id",
  "DELETE /v2/messages",
  "GET /v2/keys", // signing keys are secrets
  "POST /v2/keys/rotate",
  "DELETE /v2/dlq/:dlqId",
  "DELETE /v2/dlq",
  "POST /v2/dlq/retry/:dlqId",
  "POST /v2/dlq/retry",
  "POST /v2/messages/:id/retry",
  "POST /v2/messages/:id/replay",
  "POST /v2/schedules/*",
  "POST /v2/schedules",
  "DELETE /v2/schedules/:id",
  "POST /v2/schedules/:id/pause",
  "PATCH /v2/schedules/:id/pause",
  "POST /v2/schedules/:id/resume",
  "PATCH /v2/schedules/:id/resume",
  "POST /v2/schedules/:id/trigger",
  "POST /v2/topics/:name/endpoints",
  "DELETE /v2/topics/:name/endpoints",
  "DELETE /v2/topics/:name",
  "PATCH /v2/topics/:name",
  "POST /v2/queues",
  "DELETE /v2/queues/:name",
  "POST /v2/queues/:name/pause",
  "POST /v2/queues/:name/resume",
  "POST /v2/flowControl/:key/reset",
  "POST /v2/flowControl/:key/resetRate",
  "POST /v2/flowControl/:key/pause",
  "POST /v2/flowControl/:key/resume",
  "POST /v2/flowControl/:key/pin",
  "POST /v2/flowControl/:key/unpin",
  "DELETE /v2/workflows/runs/:id",
  "DELETE /v2/workflows/runs",
  "POST /v2/wait/:eventId",
  "POST /v2/notify/:eventId",
  "POST /v2/notify/:runId/:eventId",
  "POST /v2/workflows/dlq/resume",
  "POST /v2/workflows/dlq/resume/:dlqId",
  "POST /v2/workflows/dlq/restart",
  "POST /v2/workflows/dlq/restart/:dlqId",
  "POST /v2/workflows/dlq/callback/:dlqId",
  "DELETE /v2/workflows/dlq",
  "DELETE /v2/workflows/dlq/:dlqId",
  "POST /v2/trigger/*",
]);

/** HEAD routes are Fastify's automatic twins of GET routes: they follow their GET route. */
const expected = (method: string, url: string): "read" | "write" | undefined => {
  const key = `${method === "HEAD" ? "GET" : method} ${url}`;
  return READ.has(key) ? "read" : WRITE.has(key) ? "write" : undefined;
};

/** A concrete path for a route pattern: parameters get a made-up value, a wildcard a loopback destination. */
const concrete = (url: string) =>
  url.replace(/:[A-Za-z]+/g, "ro-test").replace("*", "http://127.0.0.1:9/ro-test");

let server: TestServer;
let readOnlyToken: string;

beforeAll(async () => {
  server = await startTestServer({ env: adminEnv });
  readOnlyToken = server.ferry.bootstrap.account.readOnlyToken!;
});
afterAll(async () => {
  await server.stop();
});

describe("read-only token", () => {
  it("every registered messaging route is classified, and the lists name only registered routes", () => {
    const routes = server.ferry.app.messagingRoutes;
    expect(routes.length).toBeGreaterThan(READ.size + WRITE.size);
    const unknown = routes.filter((r) => expected(r.method, r.url) === undefined).map((r) => `${r.method} ${r.url}`);
    expect(unknown, "routes to classify in READ or WRITE").toEqual([]);
    const registered = new Set(routes.map((r) => `${r.method} ${r.url}`));
    for (const key of [...READ, ...WRITE]) expect(registered.has(key), key).toBe(true);
    // The marker on the route agrees with the table.
    for (const r of routes) {
      expect(r.readOnlyAllowed, `${r.method} ${r.url}`).toBe(expected(r.method, r.url) === "read");
    }
  });

  it("walks every messaging route: reads answer, everything else is 403 saying the token is read-only", async () => {
    const failures: string[] = [];
    for (const route of server.ferry.app.messagingRoutes) {
      const res = await server.call(route.method, concrete(route.url), {
        token: readOnlyToken,
        headers: { "content-type": "application/json" },
        ...(route.method === "GET" || route.method === "HEAD" ? {} : { body: "{}" }),
      });
      const kind = expected(route.method, route.url);
      const label = `${route.method} ${route.url} → ${res.status} ${res.text}`;
      if (kind === "read" && (res.status === 403 || res.status === 401)) failures.push(label);
      if (kind === "write") {
        const says = route.method === "HEAD" || /read-only token/.test(String(res.json?.error));
        if (res.status !== 403 || !says) failures.push(label);
      }
    }
    expect(failures).toEqual([]);
  });

  it("reads real data as Bearer and as the token query parameter; writes leave state untouched", async () => {
    const published = await server.call("POST", "/v2/publish/http://127.0.0.1:9/ro?x=1", {
      headers: { "Svc-Delay": "1h" },
      body: "b",
    });
    expect(published.status).toBe(200);
    const id = published.json.messageId as string;

    const bearer = await server.call("GET", `/v2/messages/${id}`, { token: readOnlyToken });
    expect(bearer.status).toBe(200);
    expect(bearer.json.messageId).toBe(id);
    const byQuery = await server.call("GET", `/v2/messages/${id}?svc_token=${encodeURIComponent(readOnlyToken)}`, {
      token: null,
    });
    expect(byQuery.status).toBe(200);
    expect(byQuery.json.messageId).toBe(id);
    const logs = await server.call("GET", `/v2/logs?messageId=${id}&svc_token=${encodeURIComponent(readOnlyToken)}`, {
      token: null,
    });
    expect(logs.status).toBe(200);
    expect(logs.json.logs.length).toBeGreaterThan(0);

    const cancel = await server.call("DELETE", `/v2/messages/${id}?svc_token=${encodeURIComponent(readOnlyToken)}`, {
      token: null,
    });
    expect(cancel.status).toBe(403);
    expect(cancel.json.error).toMatch(/read-only token/);
    expect((await server.call("GET", `/v2/messages/${id}`)).status).toBe(200);

    const publish = await server.call("POST", "/v2/publish/http://127.0.0.1:9/ro", { token: readOnlyToken, body: "b" });
    expect(publish.status).toBe(403);
    const keys = await server.call("GET", "/v2/keys", { token: readOnlyToken });
    expect(keys.status).toBe(403);
    expect(keys.text).not.toContain("sig_");
  });

  it("is shown in the management record, replaced by rotate-token, and the old one is refused", async () => {
    const accountId = server.ferry.bootstrap.account.id;
    const record = await manage(server, "GET", `/v2/msgsvc/user/${accountId}`);
    expect(record.json.read_only_token).toBe(readOnlyToken);
    expect(record.json.read_only_token).not.toBe(record.json.token);

    const rotated = await manage(server, "POST", `/v2/msgsvc/rotate-token/${accountId}`);
    expect(rotated.status).toBe(200);
    const fresh = rotated.json.read_only_token as string;
    expect(fresh).not.toBe(readOnlyToken);
    expect(fresh).not.toBe(rotated.json.token);
    expect((await server.call("GET", "/v2/queues", { token: readOnlyToken })).status).toBe(401);
    expect((await server.call("GET", "/v2/queues", { token: fresh })).status).toBe(200);
    expect((await server.call("POST", "/v2/queues", { token: fresh, body: "{}" })).status).toBe(403);
    // The full token still does everything.
    const full = rotated.json.token as string;
    expect((await server.call("GET", "/v2/keys", { token: full })).status).toBe(200);
  });
});
