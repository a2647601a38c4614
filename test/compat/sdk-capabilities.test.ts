import { Client, Receiver as SdkReceiver } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, TEST_CURRENT_KEY, TEST_NEXT_KEY, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * The SDK's URL-group, batch, queue, schedule, DLQ and callback calls against the default server (no FERRY_DIALECT,
 * as `npm start` runs it): the SDK's own names decide its requests' dialect (docs/messaging.md "Dialects").
 */
let server: TestServer;
let client: Client;
const receivers: Receiver[] = [];
const receiver = async () => {
  const r = await Receiver.start();
  receivers.push(r);
  return r;
};
const verifier = new SdkReceiver({ currentSigningKey: TEST_CURRENT_KEY, nextSigningKey: TEST_NEXT_KEY });
const verify = (got: { headers: Record<string, unknown>; text: string }, url: string) =>
  verifier.verify({ signature: String(got.headers["upstash-signature"]), body: got.text, url });

beforeAll(async () => {
  server = await startTestServer({
    env: {
      FERRY_DESTINATION_ALLOW: "127.0.0.0/8,::1",
      FERRY_SCHEDULER_INTERVAL_MS: "3600000",
    },
  });
  client = new Client({ baseUrl: server.url, token: server.token, devMode: false, retry: false });
});
afterAll(async () => {
  await server.stop();
  for (const r of receivers) await r.close();
});

describe("urlGroups", () => {
  it("addEndpoints, get, list, publishJSON to the group, removeEndpoints, delete", async () => {
    const a = await receiver();
    const b = await receiver();
    await client.urlGroups.addEndpoints({
      name: "sdk-group",
      endpoints: [{ url: a.url("/a") }, { url: b.url("/b"), name: "bee" }],
    });
    const group = await client.urlGroups.get("sdk-group");
    expect(group.name).toBe("sdk-group");
    expect(group.endpoints).toEqual([{ url: a.url("/a") }, { url: b.url("/b"), name: "bee" }]);
    expect((await client.urlGroups.list()).map((g) => g.name)).toContain("sdk-group");

    const sent = await client.publishJSON({ urlGroup: "sdk-group", body: { fan: "out" } });
    expect(Array.isArray(sent)).toBe(true);
    expect(sent.map((s) => s.url).sort()).toEqual([a.url("/a"), b.url("/b")].sort());
    const [gotA] = await a.waitForCount(1);
    expect(gotA!.headers["upstash-topic-name"]).toBe("sdk-group");
    expect(await verify(gotA!, a.url("/a"))).toBe(true);

    await client.urlGroups.removeEndpoints({ name: "sdk-group", endpoints: [{ name: "bee" }] });
    expect((await client.urlGroups.get("sdk-group")).endpoints).toEqual([{ url: a.url("/a") }]);
    await client.urlGroups.delete("sdk-group");
    await expect(client.urlGroups.get("sdk-group")).rejects.toThrow();
    // Deleting "to be sure" before creating: a missing group is deleted already.
    await client.urlGroups.delete("sdk-group");
    await client.urlGroups.delete("sdk-never-created");
    await expect(
      client.urlGroups.removeEndpoints({ name: "sdk-never-created", endpoints: [{ url: a.url("/a") }] }),
    ).rejects.toThrow();
  });
});

describe("batchJSON", () => {
  it("answers in request order and delivers every item", async () => {
    const r = await receiver();
    const res = await client.batchJSON([
      { url: r.url("/one"), body: { n: 1 } },
      { url: r.url("/two"), body: { n: 2 }, headers: { "x-two": "2" } },
    ]);
    expect(res).toHaveLength(2);
    const got = await r.waitForCount(2);
    expect(got.map((g) => g.url).sort()).toEqual(["/one", "/two"]);
    expect(got.find((g) => g.url === "/two")!.headers["x-two"]).toBe("2");
  });
});

describe("queues", () => {
  it("upsert, get, list, pause, enqueueJSON, resume, delete", async () => {
    const r = await receiver();
    const queue = client.queue({ queueName: "sdk-queue" });
    await queue.upsert({ parallelism: 2 });
    expect(await queue.get()).toMatchObject({ name: "sdk-queue", parallelism: 2, paused: false, lag: 0 });
    expect((await client.queue().list()).map((q) => q.name)).toContain("sdk-queue");
    await queue.pause();
    const { messageId } = await queue.enqueueJSON({ url: r.url("/q"), body: { queued: true } });
    expect((await queue.get()).lag).toBe(1);
    await r.expectQuiet(200);
    await queue.resume();
    const [got] = await r.waitForCount(1);
    expect(got!.headers["upstash-message-id"]).toBe(messageId);
    await queue.delete();
    await expect(queue.get()).rejects.toThrow();
  });
});

describe("schedules", () => {
  it("create, get, list, pause, resume, delete", async () => {
    const r = await receiver();
    const { scheduleId } = await client.schedules.create({
      destination: r.url("/cron"),
      cron: "*/10 * * * * ",
      body: "tick",
      retries: 1,
      headers: { "x-s": "1" },
    });
    const schedule = await client.schedules.get(scheduleId);
    expect(schedule).toMatchObject({ scheduleId, cron: "*/10 * * * *", destination: r.url("/cron"), isPaused: false });
    expect((await client.schedules.list()).map((s) => s.scheduleId)).toContain(scheduleId);
    await client.schedules.pause({ schedule: scheduleId });
    expect((await client.schedules.get(scheduleId)).isPaused).toBe(true);
    await client.schedules.resume({ schedule: scheduleId });
    expect((await client.schedules.get(scheduleId)).isPaused).toBe(false);
    await client.schedules.delete(scheduleId);
    await expect(client.schedules.get(scheduleId)).rejects.toThrow();
  });
});

describe("callbacks and the DLQ", () => {
  it("callback and failure callback arrive signed; dlq listMessages, retry, delete, deleteMany", async () => {
    const failing = await receiver();
    failing.setDefault({ status: 500, body: "broken" });
    const callbacks = await receiver();
    const { messageId } = await client.publish({
      url: failing.url("/fails"),
      body: "f",
      retries: 0,
      callback: callbacks.url("/cb"),
      failureCallback: callbacks.url("/failure"),
    });
    const got = await callbacks.waitForCount(2);
    const failure = got.find((g) => g.url === "/failure")!;
    expect(await verify(failure, callbacks.url("/failure"))).toBe(true);
    const body = JSON.parse(failure.text);
    expect(body).toMatchObject({ status: 500, sourceMessageId: messageId, retried: 0, maxRetries: 0 });
    expect(Buffer.from(body.body, "base64").toString()).toBe("broken");

    const listed = await waitUntil(async () => {
      const page = await client.dlq.listMessages();
      return page.messages.find((m) => m.messageId === messageId);
    });
    expect(listed.dlqId).toBe(body.dlqId);
    expect(listed.responseStatus).toBe(500);

    // By path: /y fails, the rest succeeds. Switching the default to 500 after publishing /x could catch an /x
    // delivery still on its way.
    failing.setDefault((url) => (url.startsWith("/y") ? { status: 500 } : { status: 200 }));
    const retried = await client.dlq.retry(listed.dlqId);
    expect(retried.responses[0]!.messageId).toMatch(/^msg_/);
    await waitUntil(() => failing.requests.length >= 2, { what: "the retried delivery" });

    for (const n of [1, 2, 3]) await client.publish({ url: failing.url(`/x${n}`), body: "x", retries: 0 });
    const more: string[] = [];
    for (const n of [4, 5, 6])
      more.push((await client.publish({ url: failing.url(`/y${n}`), body: "y", retries: 0 })).messageId);
    const entries = await waitUntil(async () => {
      const page = await client.dlq.listMessages();
      const mine = page.messages.filter((m) => more.includes(m.messageId));
      return mine.length === 3 ? mine : undefined;
    });
    await client.dlq.delete(entries[0]!.dlqId);
    expect((await client.dlq.deleteMany({ dlqIds: [entries[1]!.dlqId, entries[2]!.dlqId] })).deleted).toBe(2);
  });
});
