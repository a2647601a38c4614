import { Client } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

/** The SDK's flow-control calls, and publish with flowControl, against Ferry in the upstash dialect. */
let server: TestServer;
let client: Client;
let receiver: Receiver;

beforeAll(async () => {
  server = await startTestServer({ env: { FERRY_DIALECT: "upstash", FERRY_DESTINATION_ALLOW: "127.0.0.0/8,::1" } });
  client = new Client({ baseUrl: server.url, token: server.token, devMode: false, retry: false });
  receiver = await Receiver.start();
});
afterAll(async () => {
  await server.stop();
  await receiver.close();
});

describe("flowControl", () => {
  it("publish with flowControl, get, pause, resume, pin, unpin, resetRate, getGlobalParallelism", async () => {
    receiver.setDefault({ status: 200, delayMs: 300 });
    for (let i = 0; i < 3; i++) {
      await client.publish({
        url: receiver.url(`/fc${i}`),
        body: "f",
        flowControl: { key: "sdk-key", parallelism: 1, rate: 10, period: "1m" },
      });
    }
    const info = await waitUntil(async () => {
      const i = await client.flowControl.get("sdk-key");
      return i.parallelismCount === 1 ? i : undefined;
    });
    expect(info).toMatchObject({ flowControlKey: "sdk-key", parallelismMax: 1, rateMax: 10, ratePeriod: 60 });
    const global = await client.flowControl.getGlobalParallelism();
    expect(global.parallelismMax).toBeGreaterThan(0);

    await client.flowControl.pause("sdk-key");
    expect((await client.flowControl.get("sdk-key")).isPaused).toBe(true);
    await client.flowControl.resume("sdk-key");
    expect((await client.flowControl.get("sdk-key")).isPaused ?? false).toBe(false);
    await receiver.waitForCount(3);
    expect(receiver.maxConcurrent).toBe(1);

    await client.flowControl.pin("sdk-key", { parallelism: 4, rate: 20, period: 30 });
    expect(await client.flowControl.get("sdk-key")).toMatchObject({
      parallelismMax: 4,
      rateMax: 20,
      ratePeriod: 30,
      isPinnedParallelism: true,
      isPinnedRate: true,
    });
    await client.flowControl.unpin("sdk-key", { parallelism: true, rate: true });
    const unpinned = await client.flowControl.get("sdk-key");
    expect(unpinned.isPinnedParallelism ?? false).toBe(false);
    expect(unpinned.isPinnedRate ?? false).toBe(false);
    await client.flowControl.resetRate("sdk-key");
    expect((await client.flowControl.get("sdk-key")).rateCount ?? 0).toBe(0);
  });
});
