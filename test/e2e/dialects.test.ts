import { Client, Receiver as SdkReceiver } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Receiver, type ReceivedRequest } from "../helpers/receiver.js";
import { startTestServer, TEST_CURRENT_KEY, TEST_NEXT_KEY, type TestServer } from "../helpers/server.js";
import { verifySignature } from "../helpers/signature.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * Both dialects on one server (docs/messaging.md "Dialects"): the default server (no FERRY_DIALECT, as `npm start`
 * runs it) reads the official SDK's names and the neutral ones at once, and delivers, signs and calls back each
 * message in the names its publisher used; a request mixing the two is a 400 naming the name. The official SDK
 * (@upstash/qstash, pinned) publishes, and its own Receiver verifies what arrives.
 */
let server: TestServer;
let receiver: Receiver;
let client: Client;

beforeAll(async () => {
  server = await startTestServer();
  receiver = await Receiver.start();
  client = new Client({ baseUrl: server.url, token: server.token, devMode: false, retry: false });
});
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
});

const sdkReceiver = () => new SdkReceiver({ currentSigningKey: TEST_CURRENT_KEY, nextSigningKey: TEST_NEXT_KEY });
const prefixed = (got: ReceivedRequest, prefix: string) => Object.keys(got.headers).filter((h) => h.startsWith(prefix));

/** Asserts a delivery speaks the official SDKs' names only, and that the SDK's Receiver verifies it for `url`. */
async function expectOfficial(got: ReceivedRequest, url: string): Promise<void> {
  expect(got.headers["user-agent"]).toBe("Upstash-QStash");
  expect(prefixed(got, "svc-")).toEqual([]);
  const signature = String(got.headers["upstash-signature"]);
  expect(await sdkReceiver().verify({ signature, body: got.text, url })).toBe(true);
}

/** Asserts a delivery speaks the neutral names only, signed by issuer Ferry; the SDK's Receiver refuses it. */
async function expectNeutral(got: ReceivedRequest, url: string): Promise<void> {
  expect(got.headers["user-agent"]).toMatch(/^Ferry\//);
  expect(prefixed(got, "upstash-")).toEqual([]);
  const signature = got.headers["svc-signature"];
  await verifySignature({ signature, key: TEST_CURRENT_KEY, url, body: got.body, issuer: "Ferry" });
  await expect(sdkReceiver().verify({ signature: String(signature), body: got.text, url })).rejects.toThrow();
}

describe("the official SDK against the default server (no FERRY_DIALECT)", () => {
  it("publishes in its names: delivered, signed and headed in them, and its Receiver verifies", async () => {
    const url = receiver.url("/official/json?x=1");
    const res = await client.publishJSON({ url, body: { hello: "sdk" }, headers: { "x-custom": "yes" }, retries: 2 });
    const got = await receiver.waitForPath("/official/json?x=1");
    expect(JSON.parse(got.text)).toEqual({ hello: "sdk" });
    expect(got.headers["x-custom"]).toBe("yes");
    expect(got.headers["upstash-message-id"]).toBe(res.messageId);
    expect(got.headers["upstash-retried"]).toBe("0");
    await expectOfficial(got, url);
  });

  // The symptom: the delay was ignored and the message sent at once.
  it("reads its delay, raw or through the SDK", async () => {
    const url = receiver.url("/official/delayed");
    const viaSdk = await client.publish({ url, body: "d", delay: 3600 });
    const raw = await server.call("POST", `/v2/publish/${url}`, { headers: { "Upstash-Delay": "1h" }, body: "d" });
    expect(raw.status).toBe(200);
    for (const id of [viaSdk.messageId, raw.json.messageId as string]) {
      const message = await client.messages.get(id);
      expect(Number(message.notBefore) - message.createdAt).toBe(3_600_000);
    }
    // The raw one named nothing but the delay: its Upstash- name decided, and it is read as such.
    expect((await server.call("GET", `/v2/messages/${raw.json.messageId}`)).json.notBefore).toBeGreaterThan(Date.now());
    await client.messages.deleteMany([viaSdk.messageId, raw.json.messageId as string]);
    expect(receiver.requests.some((r) => r.url === "/official/delayed")).toBe(false);
  });

  it("also when the SDK sends no telemetry: its Upstash-Method alone decides", async () => {
    const quiet = new Client({ baseUrl: server.url, token: server.token, enableTelemetry: false, retry: false });
    const url = receiver.url("/official/quiet");
    await quiet.publish({ url, body: "q" });
    await expectOfficial(await receiver.waitForPath("/official/quiet"), url);
  });

  it("calls back and failure-calls back in its names, each verified by its Receiver", async () => {
    receiver.setDefault((u) => (u.startsWith("/official/down") ? { status: 500 } : { status: 200, body: "ok" }));
    const url = receiver.url("/official/down");
    const callback = receiver.url("/official/cb");
    const failureCallback = receiver.url("/official/fcb");
    const res = await client.publishJSON({ url, body: { x: 1 }, retries: 0, callback, failureCallback });
    const cb = await receiver.waitForPath("/official/cb");
    const fcb = await receiver.waitForPath("/official/fcb");
    for (const [got, at] of [
      [cb, callback],
      [fcb, failureCallback],
    ] as const) {
      expect(JSON.parse(got.text).sourceMessageId).toBe(res.messageId);
      await expectOfficial(got, at);
    }
    receiver.setDefault({ status: 200, body: "ok" });
  });

  it("publishes to a URL group in its names; the group's neutral default headers apply in them", async () => {
    await client.urlGroups.addEndpoints({ name: "mixed-group", endpoints: [{ url: receiver.url("/official/group") }] });
    const patched = await server.call("PATCH", "/v2/topics/mixed-group", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ headers: { "Svc-Forward-X-Group": "g" } }),
    });
    expect(patched.status).toBe(200);
    await client.publishJSON({ urlGroup: "mixed-group", body: { to: "group" } });
    const got = await receiver.waitForPath("/official/group");
    expect(got.headers["upstash-topic-name"]).toBe("mixed-group");
    expect(got.headers["x-group"]).toBe("g");
    await expectOfficial(got, receiver.url("/official/group"));
  });

  it("batches in its names", async () => {
    await client.batchJSON([
      { url: receiver.url("/official/batch-a"), body: { a: 1 } },
      { url: receiver.url("/official/batch-b"), body: { b: 1 }, retries: 1 },
    ]);
    for (const path of ["/official/batch-a", "/official/batch-b"]) {
      await expectOfficial(await receiver.waitForPath(path), receiver.url(path));
    }
  });

  it("reads the destination's non-retryable answer in the message's own names", async () => {
    const stop = { status: 489, headers: { "upstash-nonretryable-error": "true" } };
    receiver.setDefault((u) => (u.startsWith("/stop/") ? stop : { status: 200, body: "ok" }));
    const official = await client.publish({ url: receiver.url("/stop/official"), body: "s", retries: 3 });
    const neutral = await server.call("POST", `/v2/publish/${receiver.url("/stop/neutral")}`, {
      headers: { "Svc-Retries": "3", "Svc-Retry-Delay": "3600000" },
      body: "s",
    });
    const state = (id: string, s: string) => async () => {
      const logs = await server.call("GET", `/v2/logs?messageId=${id}&state=${s}`);
      return logs.json.logs.length > 0 ? true : undefined;
    };
    // The official message stops at once; for the neutral one that header is not its own: it is retried.
    await waitUntil(state(official.messageId, "FAILED"));
    await waitUntil(state(neutral.json.messageId as string, "RETRY"));
    expect((await server.call("DELETE", `/v2/messages/${neutral.json.messageId}`)).status).toBe(200);
    receiver.setDefault({ status: 200, body: "ok" });
  });

  it("a DLQ retry keeps the original's dialect, whatever names the retry request uses", async () => {
    receiver.setDefault((u) => (u.startsWith("/official/dead") ? { status: 500 } : { status: 200, body: "ok" }));
    const url = receiver.url("/official/dead");
    const { messageId } = await client.publish({ url, body: "dead", retries: 0 });
    const entry = await waitUntil(async () => {
      const list = (await server.call("GET", "/v2/dlq")).json.messages as { dlqId: string; messageId: string }[];
      return list.find((m) => m.messageId === messageId);
    });
    receiver.setDefault({ status: 200, body: "ok" });
    const before = receiver.requests.length;
    // Overrides in the neutral names: read in them, while the retried message stays in the official ones.
    const retried = await server.call("POST", `/v2/dlq/retry/${entry.dlqId}`, {
      headers: { "Svc-Forward-X-Retry": "r" },
    });
    expect(retried.status).toBe(201);
    const got = await waitUntil(async () =>
      receiver.requests.slice(before).find((r) => r.headers["x-retry"] === "r"),
    );
    expect(got.headers["upstash-message-id"]).toBe(retried.json.messageId);
    await expectOfficial(got, url);
  });
});

describe("the neutral names on the same server", () => {
  it("a neutral publish, and one that names neither, are delivered in the neutral names", async () => {
    const url = receiver.url("/neutral/one");
    const res = await server.call("POST", `/v2/publish/${url}`, {
      headers: { "Svc-Retries": "1", "Svc-Forward-X-N": "n" },
      body: "n",
    });
    const got = await receiver.waitForPath("/neutral/one");
    expect(got.headers["svc-message-id"]).toBe(res.json.messageId);
    expect(got.headers["x-n"]).toBe("n");
    await expectNeutral(got, url);

    const plain = receiver.url("/neutral/plain");
    await server.call("POST", `/v2/publish/${plain}`, { body: "p" });
    await expectNeutral(await receiver.waitForPath("/neutral/plain"), plain);
  });

  it("a neutral callback is called back in the neutral names", async () => {
    const url = receiver.url("/neutral/src");
    const callback = receiver.url("/neutral/cb");
    await server.call("POST", `/v2/publish/${url}`, { headers: { "svc-callback": callback }, body: "c" });
    await expectNeutral(await receiver.waitForPath("/neutral/cb"), callback);
  });

  it("the SDK's management path and token parameter work beside the neutral ones", async () => {
    const official = await server.call("GET", `/v2/logs?qstash_token=${server.token}&count=1`, { token: null });
    const neutral = await server.call("GET", `/v2/logs?svc_token=${server.token}&count=1`, { token: null });
    expect([official.status, neutral.status]).toEqual([200, 200]);
    const publish = await server.call(
      "POST",
      `/v2/publish/${receiver.url("/neutral/q")}?qstash_token=${server.token}&upstash-method=PUT`,
      { token: null, body: "q" },
    );
    expect(publish.status).toBe(200);
    const got = await receiver.waitForPath("/neutral/q");
    expect(got.method).toBe("PUT");
    await expectOfficial(got, receiver.url("/neutral/q"));
  });
});

describe("a request that mixes the two dialects", () => {
  it("is refused with a 400 naming both names, and publishes nothing", async () => {
    const url = receiver.url("/mixed/headers");
    const res = await server.call("POST", `/v2/publish/${url}`, {
      headers: { "Upstash-Delay": "1h", "Svc-Retries": "1" },
      body: "m",
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/^invalid header (Svc-Retries|Upstash-Delay): mixes two dialects/);
    expect(res.json.error).toContain("Svc-Retries");
    expect(res.json.error).toContain("Upstash-Delay");
    const logs = await server.call("GET", `/v2/logs?url=${encodeURIComponent(url)}`);
    expect(logs.json.logs).toEqual([]);
  });

  it("with both token parameters, a header and a query key, or the other dialect's management path", async () => {
    const both = await server.call("GET", `/v2/logs?svc_token=${server.token}&qstash_token=${server.token}`, {
      token: null,
    });
    expect(both.status).toBe(400);
    expect(both.json.error).toMatch(/^invalid query parameter qstash_token: .*query parameter svc_token/);

    const query = await server.call("POST", `/v2/publish/${receiver.url("/mixed/q")}?upstash-delay=1h`, {
      headers: { "Svc-Retries": "1" },
      body: "m",
    });
    expect(query.status).toBe(400);
    expect(query.json.error).toMatch(/^invalid header Svc-Retries: .*query parameter upstash-delay/);

    const path = await server.call("GET", "/v2/qstash/user", { headers: { "Svc-Anything": "x" }, token: null });
    expect(path.status).toBe(400);
    expect(path.json.error).toMatch(/^invalid header Svc-Anything: .*path \/v2\/qstash\/user/);
  });

  it("in a batch: one item in the other dialect refuses the whole batch", async () => {
    const res = await server.call("POST", "/v2/batch", {
      headers: { "content-type": "application/json", "Upstash-Telemetry-Sdk": "test" },
      body: JSON.stringify([
        { destination: receiver.url("/mixed/batch-a"), body: "a" },
        { destination: receiver.url("/mixed/batch-b"), headers: { "Svc-Retries": "1" }, body: "b" },
      ]),
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/^invalid header Svc-Retries: .*header Upstash-Telemetry-Sdk/);
  });
});

describe("FERRY_DIALECT names only what no request decided", () => {
  it("upstash: a publish naming neither is in the official names, a neutral one in the neutral names", async () => {
    const upstash = await startTestServer({ env: { FERRY_DIALECT: "upstash" } });
    try {
      const plain = receiver.url("/default/plain");
      await upstash.call("POST", `/v2/publish/${plain}`, { body: "p" });
      await expectOfficial(await receiver.waitForPath("/default/plain"), plain);
      const neutral = receiver.url("/default/neutral");
      await upstash.call("POST", `/v2/publish/${neutral}`, { headers: { "Svc-Retries": "0" }, body: "n" });
      await expectNeutral(await receiver.waitForPath("/default/neutral"), neutral);
      // Both management paths are served (401 without credentials, not 404).
      expect((await upstash.call("GET", "/v2/msgsvc/user", { token: null })).status).toBe(401);
      expect((await upstash.call("GET", "/v2/qstash/user", { token: null })).status).toBe(401);
    } finally {
      await upstash.stop();
    }
  });
});
