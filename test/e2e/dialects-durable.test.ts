import { Client, Receiver as SdkReceiver } from "@upstash/qstash";
import { describe, expect, it } from "vitest";
import { OffsetClock } from "../../src/domain/clock.js";
import type { ReceivedRequest } from "../helpers/receiver.js";
import { TEST_CURRENT_KEY, TEST_NEXT_KEY } from "../helpers/server.js";
import { verifySignature } from "../helpers/signature.js";
import { waitUntil } from "../helpers/wait.js";
import {
  BASE,
  boot,
  create,
  HOUR,
  MIN,
  receiver,
  runScheduler,
  SEC,
  setNow,
  sharedDataDir,
} from "./schedules-fixture.js";

/**
 * The dialect a message or a schedule was published in is stored with it (docs/messaging.md "Dialects"): a delayed
 * message, a retry due after a restart and a schedule's ticks are delivered in their publisher's names by the next
 * process, on the default server (no FERRY_DIALECT), on either store.
 */
const sdkVerifies = (got: ReceivedRequest, url: string) =>
  new SdkReceiver({ currentSigningKey: TEST_CURRENT_KEY, nextSigningKey: TEST_NEXT_KEY }).verify({
    signature: String(got.headers["upstash-signature"]),
    body: got.text,
    url,
  });

async function expectOfficial(got: ReceivedRequest, url: string): Promise<void> {
  expect(got.headers["user-agent"]).toBe("Upstash-QStash");
  expect(Object.keys(got.headers).filter((h) => h.startsWith("svc-"))).toEqual([]);
  expect(await sdkVerifies(got, url)).toBe(true);
}

async function expectNeutral(got: ReceivedRequest, url: string): Promise<void> {
  expect(got.headers["user-agent"]).toMatch(/^Ferry\//);
  expect(Object.keys(got.headers).filter((h) => h.startsWith("upstash-"))).toEqual([]);
  const signature = got.headers["svc-signature"];
  await verifySignature({ signature, key: TEST_CURRENT_KEY, url, body: got.body, issuer: "Ferry" });
}

describe("a publisher's dialect across a restart", () => {
  it("delayed messages, a pending retry and schedules keep it", async () => {
    const clock = new OffsetClock();
    setNow(clock, BASE + 5 * SEC);
    const dataDir = sharedDataDir();
    const first = await boot(clock, { dataDir });
    const r = await receiver();
    const sdk = new Client({ baseUrl: first.url, token: first.token, devMode: false, retry: false });
    const at = (path: string) => r.requests.filter((q) => q.url === path);

    // The first attempt fails; the retry is due in an hour, after the restart.
    r.setDefault((url) => (url === "/retry/official" && at(url).length === 0 ? { status: 500 } : { status: 200 }));
    const retrying = await sdk.publish({ url: r.url("/retry/official"), body: "r", retries: 1, retryDelay: "3600000" });
    await waitUntil(async () => {
      const logs = await first.call("GET", `/v2/logs?messageId=${retrying.messageId}&state=RETRY`);
      return logs.json.logs.length > 0 ? true : undefined;
    });

    await sdk.publish({ url: r.url("/later/official"), body: "o", delay: 3600 });
    const neutral = await first.call("POST", `/v2/publish/${r.url("/later/neutral")}`, {
      headers: { "Svc-Delay": "1h" },
      body: "n",
    });
    expect(neutral.status).toBe(200);
    await sdk.schedules.create({ destination: r.url("/tick/official"), cron: "*/10 * * * *" });
    expect((await create(first, r.url("/tick/neutral"), { "svc-cron": "*/10 * * * *" })).status).toBe(200);
    await first.stop();

    setNow(clock, BASE + 2 * HOUR);
    const second = await boot(clock, { dataDir });
    const got = await waitUntil(async () => {
      const all = [at("/retry/official")[1], at("/later/official")[0], at("/later/neutral")[0]];
      return all.every((x) => x !== undefined) ? (all as ReceivedRequest[]) : undefined;
    });
    expect(got[0]!.headers["upstash-retried"]).toBe("1");
    await expectOfficial(got[0]!, r.url("/retry/official"));
    await expectOfficial(got[1]!, r.url("/later/official"));
    await expectNeutral(got[2]!, r.url("/later/neutral"));

    // Ticks missed while stopped are skipped; the next one fires each schedule in the names it was created in.
    setNow(clock, BASE + 2 * HOUR + 10 * MIN);
    await runScheduler(second);
    await expectOfficial(await r.waitForPath("/tick/official"), r.url("/tick/official"));
    await expectNeutral(await r.waitForPath("/tick/neutral"), r.url("/tick/neutral"));
  });
});
