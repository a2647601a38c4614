import { Client, Receiver as SdkReceiver } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, TEST_CURRENT_KEY, TEST_NEXT_KEY, type TestServer } from "../helpers/server.js";

/**
 * The published SDK (@upstash/qstash, pinned) against a real Ferry with a loopback-only egress policy: the SDK's own
 * habits are exercised as they are, and every delivery is verified by its Receiver. Twice: on the default server (no
 * FERRY_DIALECT, as `npm start` runs it), where the SDK's names decide its requests' dialect, and with
 * FERRY_DIALECT=upstash (docs/messaging.md "Dialects").
 */
const sdkReceiver = () => new SdkReceiver({ currentSigningKey: TEST_CURRENT_KEY, nextSigningKey: TEST_NEXT_KEY });

describe.each([
  ["the default server", {}],
  ["FERRY_DIALECT=upstash", { FERRY_DIALECT: "upstash" }],
])("@upstash/qstash against Ferry (%s)", (_name, dialectEnv: Record<string, string>) => {
  let server: TestServer;
  let receiver: Receiver;
  let client: Client;

  beforeAll(async () => {
    server = await startTestServer({ env: { ...dialectEnv, FERRY_DESTINATION_ALLOW: "127.0.0.0/8,::1" } });
    receiver = await Receiver.start();
    client = new Client({ baseUrl: server.url, token: server.token, devMode: false, retry: false });
  });
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });

    it("publishJSON delivers a body the SDK's Receiver verifies", async () => {
      const url = receiver.url("/sdk/json?x=1");
      const res = await client.publishJSON({ url, body: { hello: "sdk" }, headers: { "x-custom": "yes" }, retries: 2 });
      expect(res.messageId).toMatch(/^msg_/);
      const got = await receiver.next();
      expect(JSON.parse(got.text)).toEqual({ hello: "sdk" });
      expect(got.headers["x-custom"]).toBe("yes");
      expect(got.headers["user-agent"]).toBe("Upstash-QStash");
      expect(got.headers["upstash-message-id"]).toBe(res.messageId);
      expect(
        await sdkReceiver().verify({ signature: String(got.headers["upstash-signature"]), body: got.text, url }),
      ).toBe(true);
    });

    it("publish with delay, labels and deduplication; messages.get shows them", async () => {
      const url = receiver.url("/sdk/delayed");
      const first = await client.publish({
        url,
        body: "b",
        delay: 3600,
        label: "sdk-label",
        deduplicationId: "sdk-dedup-1",
      });
      const second = await client.publish({ url, body: "b", delay: 3600, deduplicationId: "sdk-dedup-1" });
      expect(second.messageId).toBe(first.messageId);
      expect(second.deduplicated).toBe(true);
      const message = await client.messages.get(first.messageId);
      expect(message.messageId).toBe(first.messageId);
      expect(message.url).toBe(url);
      expect(message.labels ?? [message.label]).toContain("sdk-label");
      expect(Number(message.notBefore) - message.createdAt).toBe(3_600_000);
    });

    it("messages.delete, deleteMany and deleteAll cancel", async () => {
      const url = receiver.url("/sdk/cancel");
      const ids = [];
      for (let i = 0; i < 4; i++) ids.push((await client.publish({ url, body: "c", delay: 3600 })).messageId);
      await client.messages.delete(ids[0]!);
      expect(await client.messages.deleteMany([ids[1]!, ids[2]!])).toBe(2);
      expect(await client.messages.deleteAll()).toBeGreaterThanOrEqual(1);
      await expect(client.messages.get(ids[3]!)).rejects.toThrow();
    });

    it("logs filter by message id and page with a cursor", async () => {
      const url = receiver.url("/sdk/logs");
      const { messageId } = await client.publish({ url, body: "l" });
      for (let i = 0; i < 100; i++) {
        const page = await client.logs({ filter: { messageId } });
        if (page.logs.some((l) => l.state === "DELIVERED")) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const page = await client.logs({ filter: { messageId } });
      expect(page.logs.map((l) => l.state)).toEqual(["DELIVERED", "ACTIVE", "CREATED"]);
      const first = await client.logs({ filter: { count: 1 } });
      expect(first.logs).toHaveLength(1);
      expect(first.cursor).toBeDefined();
    });

    it("the qstash_token query parameter authenticates, and Upstash- headers configure", async () => {
      const url = receiver.url("/sdk/query-token");
      const res = await server.call("POST", `/v2/publish/${url}?qstash_token=${server.token}&upstash-method=PUT`, {
        token: null,
        body: "q",
      });
      expect(res.status).toBe(200);
      const got = await receiver.waitForPath("/sdk/query-token");
      expect(got.method).toBe("PUT");
    });

    it("verifies deliveries signed after a key rotation with the SDK's Receiver", async () => {
      const rotated = await server.call("POST", "/v2/keys/rotate");
      const url = receiver.url("/sdk/rotated");
      await client.publish({ url, body: "r" });
      const got = await receiver.waitForPath("/sdk/rotated");
      const verifier = new SdkReceiver({ currentSigningKey: TEST_CURRENT_KEY, nextSigningKey: rotated.json.current });
      expect(await verifier.verify({ signature: String(got.headers["upstash-signature"]), body: got.text, url })).toBe(
        true,
      );
      const fresh = new SdkReceiver({ currentSigningKey: rotated.json.current, nextSigningKey: rotated.json.next });
      const signature = String(got.headers["upstash-signature"]);
      expect(await fresh.verify({ signature, body: got.text, url })).toBe(true);
    });

    it("messages.cancel with a filter, the deprecated events() call, batch and queue.enqueue", async () => {
      const url = receiver.url("/sdk/more");
      for (let i = 0; i < 2; i++) await client.publish({ url, body: "m", delay: 3600, label: "sdk-cancel-me" });
      const cancelled = await client.messages.cancel({ filter: { label: "sdk-cancel-me" } });
      expect(cancelled.cancelled).toBe(2);

      const events = await client.events({ filter: { state: "CANCELED", count: 2 } });
      expect(events.events.length).toBeGreaterThan(0);
      expect(events.events.every((e) => e.state === "CANCELED")).toBe(true);

      const batch = await client.batch([
        { url: receiver.url("/sdk/batch-a"), body: "a" },
        { url: receiver.url("/sdk/batch-b"), body: "b", headers: { "content-type": "text/plain" } },
      ]);
      expect(batch).toHaveLength(2);
      const queued = await client
        .queue({ queueName: "sdk-core-queue" })
        .enqueue({ url: receiver.url("/sdk/enqueued"), body: "e" });
      expect(queued.messageId).toMatch(/^msg_/);
      const paths = ["/sdk/batch-a", "/sdk/batch-b", "/sdk/enqueued"];
      const arrived = await Promise.all(paths.map((p) => receiver.waitForPath(p)));
      expect(arrived.map((r) => r.text)).toEqual(["a", "b", "e"]);
    });
});
