import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { OffsetClock } from "../../src/domain/clock.js";
import { newMessageId } from "../../src/domain/ids.js";
import { eventually } from "../helpers/eventually.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Retry and replay of one message (docs/messaging.md "Retry and replay") and the DLQ's causes and count
 * (docs/dlq.md), against a real Ferry and real receivers; on PostgreSQL with FERRY_TEST_STORE=postgres.
 */
const clock = new OffsetClock();
let server: TestServer;
let dest: Receiver;

beforeAll(async () => {
  [server, dest] = await Promise.all([
    startTestServer({ clock, env: { FERRY_LOG_RETENTION_MS: "60000" } }),
    Receiver.start(),
  ]);
});
afterAll(async () => {
  await server.stop();
  await dest.close();
});
afterEach(() => {
  dest.setDefault({ status: 200, body: "ok" });
});

const readOnly = () => server.ferry.bootstrap.account.readOnlyToken!;

async function publish(path: string, headers: Record<string, string>, body = '{"n":1}'): Promise<string> {
  const res = await server.call("POST", `/v2/publish/${dest.url(path)}`, { headers, body });
  expect(res.status).toBe(200);
  return res.json.messageId as string;
}

async function states(id: string): Promise<string[]> {
  const logs = await server.call("GET", `/v2/logs?messageId=${id}&order=earliestFirst`);
  return logs.json.logs.map((l: { state: string }) => l.state);
}

async function until(id: string, state: string): Promise<void> {
  await eventually(async () => expect(await states(id)).toContain(state), 15_000);
}

/** A port nothing listens on: bound, then closed again. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe("POST /v2/messages/{id}/replay", () => {
  it("publishes the same request again, linked both ways, and delivers it", async () => {
    const id = await publish("/replay", {
      "Content-Type": "application/json",
      "Svc-Method": "PUT",
      "Svc-Forward-X-Tenant": "acme",
      "Svc-Label": "billing",
      "Svc-Retries": "2",
    });
    await dest.waitForCount(1);
    await until(id, "DELIVERED");
    const replay = await server.call("POST", `/v2/messages/${id}/replay`);
    expect(replay.status).toBe(201);
    const copy = replay.json.messageId as string;
    expect(copy).not.toBe(id);
    expect(replay.json.replayOf).toBe(id);
    const [first, second] = await dest.waitForCount(2);
    expect(second!.method).toBe("PUT");
    expect(second!.text).toBe('{"n":1}');
    expect(second!.headers["x-tenant"]).toBe("acme");
    expect(second!.headers["content-type"]).toBe("application/json");
    expect(second!.headers["svc-message-id"]).toBe(copy);
    expect(first!.headers["svc-message-id"]).toBe(id);
    await until(copy, "DELIVERED");
    const created = (await server.call("GET", `/v2/logs?messageId=${copy}&state=CREATED`)).json.logs[0];
    expect(created).toMatchObject({ labels: ["billing"], maxRetries: 2, method: "PUT" });

    const mine = await server.call("GET", `/v2/messages/${copy}/actions`);
    expect(mine.json).toMatchObject({ messageId: copy, state: "DELIVERED", replayOf: id, replays: [] });
    const original = await server.call("GET", `/v2/messages/${id}/actions`, { token: readOnly() });
    expect(original.status).toBe(200);
    expect(original.json.replays.map((r: { messageId: string }) => r.messageId)).toEqual([copy]);
    expect(original.json.replay).toEqual({ allowed: true });
    expect(original.json.retry.allowed).toBe(false);
    expect(original.json.retry.reason).toContain("delivered");
  });

  it("keeps the publisher's dialect: a message published with Upstash- names is replayed in them", async () => {
    const res = await server.call("POST", `/v2/publish/${dest.url("/upstash")}`, {
      headers: { "Upstash-Forward-X-Kind": "sdk", "Upstash-Retries": "0" },
      body: "hello",
    });
    const id = res.json.messageId as string;
    await until(id, "DELIVERED");
    const before = dest.requests.length;
    const replay = await server.call("POST", `/v2/messages/${id}/replay`);
    expect(replay.status).toBe(201);
    const [request] = (await dest.waitForCount(before + 1)).slice(before);
    expect(request!.headers["upstash-message-id"]).toBe(replay.json.messageId);
    expect(request!.headers["x-kind"]).toBe("sdk");
    expect(request!.text).toBe("hello");
  });

  it("a failed message is replayed from its row; configuration headers of the replay override the original's", async () => {
    dest.setDefault((url) => (url.startsWith("/fails") ? { status: 500, body: "no" } : { status: 200, body: "ok" }));
    const id = await publish("/fails", { "Svc-Retries": "0" });
    await until(id, "FAILED");
    const replay = await server.call("POST", `/v2/messages/${id}/replay`, { headers: { "Svc-Retries": "1" } });
    expect(replay.status).toBe(201);
    const copy = replay.json.messageId as string;
    const created = (await server.call("GET", `/v2/logs?messageId=${copy}&state=CREATED`)).json.logs[0];
    expect(created.maxRetries).toBe(1);
    const bad = await server.call("POST", `/v2/messages/${id}/replay`, { headers: { "Svc-Retries": "many" } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toContain("Svc-Retries");
  });

  it("refuses an unknown id (404 naming it), an unknown key (400), and the read-only token (403)", async () => {
    const unknown = await server.call("POST", "/v2/messages/msg_nope/replay");
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toBe("message msg_nope not found");
    const id = await publish("/ro", {});
    const key = await server.call("POST", `/v2/messages/${id}/replay?force=1`);
    expect(key.status).toBe(400);
    expect(key.json.error).toContain("force");
    const ro = await server.call("POST", `/v2/messages/${id}/replay`, { token: readOnly() });
    expect(ro.status).toBe(403);
    const roRetry = await server.call("POST", `/v2/messages/${id}/retry`, { token: readOnly() });
    expect(roRetry.status).toBe(403);
    const actions = await server.call("GET", "/v2/messages/msg_nope/actions");
    expect(actions.status).toBe(404);
    expect(actions.json.error).toBe("message msg_nope not found");
  });
});

describe("a request that is no longer kept", () => {
  it("a delivered message published with Redact-Fields keeps only its log: 410 saying so", async () => {
    const id = await publish("/redacted", { "Svc-Redact-Fields": "body" });
    await until(id, "DELIVERED");
    const gone = await server.call("POST", `/v2/messages/${id}/replay`);
    expect(gone.status).toBe(410);
    expect(gone.json.error).toBe(
      `message ${id} ended and its request is no longer kept (a message published with Redact-Fields keeps only its log)`,
    );
    // Its page still reads what it may do: nothing, and why.
    const actions = await server.call("GET", `/v2/messages/${id}/actions`);
    expect(actions.status).toBe(200);
    expect(actions.json.replay).toEqual({ allowed: false, reason: gone.json.error });
    expect(actions.json.state).toBeUndefined();
  });
});

describe("POST /v2/messages/{id}/retry", () => {
  it("a failed message: its DLQ entry is retried as a new message", async () => {
    let failing = true;
    dest.setDefault((url) => (url.startsWith("/dlq-retry") && failing ? { status: 503, body: "down" } : { status: 200, body: "ok" }));
    const id = await publish("/dlq-retry", { "Svc-Retries": "0" });
    await until(id, "FAILED");
    const dlqId = (await server.call("GET", `/v2/dlq?messageId=${id}`)).json.messages[0].dlqId as string;
    const actions = await server.call("GET", `/v2/messages/${id}/actions`);
    expect(actions.json.retry).toEqual({ allowed: true, kind: "dlq", dlqId });
    failing = false;
    const retried = await server.call("POST", `/v2/messages/${id}/retry`);
    expect(retried.status).toBe(201);
    expect(retried.json).toMatchObject({ action: "dlqRetry", dlqId });
    await until(retried.json.messageId as string, "DELIVERED");
    expect((await server.call("GET", `/v2/dlq?messageId=${id}`)).json.messages).toEqual([]);
    // The entry is gone now: a second retry says so, and offers the replay.
    const again = await server.call("POST", `/v2/messages/${id}/retry`);
    expect(again.status).toBe(409);
    expect(again.json.error).toBe(
      `message ${id} cannot be retried: its DLQ entry is gone (retried, deleted or past the DLQ retention); replay it instead`,
    );
  });

  it("a message waiting out its retry backoff is attempted now", async () => {
    let calls = 0;
    dest.setDefault((url) => (url.startsWith("/backoff") && calls++ === 0 ? { status: 500, body: "once" } : { status: 200, body: "ok" }));
    const id = await publish("/backoff", { "Svc-Retries": "3", "Svc-Retry-Delay": "3600000" });
    await until(id, "RETRY");
    const actions = await server.call("GET", `/v2/messages/${id}/actions`);
    expect(actions.json.state).toBe("RETRY");
    expect(actions.json.retry).toMatchObject({ allowed: true, kind: "deliverNow" });
    expect(actions.json.retry.dueAt).toBeGreaterThan(Date.now() + 3_000_000);
    const now = await server.call("POST", `/v2/messages/${id}/retry`);
    expect(now.status).toBe(200);
    expect(now.json).toEqual({ messageId: id, action: "deliverNow" });
    await until(id, "DELIVERED");
  });

  it("refuses other states with what the message waits for (409), and an unknown id (404)", async () => {
    const delayed = await publish("/delayed", { "Svc-Delay": "1h" });
    const refused = await server.call("POST", `/v2/messages/${delayed}/retry`);
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatch(/cannot be retried: it has not been attempted yet: it waits for its delay until 20/);
    const recent = newMessageId(Date.now());
    const unknown = await server.call("POST", `/v2/messages/${recent}/retry`);
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toBe(`message ${recent} not found`);
    // A well-formed id from 2016, long past the retention: its request is gone rather than unknown.
    const old = await server.call("POST", "/v2/messages/msg_01ARZ3NDEKTSV4RRFFQ69G5FAV/retry");
    expect(old.status).toBe(410);
    expect(old.json.error).toContain("older than the log retention");
    await server.call("DELETE", `/v2/messages/${delayed}`);
  });
});

describe("the DLQ's causes and count", () => {
  it("names a refused connection, a timeout and a 500 with the start of its body; counts by filter", async () => {
    await server.call("DELETE", "/v2/dlq");
    const port = await closedPort();
    const refused = await server.call("POST", `/v2/publish/http://127.0.0.1:${port}/gone`, {
      headers: { "Svc-Retries": "0", "Svc-Label": "causes" },
      body: "x",
    });
    dest.setDefault((url) =>
      url.startsWith("/slow")
        ? { status: 200, body: "late", delayMs: 3000 }
        : url.startsWith("/err")
          ? { status: 500, body: `{"error":"database down"}${" pad".repeat(100)}` }
          : { status: 200, body: "ok" },
    );
    const slow = await publish("/slow", { "Svc-Retries": "0", "Svc-Timeout": "1s", "Svc-Label": "causes" });
    const err = await publish("/err", { "Svc-Retries": "0" });
    const ids = [refused.json.messageId as string, slow, err];
    const entries = await eventually(async () => {
      const list = await server.call("GET", "/v2/dlq");
      expect(list.json.messages).toHaveLength(3);
      return list.json.messages as { messageId: string; responseStatus: number; failureCause: { kind: string; summary: string; error?: string }; failedAt: number }[];
    }, 15_000);
    const by = (id: string) => entries.find((e) => e.messageId === id)!;
    expect(by(ids[0]!).responseStatus).toBe(0);
    expect(by(ids[0]!).failureCause).toMatchObject({ kind: "refused", summary: "Connection refused" });
    expect(by(ids[0]!).failureCause.error).toContain("ECONNREFUSED");
    expect(by(slow).failureCause).toMatchObject({ kind: "timeout", summary: "Timed out" });
    expect(by(err).failureCause.kind).toBe("http");
    expect(by(err).failureCause.summary).toMatch(/^HTTP 500: \{"error":"database down"\} pad/);
    expect(by(err).failureCause.summary.length).toBeLessThan(140);
    expect(by(err).failedAt).toBeGreaterThan(0);
    // One entry on its own has the same fields.
    const one = await server.call("GET", `/v2/dlq/${(by(err) as unknown as { dlqId: string }).dlqId}`);
    expect(one.json.failureCause).toEqual(by(err).failureCause);

    expect((await server.call("GET", "/v2/dlq/count")).json).toEqual({ count: 3 });
    expect((await server.call("GET", "/v2/dlq/count?label=causes", { token: readOnly() })).json).toEqual({ count: 2 });
    expect((await server.call("GET", "/v2/dlq/count?responseStatus=500")).json).toEqual({ count: 1 });
    const bad = await server.call("GET", "/v2/dlq/count?cursor=1");
    expect(bad.status).toBe(400);
    expect(bad.json.error).toContain("cursor");
  });
});

// Last: retention records its cutoff (the log horizon), which hides the derived entries of the messages made before
// it, so no test may follow it on this server (docs/states.md "Retention").
describe("past retention", () => {
  it("answers 410 for a message past the log retention: its body is gone", async () => {
    const id = await publish("/old", {});
    await until(id, "DELIVERED");
    clock.offsetMs = 5 * 60_000; // past FERRY_LOG_RETENTION_MS (60 s)
    try {
      await server.ferry.loops.retention!.runOnce();
      expect(await states(id)).toEqual([]);
      const gone = await server.call("POST", `/v2/messages/${id}/replay`);
      expect(gone.status).toBe(410);
      expect(gone.json.error).toContain(`message ${id} is older than the log retention`);
      const retry = await server.call("POST", `/v2/messages/${id}/retry`);
      expect(retry.status).toBe(410);
    } finally {
      clock.offsetMs = 0;
    }
  });
});
