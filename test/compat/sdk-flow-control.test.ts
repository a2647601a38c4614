import { Client, type FlowControlInfo } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FLOW_KEY_FIELDS } from "../helpers/flow-keys.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

/** The SDK's flow-control calls, and publish with flowControl, against the default server (no FERRY_DIALECT). */
let server: TestServer;
let client: Client;
let receiver: Receiver;

beforeAll(async () => {
  server = await startTestServer({ env: { FERRY_DESTINATION_ALLOW: "127.0.0.0/8,::1" } });
  client = new Client({ baseUrl: server.url, token: server.token, devMode: false, retry: false });
  receiver = await Receiver.start();
});
afterAll(async () => {
  await server.stop();
  await receiver.close();
});

/** Every field of FlowControlInfo, read as the SDK's type promises: a number or a boolean, never missing. */
function expectEveryField(info: FlowControlInfo): void {
  expect(Object.keys(info).sort()).toEqual([...FLOW_KEY_FIELDS].sort());
  for (const n of [
    info.waitListSize,
    info.parallelismMax,
    info.parallelismCount,
    info.rateMax,
    info.rateCount,
    info.ratePeriod,
    info.ratePeriodStart,
  ]) {
    expect(typeof n).toBe("number");
  }
  for (const b of [info.isPaused, info.isPinnedParallelism, info.isPinnedRate]) expect(typeof b).toBe("boolean");
}

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
    expectEveryField(info);
    expect(info).toMatchObject({
      flowControlKey: "sdk-key",
      parallelismMax: 1,
      rateMax: 10,
      ratePeriod: 60,
      isPaused: false,
      isPinnedParallelism: false,
      isPinnedRate: false,
    });
    expect(info.ratePeriodStart).toBeGreaterThan(0);
    const global = await client.flowControl.getGlobalParallelism();
    expect(global.parallelismMax).toBeGreaterThan(0);

    await client.flowControl.pause("sdk-key");
    const paused = await client.flowControl.get("sdk-key");
    expectEveryField(paused);
    expect(paused.isPaused).toBe(true);
    await client.flowControl.resume("sdk-key");
    const resumed = await client.flowControl.get("sdk-key");
    expectEveryField(resumed);
    expect(resumed.isPaused).toBe(false);
    await receiver.waitForCount(3);
    expect(receiver.maxConcurrent).toBe(1);
    // Everything delivered: the wait list and the in-flight count are numbers, 0.
    const drained = await waitUntil(async () => {
      const i = await client.flowControl.get("sdk-key");
      return i.parallelismCount === 0 ? i : undefined;
    });
    expectEveryField(drained);
    expect(drained.waitListSize).toBe(0);

    await client.flowControl.pin("sdk-key", { parallelism: 4, rate: 20, period: 30 });
    const pinned = await client.flowControl.get("sdk-key");
    expectEveryField(pinned);
    expect(pinned).toMatchObject({
      parallelismMax: 4,
      rateMax: 20,
      ratePeriod: 30,
      isPinnedParallelism: true,
      isPinnedRate: true,
    });
    // One part at a time, then both.
    await client.flowControl.unpin("sdk-key", { parallelism: true });
    const half = await client.flowControl.get("sdk-key");
    expectEveryField(half);
    expect(half).toMatchObject({ isPinnedParallelism: false, isPinnedRate: true });
    await client.flowControl.pin("sdk-key", { parallelism: 4 });
    await client.flowControl.unpin("sdk-key", { parallelism: true, rate: true });
    const unpinned = await client.flowControl.get("sdk-key");
    expectEveryField(unpinned);
    expect(unpinned.isPinnedParallelism).toBe(false);
    expect(unpinned.isPinnedRate).toBe(false);
    await client.flowControl.resetRate("sdk-key");
    const reset = await client.flowControl.get("sdk-key");
    expectEveryField(reset);
    expect(reset.rateCount).toBe(0);
  });
});
