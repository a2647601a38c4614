import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { OffsetClock } from "../../src/domain/clock.js";
import { dlqTrimmer } from "../../src/maintenance/dlq-trimmer.js";
import { eventually } from "../helpers/eventually.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const DAY_MS = 86_400_000;
const clock = new OffsetClock();
let server: TestServer;
let dest: Receiver;
/** Answers 200 to everything: a callback target that never adds entries to the DLQ. */
let sink: Receiver;

beforeAll(async () => {
  server = await startTestServer({ clock });
  dest = await Receiver.start();
  sink = await Receiver.start();
});
afterAll(async () => {
  await server.stop();
  await dest.close();
  await sink.close();
});
beforeEach(async () => {
  dest.setDefault({ status: 500, headers: { "x-why": "because" }, body: "bad" });
  expect((await server.call("DELETE", "/v2/dlq")).status).toBe(200);
});
afterEach(() => {
  clock.offsetMs = 0;
});

/** Publishes with no retries to a failing destination and waits until the message is in the DLQ. */
async function failed(
  path: string,
  headers: Record<string, string> = {},
  body = "payload",
): Promise<{ messageId: string; dlqId: string }> {
  const res = await server.call("POST", `/v2/publish/${dest.url(path)}`, {
    headers: { "svc-retries": "0", ...headers },
    body,
  });
  expect(res.status).toBe(200);
  const messageId: string = res.json.messageId;
  const dlqId = await eventually(async () => {
    const list = await server.call("GET", `/v2/dlq?messageId=${messageId}`);
    expect(list.json.messages).toHaveLength(1);
    return list.json.messages[0].dlqId as string;
  });
  return { messageId, dlqId };
}

async function list(query = ""): Promise<{ status: number; ids: string[]; cursor?: string; json: unknown }> {
  const res = await server.call("GET", `/v2/dlq${query}`);
  return {
    status: res.status,
    ids: (res.json.messages ?? []).map((m: { dlqId: string }) => m.dlqId),
    cursor: res.json.cursor,
    json: res.json,
  };
}

describe("DLQ records (reference §3.3)", () => {
  it("a failed message is a message record plus dlqId and the last response", async () => {
    const { messageId, dlqId } = await failed(
      "/rec",
      { "content-type": "text/plain", "svc-forward-x-a": "1", "svc-label": "l1", "svc-callback": sink.url("/cb") },
      "hello",
    );
    const res = await server.call("GET", `/v2/dlq/${dlqId}`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      dlqId,
      messageId,
      url: dest.url("/rec"),
      method: "POST",
      maxRetries: 0,
      header: { "Content-Type": ["text/plain"], "X-A": ["1"] },
      body: "hello",
      label: "l1",
      labels: ["l1"],
      callerIP: "127.0.0.1",
      callback: sink.url("/cb"),
      responseStatus: 500,
      responseHeader: expect.objectContaining({ "X-Why": ["because"] }),
      responseBody: "bad",
    });
    expect(typeof res.json.createdAt).toBe("number");
    expect(typeof res.json.notBefore).toBe("number");
    expect(dlqId).toMatch(/^\d+-\d+$/);
  });

  it("a response body that is not UTF-8 is sent as responseBodyBase64", async () => {
    dest.respondWith({ status: 502, body: Buffer.from([0xff, 0xfe, 0x00]) });
    const { dlqId } = await failed("/bin");
    const res = await server.call("GET", `/v2/dlq/${dlqId}`);
    expect(res.json.responseStatus).toBe(502);
    expect(res.json.responseBodyBase64).toBe(Buffer.from([0xff, 0xfe, 0x00]).toString("base64"));
    expect(res.json.responseBody).toBeUndefined();
  });

  it("an unknown dlqId is a 404", async () => {
    const res = await server.call("GET", "/v2/dlq/123-456");
    expect(res.status).toBe(404);
    expect(res.json.error).toContain("123-456");
  });
});

describe("GET /v2/dlq", () => {
  it("an empty DLQ still answers messages: [] and no cursor", async () => {
    const res = await server.call("GET", "/v2/dlq");
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ messages: [] });
  });

  it("pages with count and cursor, earliest first by default; the last page omits the cursor", async () => {
    const a = await failed("/p");
    const b = await failed("/p");
    const c = await failed("/p");
    const first = await list("?count=2");
    expect(first.ids).toEqual([a.dlqId, b.dlqId]);
    expect(first.cursor).toEqual(expect.any(String));
    const last = await list(`?count=2&cursor=${first.cursor}`);
    expect(last.ids).toEqual([c.dlqId]);
    expect(last.json).not.toHaveProperty("cursor");

    expect((await list("?order=latestFirst")).ids).toEqual([c.dlqId, b.dlqId, a.dlqId]);
    expect((await list("?order=earliestFirst")).ids).toEqual([a.dlqId, b.dlqId, c.dlqId]);
    expect((await list("?count=1000")).ids).toHaveLength(3); // capped at 100, not refused
    expect((await list(`?dlqIds=${a.dlqId}&dlqIds=${c.dlqId}`)).ids).toEqual([a.dlqId, c.dlqId]);
    expect((await list(`?dlqIds=${b.dlqId},${c.dlqId}`)).ids).toEqual([b.dlqId, c.dlqId]);
  });

  it("filters by messageId, url, responseStatus, label, flowControlKey, callerIp and dates", async () => {
    const a = await failed("/fa", { "svc-label": "x" });
    dest.respondWith({ status: 404 });
    const b = await failed("/fb", { "svc-flow-control-key": "k1", "svc-flow-control-value": "parallelism=1" });
    const ids = async (q: string) => (await list(q)).ids;

    expect(await ids(`?messageId=${b.messageId}`)).toEqual([b.dlqId]);
    expect(await ids(`?url=${encodeURIComponent(dest.url("/fa"))}`)).toEqual([a.dlqId]);
    expect(await ids("?responseStatus=404")).toEqual([b.dlqId]);
    expect(await ids("?responseStatus=404&responseStatus=500")).toEqual([a.dlqId, b.dlqId]);
    expect(await ids("?label=x")).toEqual([a.dlqId]);
    expect(await ids("?flowControlKey=k1")).toEqual([b.dlqId]);
    expect(await ids("?callerIp=127.0.0.1")).toEqual([a.dlqId, b.dlqId]);
    expect(await ids("?callerIp=10.9.9.9")).toEqual([]);
    expect(await ids("?topicName=nope")).toEqual([]);
    expect(await ids("?queueName=nope")).toEqual([]);
    expect(await ids("?scheduleId=scd_nope")).toEqual([]);
    expect(await ids("?api=llm")).toEqual([a.dlqId, b.dlqId]); // deprecated, ignored
    const now = Date.now();
    expect(await ids(`?fromDate=${now + 60_000}`)).toEqual([]);
    expect(await ids(`?toDate=${now - 3_600_000}`)).toEqual([]);
    expect(await ids(`?fromDate=${now - 3_600_000}&toDate=${now + 60_000}`)).toEqual([a.dlqId, b.dlqId]);
  });

  it("refuses host, path, unknown keys and bad values with a 400 naming them", async () => {
    for (const [query, field] of [
      ["?host=127.0.0.1", "host"],
      ["?path=/x", "path"],
      ["?urll=x", "urll"],
      ["?responseStatus=abc", "responseStatus"],
      ["?count=0", "count"],
      ["?order=sideways", "order"],
      ["?cursor=abc", "cursor"],
      ["?fromDate=yesterday", "fromDate"],
    ] as const) {
      const res = await server.call("GET", `/v2/dlq${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json.error).toMatch(new RegExp(`^invalid ${field}:`));
    }
  });
});

describe("DELETE", () => {
  it("one entry: 200, then 404 the second time", async () => {
    const { dlqId } = await failed("/d");
    const first = await server.call("DELETE", `/v2/dlq/${dlqId}`);
    expect(first.status).toBe(200);
    expect(first.text).toBe("");
    expect((await server.call("DELETE", `/v2/dlq/${dlqId}`)).status).toBe(404);
    expect((await server.call("GET", `/v2/dlq/${dlqId}`)).status).toBe(404);
  });

  it("bulk by query dlqIds answers 2xx counting only the entries found", async () => {
    const a = await failed("/d");
    const b = await failed("/d");
    const res = await server.call("DELETE", `/v2/dlq?dlqIds=${a.dlqId}&dlqIds=999-1`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ deleted: 1 });
    expect((await list()).ids).toEqual([b.dlqId]);
  });

  it("bulk by JSON body {dlqIds}", async () => {
    const a = await failed("/d");
    const b = await failed("/d");
    const c = await failed("/d");
    const res = await server.call("DELETE", "/v2/dlq", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ dlqIds: [a.dlqId, c.dlqId] }),
    });
    expect(res.json).toEqual({ deleted: 2 });
    expect((await list()).ids).toEqual([b.dlqId]);
    const bad = await server.call("DELETE", "/v2/dlq", { body: JSON.stringify({ dlqIds: "x" }) });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/^invalid dlqIds:/);
  });

  it("bulk by filter with count and cursor", async () => {
    const keep = await failed("/other");
    await failed("/f");
    await failed("/f");
    await failed("/f");
    const url = encodeURIComponent(dest.url("/f"));
    const first = await server.call("DELETE", `/v2/dlq?url=${url}&count=2`);
    expect(first.json).toEqual({ deleted: 2, cursor: expect.any(String) });
    const rest = await server.call("DELETE", `/v2/dlq?url=${url}&count=2&cursor=${first.json.cursor}`);
    expect(rest.json).toEqual({ deleted: 1 });
    expect((await list()).ids).toEqual([keep.dlqId]);
  });

  it("refuses unknown keys and host/path with 400 and deletes nothing", async () => {
    const a = await failed("/d");
    for (const [query, field] of [
      ["?urll=x", "urll"],
      ["?host=127.0.0.1", "host"],
      ["?path=/d", "path"],
    ]) {
      const res = await server.call("DELETE", `/v2/dlq${query}`);
      expect(res.status).toBe(400);
      expect(res.json.error).toMatch(new RegExp(`^invalid ${field}:`));
    }
    expect((await list()).ids).toEqual([a.dlqId]);
  });

  it("with neither ids nor filters deletes everything", async () => {
    await failed("/d");
    await failed("/e");
    const res = await server.call("DELETE", "/v2/dlq");
    expect(res.json).toEqual({ deleted: 2 });
    expect((await list()).ids).toEqual([]);
  });
});

describe("retry", () => {
  it("re-publishes one entry as a new message (201), removes the entry; request config headers override", async () => {
    const { messageId, dlqId } = await failed(
      "/r",
      { "content-type": "text/plain", "svc-forward-x-a": "1", "svc-forward-x-b": "old" },
      "again",
    );
    dest.respondWith({ status: 200 });
    const before = dest.requests.length;
    const res = await server.call("POST", `/v2/dlq/retry/${dlqId}`, {
      headers: { "svc-retries": "2", "svc-forward-x-b": "new", "svc-method": "PUT" },
    });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({ messageId: expect.stringMatching(/^msg_/) });
    expect(res.json.messageId).not.toBe(messageId);

    const got = (await dest.waitForCount(before + 1))[before]!;
    expect(got.headers["svc-message-id"]).toBe(res.json.messageId);
    expect(got.method).toBe("PUT");
    expect(got.text).toBe("again");
    expect(got.headers["content-type"]).toBe("text/plain");
    expect(got.headers["x-a"]).toBe("1");
    expect(got.headers["x-b"]).toBe("new");
    expect((await server.call("GET", `/v2/dlq/${dlqId}`)).status).toBe(404);

    const created = await server.call("GET", `/v2/events?messageId=${res.json.messageId}&state=CREATED`);
    expect(created.json.events[0]).toMatchObject({ maxRetries: 2, method: "PUT" });
  });

  it("config overrides are validated like a publish, and an unknown id is a 404", async () => {
    const { dlqId } = await failed("/r");
    const bad = await server.call("POST", `/v2/dlq/retry/${dlqId}`, { headers: { "svc-retries": "many" } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/^invalid Svc-Retries:/);
    expect((await list()).ids).toEqual([dlqId]);
    expect((await server.call("POST", "/v2/dlq/retry/1-1")).status).toBe(404);
  });

  it("redacted fields stay redacted in the DLQ; the retried message delivers the original values", async () => {
    const { dlqId } = await failed(
      "/secret",
      { "svc-redact-fields": "body,header[X-Secret]", "svc-forward-x-secret": "s3cret", "svc-forward-x-plain": "p" },
      "private",
    );
    const record = await server.call("GET", `/v2/dlq/${dlqId}`);
    expect(record.json.body).toMatch(/^REDACTED:[0-9a-f]{64}$/);
    expect(record.json.header["X-Secret"][0]).toMatch(/^REDACTED:/);
    expect(record.json.header["X-Plain"]).toEqual(["p"]);

    dest.respondWith({ status: 200 });
    const before = dest.requests.length;
    const res = await server.call("POST", `/v2/dlq/retry/${dlqId}`);
    expect(res.status).toBe(201);
    const got = (await dest.waitForCount(before + 1))[before]!;
    expect(got.text).toBe("private");
    expect(got.headers["x-secret"]).toBe("s3cret");
  });

  it('bulk by ids (query or JSON body) and by filter: 201 with one response each and cursor ""', async () => {
    const a = await failed("/b");
    const b = await failed("/b");
    const c = await failed("/c");
    const keep = await failed("/k");
    // Every retried message is delivered, so none of them comes back into the DLQ during a later test.
    dest.respondWith({ status: 200 }, { status: 200 }, { status: 200 }, { status: 200 });

    const byIds = await server.call("POST", `/v2/dlq/retry?dlqIds=${a.dlqId}&dlqIds=${b.dlqId}`);
    expect(byIds.status).toBe(201);
    expect(byIds.json).toEqual({
      responses: [{ messageId: expect.stringMatching(/^msg_/) }, { messageId: expect.stringMatching(/^msg_/) }],
      cursor: "",
    });

    const byFilter = await server.call("POST", `/v2/dlq/retry?url=${encodeURIComponent(dest.url("/c"))}`);
    expect(byFilter.status).toBe(201);
    expect(byFilter.json).toEqual({ responses: [{ messageId: expect.any(String) }], cursor: "" });
    expect((await list()).ids).toEqual([keep.dlqId]);
    expect(c.dlqId).not.toBe(keep.dlqId);

    const retriedIds = [...byIds.json.responses, ...byFilter.json.responses].map(
      (r: { messageId: string }) => r.messageId,
    );
    await eventually(() => {
      const seen = dest.requests.map((r) => r.headers["svc-message-id"]);
      for (const id of retriedIds) expect(seen).toContain(id);
    });

    const body = await server.call("POST", "/v2/dlq/retry", { body: JSON.stringify({ dlqIds: [keep.dlqId] }) });
    expect(body.status).toBe(201);
    expect(body.json.responses).toHaveLength(1);
    expect((await list()).ids).toEqual([]);
    await eventually(() =>
      expect(dest.requests.map((r) => r.headers["svc-message-id"])).toContain(body.json.responses[0].messageId),
    );
  });

  it("bulk: a filter matching nothing is a 2xx with no responses; unknown ids are a 404", async () => {
    const a = await failed("/n");
    const none = await server.call("POST", `/v2/dlq/retry?url=${encodeURIComponent(dest.url("/nothing"))}`);
    expect(none.status).toBeGreaterThanOrEqual(200);
    expect(none.status).toBeLessThan(300);
    expect(none.json).toEqual({ responses: [] });

    const missing = await server.call("POST", `/v2/dlq/retry?dlqIds=${a.dlqId}&dlqIds=7-7`);
    expect(missing.status).toBe(404);
    expect(missing.json.error).toContain("7-7");
    expect((await list()).ids).toEqual([a.dlqId]); // nothing retried

    const unknownKey = await server.call("POST", "/v2/dlq/retry?host=x");
    expect(unknownKey.status).toBe(400);
  });
});

describe("retention", () => {
  it("entries older than max_dlq_retention_time_milis expire (paid plan: 7 days)", async () => {
    const a = await failed("/old");
    const trimmer = server.ferry.loops.dlqTrimmer!;
    await trimmer.runOnce();
    expect((await list()).ids).toEqual([a.dlqId]);

    clock.offsetMs = 6 * DAY_MS;
    const b = await failed("/newer");
    clock.offsetMs = 7 * DAY_MS + 60_000;
    await trimmer.runOnce();
    expect((await list()).ids).toEqual([b.dlqId]);
  });

  it("past max_dlq_size the oldest entries are dropped", async () => {
    const a = await failed("/s");
    const b = await failed("/s");
    const c = await failed("/s");
    const { store, clock: serverClock, log } = server.ferry.services;
    const small = dlqTrimmer({
      store,
      clock: serverClock,
      log,
      limitsFor: () => ({ max_dlq_retention_time_milis: 7 * DAY_MS, max_dlq_size: 2 }),
    });
    await small.runOnce();
    expect((await list()).ids).toEqual([b.dlqId, c.dlqId]);
    expect(a.dlqId).not.toBe(b.dlqId);
    await small.stop();
  });

  it("accountDlqCount gives the account's current number of entries (dlq_message_count)", async () => {
    const accountId = server.ferry.bootstrap.account.id;
    const { store } = server.ferry.services;
    expect(await store.accountDlqCount({ accountId })).toBe(0);
    await failed("/n1");
    await failed("/n2");
    expect(await store.accountDlqCount({ accountId })).toBe(2);
    expect(await store.accountDlqCount({ accountId: "someone-else" })).toBe(0);
  });
});
