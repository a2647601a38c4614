import { Client, QstashError } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";

/** The SDK's calls with the account's read-only token (docs/errors.md "Read-only token"), on the default server. */
let server: TestServer;
let full: Client;
let readOnly: Client;
let readOnlyToken: string;

beforeAll(async () => {
  server = await startTestServer({ env: { FERRY_DESTINATION_ALLOW: "127.0.0.0/8,::1" } });
  readOnlyToken = server.ferry.bootstrap.account.readOnlyToken!;
  full = new Client({ baseUrl: server.url, token: server.token, devMode: false, retry: false });
  readOnly = new Client({ baseUrl: server.url, token: readOnlyToken, devMode: false, retry: false });
});
afterAll(async () => {
  await server.stop();
});

/** The SDK throws a QstashError carrying the status; Ferry's body says why. */
async function refused(call: () => Promise<unknown>): Promise<void> {
  const error = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(QstashError);
  expect((error as QstashError).status).toBe(403);
  expect((error as QstashError).message).toMatch(/read-only token/);
}

describe("@upstash/qstash with the read-only token", () => {
  it("reads messages, logs, DLQ, schedules, queues, URL groups and flow control", async () => {
    const { messageId } = await full.publish({
      url: "http://127.0.0.1:9/ro",
      body: "b",
      delay: 3600,
      flowControl: { key: "ro-key", parallelism: 2 },
    });
    await full.queue({ queueName: "ro-queue" }).upsert({ parallelism: 1 });
    await full.urlGroups.addEndpoints({ name: "ro-group", endpoints: [{ url: "http://127.0.0.1:9/g" }] });
    const { scheduleId } = await full.schedules.create({ destination: "http://127.0.0.1:9/s", cron: "0 0 1 1 *" });

    expect((await readOnly.messages.get(messageId)).messageId).toBe(messageId);
    expect((await readOnly.logs({ filter: { messageId } })).logs.length).toBeGreaterThan(0);
    expect((await readOnly.events({ filter: { messageId } })).events.length).toBeGreaterThan(0);
    expect((await readOnly.dlq.listMessages()).messages).toEqual([]);
    expect((await readOnly.schedules.get(scheduleId)).scheduleId).toBe(scheduleId);
    expect((await readOnly.schedules.list()).map((s) => s.scheduleId)).toContain(scheduleId);
    expect((await readOnly.queue({ queueName: "ro-queue" }).get()).name).toBe("ro-queue");
    expect((await readOnly.queue().list()).map((q) => q.name)).toContain("ro-queue");
    expect((await readOnly.urlGroups.get("ro-group")).name).toBe("ro-group");
    expect((await readOnly.urlGroups.list()).map((g) => g.name)).toContain("ro-group");
    expect((await readOnly.flowControl.get("ro-key")).flowControlKey).toBe("ro-key");
    expect((await readOnly.flowControl.getGlobalParallelism()).parallelismMax).toBeGreaterThan(0);
  });

  it("is refused every call that publishes, changes or deletes, with 403", async () => {
    await refused(() => readOnly.publish({ url: "http://127.0.0.1:9/ro", body: "b" }));
    await refused(() => readOnly.publishJSON({ url: "http://127.0.0.1:9/ro", body: { a: 1 } }));
    await refused(() => readOnly.batch([{ url: "http://127.0.0.1:9/ro", body: "b" }]));
    await refused(() => readOnly.queue({ queueName: "ro-queue" }).enqueue({ url: "http://127.0.0.1:9/q", body: "b" }));
    await refused(() => readOnly.queue({ queueName: "ro-queue2" }).upsert({ parallelism: 1 }));
    await refused(() => readOnly.queue({ queueName: "ro-queue" }).pause());
    await refused(() => readOnly.queue({ queueName: "ro-queue" }).delete());
    await refused(() => readOnly.messages.delete("msg_x"));
    await refused(() => readOnly.messages.deleteAll());
    await refused(() => readOnly.schedules.create({ destination: "http://127.0.0.1:9/s", cron: "* * * * *" }));
    await refused(() => readOnly.schedules.pause({ schedule: "scd_x" }));
    await refused(() => readOnly.urlGroups.addEndpoints({ name: "g2", endpoints: [{ url: "http://127.0.0.1:9/g" }] }));
    await refused(() => readOnly.urlGroups.delete("ro-group"));
    await refused(() => readOnly.dlq.delete("1-1"));
    await refused(() => readOnly.dlq.retry({ dlqIds: ["1-1"] }));
    await refused(() => readOnly.flowControl.pause("ro-key"));
    await refused(() => readOnly.flowControl.pin("ro-key", { parallelism: 1 }));
    await refused(() => readOnly.flowControl.resetRate("ro-key"));
    // Nothing changed: the group and the queue are still there, unpaused.
    expect((await full.urlGroups.get("ro-group")).name).toBe("ro-group");
    expect((await full.queue({ queueName: "ro-queue" }).get()).paused).toBe(false);
  });

  it("works as the qstash_token query parameter too", async () => {
    const q = `qstash_token=${encodeURIComponent(readOnlyToken)}`;
    expect((await server.call("GET", `/v2/queues?${q}`, { token: null })).status).toBe(200);
    const keys = await server.call("GET", `/v2/keys?${q}`, { token: null });
    expect(keys.status).toBe(403);
    expect(keys.json.error).toMatch(/read-only token/);
  });
});
