import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * `GET /v2/messages` (docs/messaging.md "Listing messages"): one entry per message with its current state, on a real
 * Ferry (SQLite, or PostgreSQL with FERRY_TEST_STORE=postgres) delivering to a real receiver. Each state is reached
 * the way a publisher reaches it: a delay, a FIFO queue behind a delayed message, a flow-control rate, a retry, the
 * DLQ, a cancel.
 */
let server: TestServer;
let receiver: Receiver;
const json = { "Content-Type": "application/json" };
const HOUR = 3_600_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the wire's JSON; each test asserts the fields it reads
type Entry = Record<string, any>;

async function list(query = ""): Promise<{ messages: Entry[]; cursor?: string }> {
  const r = await server.call("GET", `/v2/messages${query ? `?${query}` : ""}`);
  expect(r.status, r.text).toBe(200);
  return r.json;
}

async function publish(path: string, headers: Record<string, string> = {}, body = "{}"): Promise<string> {
  const r = await server.call("POST", `/v2/publish/${receiver.url(path)}`, { body, headers: { ...json, ...headers } });
  expect(r.status, r.text).toBe(200);
  return r.json.messageId as string;
}

/** Polls the list (bounded) until `check` holds for the entry of `id`. */
async function entryOf(id: string, check: (e: Entry) => boolean, what: string): Promise<Entry> {
  const deadline = Date.now() + 15_000;
  let last: Entry | undefined;
  while (Date.now() < deadline) {
    last = (await list(`messageId=${id}`)).messages[0];
    if (last && check(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${id} never ${what}: ${JSON.stringify(last)}`);
}

const ids: Record<string, string> = {};
let startedAt = 0;

beforeAll(async () => {
  [server, receiver] = await Promise.all([startTestServer(), Receiver.start()]);
  receiver.setDefault((url) =>
    url.startsWith("/fail")
      ? { status: 503, body: "down" }
      : url.startsWith("/slow")
        ? { status: 200, body: "late", delayMs: 1500 }
        : { status: 200, body: "ok" },
  );
  startedAt = Date.now();
  ids.delivered = await publish("/ok", { "Svc-Label": "shop" }, '{"big":"' + "x".repeat(5000) + '"}');
  ids.delayed = await publish("/later", { "Svc-Delay": "1h", "Svc-Label": "shop" });
  ids.failed = await publish("/fail/now", { "Svc-Retries": "0" });
  ids.retrying = await publish("/fail/again", { "Svc-Retries": "3", "Svc-Retry-Delay": String(HOUR) });
  // A FIFO queue of parallelism 1: the delayed head holds its place, so the one behind it waits for a slot.
  expect((await server.call("POST", "/v2/queues", { body: '{"queueName":"orders","parallelism":1}', headers: json })).status).toBe(200);
  const enqueue = async (path: string, headers: Record<string, string>) => {
    const r = await server.call("POST", `/v2/enqueue/orders/${receiver.url(path)}`, { body: "{}", headers: { ...json, ...headers } });
    expect(r.status, r.text).toBe(200);
    return r.json.messageId as string;
  };
  ids.queueHead = await enqueue("/queued/1", { "Svc-Delay": "1h" });
  ids.queued = await enqueue("/queued/2", {});
  // A flow-control key with one delivery an hour: the second message waits for the window.
  const flow = { "Svc-Flow-Control-Key": "tenant-1", "Svc-Flow-Control-Value": "rate=1, period=1h" };
  ids.flowFirst = await publish("/flow/1", flow);
  await receiver.waitForPath("/flow/1");
  ids.flowWaiting = await publish("/flow/2", flow);
  ids.canceled = await publish("/never", { "Svc-Delay": "1h" });
  expect((await server.call("DELETE", `/v2/messages/${ids.canceled}`)).status).toBe(200);
  expect((await server.call("POST", "/v2/topics/billing/endpoints", {
    body: JSON.stringify({ endpoints: [{ url: receiver.url("/group/a") }] }),
    headers: json,
  })).status).toBe(200);
  const group = await server.call("POST", "/v2/publish/billing", { body: "{}", headers: json });
  expect(group.status, group.text).toBe(200);
  ids.grouped = group.json[0].messageId as string;
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await receiver?.close();
});

describe("GET /v2/messages", () => {
  it("answers one entry per message with its current state, attempts, last status and destination", async () => {
    const delivered = await entryOf(ids.delivered!, (e) => e.state === "DELIVERED", "DELIVERED");
    expect(delivered).toMatchObject({ url: receiver.url("/ok"), attempts: 1, lastResponseStatus: 200, labels: ["shop"] });
    expect(delivered.createdAt).toBeGreaterThanOrEqual(startedAt);
    expect(delivered.finishedAt).toBeGreaterThanOrEqual(delivered.createdAt);
    // The list never carries a body, only its size.
    expect(delivered).not.toHaveProperty("body");
    expect(delivered).not.toHaveProperty("bodyBase64");
    expect(delivered.bodySize).toBe(5010);

    const delayed = await entryOf(ids.delayed!, (e) => e.state === "DELAYED", "DELAYED");
    expect(delayed.attempts).toBe(0);
    expect(delayed.nextDeliveryTime).toBeGreaterThan(Date.now() + HOUR - 60_000);

    const failed = await entryOf(ids.failed!, (e) => e.state === "FAILED", "FAILED");
    expect(failed).toMatchObject({ attempts: 1, lastResponseStatus: 503 });

    const retrying = await entryOf(ids.retrying!, (e) => e.state === "RETRY", "RETRY");
    expect(retrying).toMatchObject({ attempts: 1, lastResponseStatus: 503 });
    expect(retrying.nextDeliveryTime).toBeGreaterThan(Date.now() + HOUR - 60_000);

    expect(await entryOf(ids.queueHead!, (e) => e.state === "DELAYED", "DELAYED")).toMatchObject({ queueName: "orders" });
    expect(await entryOf(ids.queued!, (e) => e.state === "QUEUED", "QUEUED")).toMatchObject({ queueName: "orders", attempts: 0 });

    await entryOf(ids.flowFirst!, (e) => e.state === "DELIVERED", "DELIVERED");
    const waiting = await entryOf(ids.flowWaiting!, (e) => e.state === "FLOW_CONTROL", "FLOW_CONTROL");
    expect(waiting).toMatchObject({ flowControlKey: "tenant-1", waitReason: "flowControlKey", attempts: 0 });

    expect(await entryOf(ids.canceled!, (e) => e.state === "CANCELED", "CANCELED")).toMatchObject({ attempts: 0 });
    expect(await entryOf(ids.grouped!, (e) => e.state === "DELIVERED", "DELIVERED")).toMatchObject({
      topicName: "billing",
      url: receiver.url("/group/a"),
    });
  });

  it("shows an attempt in flight as ACTIVE, and a cancel asked during it until the attempt ends", async () => {
    const id = await publish("/slow");
    await entryOf(id, (e) => e.state === "ACTIVE", "ACTIVE");
    expect((await server.call("DELETE", `/v2/messages/${id}`)).status).toBe(200);
    expect(await entryOf(id, (e) => e.state === "ACTIVE", "ACTIVE")).toMatchObject({ cancelRequested: true, attempts: 0 });
    // The attempt was answered 200: it ends DELIVERED (docs/states.md), and the request no longer shows.
    const ended = await entryOf(id, (e) => e.state !== "ACTIVE", "ended");
    expect(ended).toMatchObject({ state: "DELIVERED", attempts: 1, lastResponseStatus: 200 });
    expect(ended).not.toHaveProperty("cancelRequested");
  });

  it("filters by state, label, destination URL, URL group, queue, message id and created time", async () => {
    await entryOf(ids.delivered!, (e) => e.state === "DELIVERED", "DELIVERED");
    await entryOf(ids.retrying!, (e) => e.state === "RETRY", "RETRY");
    const idsOf = async (query: string) => (await list(query)).messages.map((e) => e.messageId as string);

    expect(await idsOf("state=RETRY")).toEqual([ids.retrying]);
    expect(await idsOf("state=DELAYED")).toEqual([ids.queueHead, ids.delayed]);
    // Several values of one filter are any of them; different filters all hold.
    expect(new Set(await idsOf("state=FAILED,RETRY"))).toEqual(new Set([ids.failed, ids.retrying]));
    expect(await idsOf("state=cancelled")).toEqual([ids.canceled]);
    expect(await idsOf("label=shop")).toEqual([ids.delayed, ids.delivered]);
    expect(await idsOf("label=shop&state=DELIVERED")).toEqual([ids.delivered]);
    expect(await idsOf(`url=${encodeURIComponent(receiver.url("/fail/now"))}`)).toEqual([ids.failed]);
    expect(await idsOf("topicName=billing")).toEqual([ids.grouped]);
    expect(await idsOf("queueName=orders")).toEqual([ids.queued, ids.queueHead]);
    expect(await idsOf("queueName=orders&state=QUEUED")).toEqual([ids.queued]);
    expect(await idsOf(`messageId=${ids.failed}`)).toEqual([ids.failed]);
    expect(await idsOf(`messageIds=${ids.failed},${ids.delivered}`)).toEqual([ids.failed, ids.delivered]);
    expect(await idsOf("scheduleId=scd_none")).toEqual([]);
    expect(await idsOf(`toDate=${startedAt - 1}`)).toEqual([]);
    const all = await idsOf("");
    expect(await idsOf(`fromDate=${startedAt}&toDate=${Date.now()}`)).toEqual(all);
    // Read-only token: the list only reads.
    const readOnly = await server.call("GET", "/v2/messages?state=FAILED", { token: server.ferry.bootstrap.account.readOnlyToken! });
    expect(readOnly.status).toBe(200);
    expect(readOnly.json.messages.map((e: Entry) => e.messageId)).toEqual([ids.failed]);
  });

  it("pages by message, newest first, with a cursor that new messages do not move", async () => {
    const paged: string[] = [];
    for (let i = 0; i < 5; i++) paged.push(await publish(`/page/${i}`, { "Svc-Label": "paged" }));
    const first = await list("label=paged&count=2");
    expect(first.messages.map((e) => e.messageId)).toEqual([paged[4], paged[3]]);
    expect(first.cursor).toMatch(/^\d+$/);
    // A message published between two pages shows on the first page of a new walk, never on the next page.
    const newer = await publish("/page/new", { "Svc-Label": "paged" });
    const second = await list(`label=paged&count=2&cursor=${first.cursor}`);
    expect(second.messages.map((e) => e.messageId)).toEqual([paged[2], paged[1]]);
    const third = await list(`label=paged&count=2&cursor=${second.cursor}`);
    expect(third.messages.map((e) => e.messageId)).toEqual([paged[0]]);
    expect(third.cursor).toBeUndefined();
    expect((await list("label=paged&count=1")).messages[0]!.messageId).toBe(newer);
    const oldest = await list("label=paged&count=2&order=earliestFirst");
    expect(oldest.messages.map((e) => e.messageId)).toEqual([paged[0], paged[1]]);
  });

  it("refuses each bad filter with a 400 naming it", async () => {
    const cases: [string, string][] = [
      ["state=NOPE", "state"],
      ["state=DELIVERED,SOON", "state"],
      ["count=0", "count"],
      ["count=1001", "count"],
      ["count=many", "count"],
      ["cursor=abc", "cursor"],
      ["cursor=-1", "cursor"],
      ["fromDate=yesterday", "fromDate"],
      ["toDate=1.5", "toDate"],
      ["fromDate=2000&toDate=1000", "toDate"],
      ["order=random", "order"],
      ["colour=blue", "colour"],
    ];
    for (const [query, field] of cases) {
      const r = await server.call("GET", `/v2/messages?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.json.error, query).toContain(`invalid ${field}`);
    }
    expect((await server.call("GET", "/v2/messages", { token: "wrong" })).status).toBe(401);
  });

  it("answers in either dialect's names, like every messaging route", async () => {
    for (const key of ["svc_token", "qstash_token"]) {
      const r = await server.call("GET", `/v2/messages?state=FAILED&${key}=${encodeURIComponent(server.token)}`, { token: null });
      expect(r.status, key).toBe(200);
      expect(r.json.messages.map((e: Entry) => e.messageId), key).toEqual([ids.failed]);
    }
  });
});
