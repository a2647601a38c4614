import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

let server: TestServer;
const receivers: Receiver[] = [];

async function receiver(): Promise<Receiver> {
  const r = await Receiver.start();
  receivers.push(r);
  return r;
}

const json = (value: unknown) => ({ headers: { "content-type": "application/json" }, body: JSON.stringify(value) });

async function logStates(messageId: string): Promise<string[]> {
  const res = await server.call("GET", `/v2/logs?messageId=${messageId}&order=earliestFirst`);
  expect(res.status).toBe(200);
  return res.json.logs.map((l: { state: string }) => l.state);
}

beforeAll(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await server.stop();
});

describe("URL group management", () => {
  it("creates a group on first endpoint, upserts by URL, lists, reads, and deletes it with its last endpoint", async () => {
    const a = "http://127.0.0.1:9/a";
    const b = "http://127.0.0.1:9/b";
    const add = await server.call(
      "POST",
      "/v2/topics/orders/endpoints",
      json({ endpoints: [{ name: "first", url: a }, { url: b }] }),
    );
    expect(add.status).toBe(200);
    expect(add.text).toBe("");

    const got = await server.call("GET", "/v2/topics/orders");
    expect(got.status).toBe(200);
    expect(got.json).toEqual({
      name: "orders",
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
      endpoints: [{ name: "first", url: a }, { url: b }],
    });

    // Same URL = same endpoint: its name is updated, nothing is added.
    await server.call("POST", "/v2/topics/orders/endpoints", json({ endpoints: [{ name: "second", url: b }] }));
    expect((await server.call("GET", "/v2/topics/orders")).json.endpoints).toEqual([
      { name: "first", url: a },
      { name: "second", url: b },
    ]);

    const list = await server.call("GET", "/v2/topics");
    expect(list.status).toBe(200);
    expect(list.json.map((t: { name: string }) => t.name)).toContain("orders");

    expect(
      (await server.call("DELETE", "/v2/topics/orders/endpoints", json({ endpoints: [{ name: "first" }] }))).status,
    ).toBe(200);
    expect((await server.call("GET", "/v2/topics/orders")).json.endpoints).toEqual([{ name: "second", url: b }]);
    expect((await server.call("DELETE", "/v2/topics/orders/endpoints", json({ endpoints: [{ url: b }] }))).status).toBe(
      200,
    );

    const gone = await server.call("GET", "/v2/topics/orders");
    expect(gone.status).toBe(404);
    expect(gone.json.error).toContain("orders");
    const again = await server.call("DELETE", "/v2/topics/orders/endpoints", json({ endpoints: [{ url: b }] }));
    expect(again.status).toBe(404);
  });

  it("deletes a whole group; deleting a missing group succeeds, removing endpoints from one does not", async () => {
    await server.call("POST", "/v2/topics/doomed/endpoints", json({ endpoints: [{ url: "http://127.0.0.1:9/x" }] }));
    expect((await server.call("DELETE", "/v2/topics/doomed")).status).toBe(200);
    expect((await server.call("GET", "/v2/topics/doomed")).status).toBe(404);
    // Idempotent, as the hosted service: an already deleted (or never created) group answers 200 with an empty body.
    const again = await server.call("DELETE", "/v2/topics/doomed");
    expect(again.status).toBe(200);
    expect(again.text).toBe("");
    expect((await server.call("DELETE", "/v2/topics/never-created")).status).toBe(200);
    const selector = json({ endpoints: [{ url: "http://127.0.0.1:9/x" }] });
    const remove = await server.call("DELETE", "/v2/topics/doomed/endpoints", selector);
    expect(remove.status).toBe(404);
    expect((await server.call("DELETE", "/v2/topics/bad%20name")).status).toBe(400);
  });

  it("rejects bad names, URLs and bodies with a 400 naming the field", async () => {
    const badName = await server.call(
      "POST",
      "/v2/topics/bad%20name/endpoints",
      json({ endpoints: [{ url: "http://127.0.0.1:9/" }] }),
    );
    expect(badName.status).toBe(400);
    expect(badName.json.error).toMatch(/topicName/);

    const badUrl = await server.call("POST", "/v2/topics/g/endpoints", json({ endpoints: [{ url: "ftp://x" }] }));
    expect(badUrl.status).toBe(400);
    expect(badUrl.json.error).toMatch(/endpoints\[0\]\.url/);

    const none = await server.call("POST", "/v2/topics/g/endpoints", json({ endpoints: [] }));
    expect(none.status).toBe(400);
    expect(none.json.error).toMatch(/endpoints/);

    const selector = await server.call("DELETE", "/v2/topics/g/endpoints", json({ endpoints: [{}] }));
    expect(selector.status).toBe(400);
    expect(selector.json.error).toMatch(/endpoints\[0\]/);

    const headers = await server.call("PATCH", "/v2/topics/g", json({ headers: "nope" }));
    expect(headers.status).toBe(400);
    expect(headers.json.error).toMatch(/headers/);

    expect((await server.call("GET", "/v2/topics")).json.map((t: { name: string }) => t.name)).not.toContain("g");
  });

  it("refuses an endpoint name that already belongs to another URL of the group", async () => {
    await server.call(
      "POST",
      "/v2/topics/named/endpoints",
      json({ endpoints: [{ name: "a", url: "http://127.0.0.1:9/1" }] }),
    );
    const clash = await server.call(
      "POST",
      "/v2/topics/named/endpoints",
      json({ endpoints: [{ name: "a", url: "http://127.0.0.1:9/2" }] }),
    );
    expect(clash.status).toBe(400);
    expect(clash.json.error).toMatch(/endpoints/);
    expect((await server.call("GET", "/v2/topics/named")).json.endpoints).toEqual([
      { name: "a", url: "http://127.0.0.1:9/1" },
    ]);
  });
});

describe("publish to a URL group", () => {
  it("fans out to every endpoint; a failing endpoint retries alone with its own id and logs", async () => {
    const [r1, r2, r3] = [await receiver(), await receiver(), await receiver()];
    r3.respondWith({ status: 500, body: "down" });
    await server.call(
      "POST",
      "/v2/topics/fan/endpoints",
      json({
        endpoints: [{ name: "one", url: r1.url("/1") }, { url: r2.url("/2") }, { name: "three", url: r3.url("/3") }],
      }),
    );

    const res = await server.call("POST", "/v2/publish/fan", {
      headers: { "svc-retries": "2", "svc-retry-delay": "0", "content-type": "text/plain" },
      body: "hello group",
    });
    expect(res.status).toBe(200);
    expect(Array.isArray(res.json)).toBe(true);
    expect(res.json.map((m: { url: string }) => m.url)).toEqual([r1.url("/1"), r2.url("/2"), r3.url("/3")]);
    const ids: string[] = res.json.map((m: { messageId: string }) => m.messageId);
    expect(new Set(ids).size).toBe(3);

    const [got1, got2] = [await r1.next(), await r2.next()];
    const [fail3, ok3] = await r3.waitForCount(2);
    expect(got1.text).toBe("hello group");
    expect(got1.headers["svc-message-id"]).toBe(ids[0]);
    expect(got2.headers["svc-message-id"]).toBe(ids[1]);
    expect(got1.headers["svc-topic-name"]).toBe("fan");
    expect(fail3!.headers["svc-message-id"]).toBe(ids[2]);
    expect(ok3!.headers["svc-message-id"]).toBe(ids[2]);
    expect([fail3!.headers["svc-retried"], ok3!.headers["svc-retried"]]).toEqual(["0", "1"]);

    const states3 = await waitUntil(async () => {
      const s = await logStates(ids[2]!);
      return s.includes("DELIVERED") ? s : undefined;
    });
    expect(states3).toEqual(["CREATED", "ACTIVE", "ERROR", "RETRY", "ACTIVE", "DELIVERED"]);
    for (const id of ids.slice(0, 2)) {
      const states = await waitUntil(async () => {
        const s = await logStates(id);
        return s.includes("DELIVERED") ? s : undefined;
      });
      expect(states).toEqual(["CREATED", "ACTIVE", "DELIVERED"]);
    }
    expect(r1.requests).toHaveLength(1);
    expect(r2.requests).toHaveLength(1);

    const logs = await server.call("GET", `/v2/logs?topicName=fan&state=DELIVERED`);
    const byId = new Map(logs.json.logs.map((l: { messageId: string }) => [l.messageId, l]));
    expect(byId.get(ids[0]!)).toMatchObject({ topicName: "fan", endpointName: "one" });
    expect(byId.get(ids[2]!)).toMatchObject({ topicName: "fan", endpointName: "three" });
    expect((byId.get(ids[1]!) as Record<string, unknown>).endpointName).toBeUndefined();
  });

  it("applies the group's default headers to every endpoint; request headers win", async () => {
    const [r1, r2] = [await receiver(), await receiver()];
    await server.call(
      "POST",
      "/v2/topics/defaults/endpoints",
      json({ endpoints: [{ url: r1.url("/") }, { url: r2.url("/") }] }),
    );
    const patch = await server.call(
      "PATCH",
      "/v2/topics/defaults",
      json({
        headers: { "Svc-Forward-X-Default": "from-group", "svc-forward-x-both": ["group"], "Svc-Method": "PUT" },
      }),
    );
    expect(patch.status).toBe(200);
    expect((await server.call("GET", "/v2/topics/defaults")).json.headers).toEqual({
      "Svc-Forward-X-Default": ["from-group"],
      "Svc-Forward-X-Both": ["group"],
      "Svc-Method": ["PUT"],
    });

    await server.call("POST", "/v2/publish/defaults", { headers: { "svc-forward-x-both": "request" }, body: "1" });
    for (const r of [r1, r2]) {
      const got = await r.next();
      expect(got.method).toBe("PUT");
      expect(got.headers["x-default"]).toBe("from-group");
      expect(got.headers["x-both"]).toBe("request");
    }

    await server.call("POST", "/v2/publish/defaults", { headers: { "svc-method": "POST" }, body: "2" });
    for (const r of [r1, r2]) {
      const got = await r.next();
      expect(got.method).toBe("POST");
      expect(got.headers["x-both"]).toBe("group");
    }

    // Clearing the defaults.
    await server.call("PATCH", "/v2/topics/defaults", json({ headers: {} }));
    expect((await server.call("GET", "/v2/topics/defaults")).json.headers).toBeUndefined();
    expect((await server.call("PATCH", "/v2/topics/missing", json({ headers: {} }))).status).toBe(404);
  });

  it("deduplicates per endpoint", async () => {
    const [r1, r2, r3] = [await receiver(), await receiver(), await receiver()];
    await server.call(
      "POST",
      "/v2/topics/dedup/endpoints",
      json({ endpoints: [{ url: r1.url("/") }, { url: r2.url("/") }] }),
    );
    const headers = { "svc-deduplication-id": "same-1" };
    const first = await server.call("POST", "/v2/publish/dedup", { headers, body: "x" });
    expect(first.status).toBe(200);
    expect(first.json.every((m: { deduplicated?: boolean }) => m.deduplicated === undefined)).toBe(true);

    await server.call("POST", "/v2/topics/dedup/endpoints", json({ endpoints: [{ url: r3.url("/") }] }));
    const second = await server.call("POST", "/v2/publish/dedup", { headers, body: "x" });
    expect(second.status).toBe(200);
    expect(second.json).toEqual([
      { messageId: first.json[0].messageId, url: r1.url("/"), deduplicated: true },
      { messageId: first.json[1].messageId, url: r2.url("/"), deduplicated: true },
      { messageId: expect.stringMatching(/^msg_/), url: r3.url("/") },
    ]);

    const third = await server.call("POST", "/v2/publish/dedup", { headers, body: "x" });
    expect(third.status).toBe(202);
    await Promise.all([r1.next(), r2.next(), r3.next()]);
    await r3.expectQuiet(200);
    expect([r1.requests.length, r2.requests.length, r3.requests.length]).toEqual([1, 1, 1]);
  });

  it("answers 404 naming an unknown group", async () => {
    const res = await server.call("POST", "/v2/publish/no-such-group", { body: "x" });
    expect(res.status).toBe(404);
    expect(res.json.error).toContain("no-such-group");
  });
});

describe("URL group limits", () => {
  let free: TestServer;
  beforeAll(async () => {
    free = await startTestServer({ env: { FERRY_DEFAULT_PLAN: "free" } });
  });
  afterAll(async () => {
    await free.stop();
  });

  it("answers 412 over max_endpoints_per_topic and max_topics, leaving nothing behind", async () => {
    const endpoints = Array.from({ length: 101 }, (_, i) => ({ url: `http://127.0.0.1:9/${i}` }));
    const tooMany = await free.call("POST", "/v2/topics/big/endpoints", json({ endpoints }));
    expect(tooMany.status).toBe(412);
    expect(tooMany.json.error).toMatch(/max_endpoints_per_topic/);
    expect((await free.call("GET", "/v2/topics")).json).toEqual([]);

    expect(
      (await free.call("POST", "/v2/topics/one/endpoints", json({ endpoints: endpoints.slice(0, 100) }))).status,
    ).toBe(200);
    const second = await free.call("POST", "/v2/topics/two/endpoints", json({ endpoints: endpoints.slice(0, 1) }));
    expect(second.status).toBe(412);
    expect(second.json.error).toMatch(/max_topics/);
    const oneMore = await free.call("POST", "/v2/topics/one/endpoints", json({ endpoints: endpoints.slice(100) }));
    expect(oneMore.status).toBe(412);
    expect((await free.call("GET", "/v2/topics/one")).json.endpoints).toHaveLength(100);
    // Updating an existing endpoint at the limit is fine.
    const rename = await free.call(
      "POST",
      "/v2/topics/one/endpoints",
      json({ endpoints: [{ name: "n", url: endpoints[0]!.url }] }),
    );
    expect(rename.status).toBe(200);
  });
});
