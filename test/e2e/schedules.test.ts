import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { OffsetClock } from "../../src/domain/clock.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
/** A whole hour (UTC) far from any daylight-saving change; every test positions the injected clock around it. */
const BASE = Date.UTC(2030, 0, 7, 12, 0, 0);

/**
 * The scheduler runs only when a test asks (runOnce) or at start-up; leases outlive every clock jump, so the
 * rescuer never re-delivers a message whose attempt is still running when a test moves time forward.
 */
const ENV = { FERRY_SCHEDULER_INTERVAL_MS: "3600000", FERRY_LEASE_MS: "3600000" };

// Everything a test starts is stopped after it, whatever the outcome.
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

function setNow(clock: OffsetClock, ms: number): void {
  clock.offsetMs = ms - Date.now();
}

async function receiver(): Promise<Receiver> {
  const r = await Receiver.start();
  cleanup.push(() => r.close());
  return r;
}

async function boot(
  clock: OffsetClock,
  opts: { env?: Record<string, string>; dataDir?: string } = {},
): Promise<TestServer> {
  const server = await startTestServer({
    clock,
    env: { ...ENV, ...opts.env },
    ...(opts.dataDir ? { dataDir: opts.dataDir } : {}),
  });
  let stopped = false;
  const stop = server.stop.bind(server);
  server.stop = async (o) => {
    if (stopped) return;
    stopped = true;
    await stop({ keepData: opts.dataDir !== undefined, ...o });
  };
  cleanup.push(() => server.stop());
  return server;
}

/** A data directory that outlives one server (restart tests); removed after the test. */
function sharedDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "ferry-sched-"));
  cleanup.unshift(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function create(server: TestServer, destination: string, headers: Record<string, string>, body?: string) {
  return server.call("POST", `/v2/schedules/${destination}`, { headers, ...(body !== undefined ? { body } : {}) });
}

const runScheduler = (server: TestServer) => server.ferry.loops.scheduler!.runOnce() as Promise<number | undefined>;

/** Waits until `count` requests arrived and each of those messages has finished (left the hot table). */
async function settle(server: TestServer, r: Receiver, count: number) {
  const got = await r.waitForCount(count);
  for (const req of got) {
    const id = String(req.headers["svc-message-id"]);
    for (let i = 0; i < 200; i++) {
      if ((await server.call("GET", `/v2/messages/${id}`)).status === 404) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  return got;
}

describe("creating and reading schedules", () => {
  it("stores the publish configuration and returns the reference's record", async () => {
    const clock = new OffsetClock();
    setNow(clock, BASE + 5 * SEC);
    const server = await boot(clock);
    const r = await receiver();
    const destination = r.url("/hook?keep=1");

    const res = await create(
      server,
      `${destination}&svc-retries=2`,
      {
        "svc-cron": "  */10 * * * *  ",
        "content-type": "application/json",
        "svc-forward-x-custom": "abc",
        "svc-delay": "30s",
        "svc-timeout": "20s",
        "svc-label": "nightly",
        "svc-callback": r.url("/cb"),
        "svc-retry-delay": "1000 * retried",
      },
      '{"a":1}',
    );
    expect(res.status).toBe(200);
    expect(Object.keys(res.json)).toEqual(["scheduleId"]);
    expect(res.json.scheduleId).toMatch(/^scd_[0-9A-Z]{26}$/);
    const id = res.json.scheduleId;

    const got = await server.call("GET", `/v2/schedules/${id}`);
    expect(got.status).toBe(200);
    expect(got.json).toEqual({
      scheduleId: id,
      cron: "*/10 * * * *",
      createdAt: expect.any(Number),
      destination,
      method: "POST",
      isPaused: false,
      retries: 2,
      header: { "Content-Type": ["application/json"], "X-Custom": ["abc"] },
      body: '{"a":1}',
      delay: 30,
      timeout: 20,
      callback: r.url("/cb"),
      callerIP: "127.0.0.1",
      callerIp: "127.0.0.1",
      retryDelayExpression: "1000 * retried",
      label: "nightly",
      labels: ["nightly"],
      nextScheduleTime: BASE + 10 * MIN,
    });

    // The injected clock keeps running in real time from BASE + 5 s (minutes of slack: a loaded machine is slow, and
    // BASE is far enough from the real clock that any reading of the real clock would fail this).
    expect(got.json.createdAt - (BASE + 5 * SEC)).toBeGreaterThanOrEqual(0);
    expect(got.json.createdAt - (BASE + 5 * SEC)).toBeLessThan(5 * MIN);
    const list = await server.call("GET", "/v2/schedules");
    expect(list.status).toBe(200);
    expect(list.json).toEqual([got.json]);
    // The Go SDK spells the path with a capital S.
    expect((await server.call("GET", `/v2/Schedules/${id}`)).json).toEqual(got.json);
    const viaGo = await create(server, r.url("/go"), { "svc-cron": "0 * * * *" });
    expect(viaGo.status).toBe(200);
    expect((await server.call("GET", `/v2/Schedules/${viaGo.json.scheduleId}`)).json.destination).toBe(r.url("/go"));
  });

  it("lists [] when there are none and answers 404 for an unknown id", async () => {
    const server = await boot(new OffsetClock());
    expect((await server.call("GET", "/v2/schedules")).json).toEqual([]);
    const missing = await server.call("GET", "/v2/schedules/scd_nope");
    expect(missing.status).toBe(404);
    expect(missing.json.error).toMatch(/schedule scd_nope not found/);
  });

  it("deletes with 200 and an empty body; a deleted schedule fires nothing", async () => {
    const clock = new OffsetClock();
    setNow(clock, BASE + 5 * SEC);
    const server = await boot(clock);
    const r = await receiver();
    const { json } = await create(server, r.url("/del"), { "svc-cron": "* * * * *" });
    const del = await server.call("DELETE", `/v2/schedules/${json.scheduleId}`);
    expect(del.status).toBe(200);
    expect(del.text).toBe("");
    expect((await server.call("GET", `/v2/schedules/${json.scheduleId}`)).status).toBe(404);
    expect((await server.call("DELETE", `/v2/schedules/${json.scheduleId}`)).status).toBe(404);
    setNow(clock, BASE + MIN + SEC);
    expect(await runScheduler(server)).toBe(0);
    expect(r.requests).toHaveLength(0);
  });
});

describe("firing", () => {
  it("publishes exactly one message per tick, carrying the schedule id and the creator's IP", async () => {
    const clock = new OffsetClock();
    setNow(clock, BASE + 5 * SEC);
    const server = await boot(clock);
    const r = await receiver();
    const { json } = await create(
      server,
      r.url("/tick?x=1"),
      { "svc-cron": "* * * * *", "content-type": "text/plain", "svc-forward-x-job": "report" },
      "run",
    );
    const id = json.scheduleId;

    // Not yet due: nothing fires, however often the scheduler runs.
    setNow(clock, BASE + 59 * SEC);
    expect(await runScheduler(server)).toBe(0);

    setNow(clock, BASE + MIN + SEC);
    expect(await runScheduler(server)).toBe(1);
    expect(await runScheduler(server)).toBe(0);
    const [first] = await settle(server, r, 1);
    expect(first!.url).toBe("/tick?x=1");
    expect(first!.text).toBe("run");
    expect(first!.headers["content-type"]).toBe("text/plain");
    expect(first!.headers["x-job"]).toBe("report");
    expect(first!.headers["svc-schedule-id"]).toBe(id);
    expect(first!.headers["svc-caller-ip"]).toBe("127.0.0.1");

    let record = (await server.call("GET", `/v2/schedules/${id}`)).json;
    expect(record.lastScheduleTime).toBe(BASE + MIN);
    expect(record.nextScheduleTime).toBe(BASE + 2 * MIN);
    expect(record.lastScheduleStates).toEqual({ [String(first!.headers["svc-message-id"])]: "SUCCESS" });

    setNow(clock, BASE + 2 * MIN + SEC);
    expect(await runScheduler(server)).toBe(1);
    expect(await runScheduler(server)).toBe(0);
    await settle(server, r, 2);
    await r.expectQuiet(200);
    expect(r.requests).toHaveLength(2);
    record = (await server.call("GET", `/v2/schedules/${id}`)).json;
    expect(record.lastScheduleTime).toBe(BASE + 2 * MIN);
    expect(record.nextScheduleTime).toBe(BASE + 3 * MIN);

    // Triggered messages are ordinary messages: their log entries carry the schedule id.
    const logs = await server.call("GET", `/v2/events?scheduleId=${id}&state=CREATED`);
    expect(logs.json.events).toHaveLength(2);
    expect(logs.json.events.every((e: { callerIp: string }) => e.callerIp === "127.0.0.1")).toBe(true);
  });

  it("delays each triggered message by Svc-Delay", async () => {
    const clock = new OffsetClock();
    setNow(clock, BASE + 5 * SEC);
    const server = await boot(clock);
    const r = await receiver();
    const { json } = await create(server, r.url("/delayed"), { "svc-cron": "* * * * *", "svc-delay": "30s" });

    setNow(clock, BASE + MIN + SEC);
    expect(await runScheduler(server)).toBe(1);
    const record = (await server.call("GET", `/v2/schedules/${json.scheduleId}`)).json;
    const [messageId, state] = Object.entries(record.lastScheduleStates)[0]!;
    expect(state).toBe("IN_PROGRESS");
    const message = (await server.call("GET", `/v2/messages/${messageId}`)).json;
    expect(message.scheduleId).toBe(json.scheduleId);
    expect(message.createdAt).toBeGreaterThanOrEqual(BASE + MIN + SEC);
    expect(message.notBefore - message.createdAt).toBe(30 * SEC);
    await server.ferry.dispatcher.runOnce();
    await r.expectQuiet(200);

    setNow(clock, BASE + MIN + 32 * SEC);
    await server.ferry.dispatcher.runOnce();
    const got = await r.next();
    expect(got.headers["svc-message-id"]).toBe(messageId);
  });

  it("shows a tick whose message failed as FAIL in lastScheduleStates", async () => {
    const clock = new OffsetClock();
    setNow(clock, BASE + 5 * SEC);
    const server = await boot(clock);
    const r = await receiver();
    r.setDefault({ status: 500 });
    const { json } = await create(server, r.url("/fails"), { "svc-cron": "* * * * *", "svc-retries": "0" });
    setNow(clock, BASE + MIN + SEC);
    expect(await runScheduler(server)).toBe(1);
    const [got] = await settle(server, r, 1);
    const record = (await server.call("GET", `/v2/schedules/${json.scheduleId}`)).json;
    expect(record.lastScheduleStates).toEqual({ [String(got!.headers["svc-message-id"])]: "FAIL" });
  });

  it("is picked up by the background loop without runOnce", async () => {
    const clock = new OffsetClock();
    setNow(clock, BASE + 5 * SEC);
    const server = await boot(clock, { env: { FERRY_SCHEDULER_INTERVAL_MS: "100" } });
    const r = await receiver();
    await create(server, r.url("/auto"), { "svc-cron": "* * * * *" });
    setNow(clock, BASE + MIN + SEC);
    const got = await r.next();
    expect(got.url).toBe("/auto");
    await r.expectQuiet(400);
    expect(r.requests).toHaveLength(1);
  });

  it("passes Svc-Queue-Name to the triggered messages", async () => {
    const clock = new OffsetClock();
    setNow(clock, BASE + 5 * SEC);
    const server = await boot(clock);
    const r = await receiver();
    const { json } = await create(server, r.url("/q"), { "svc-cron": "* * * * *", "svc-queue-name": "reports.v1" });
    expect((await server.call("GET", `/v2/schedules/${json.scheduleId}`)).json.queueName).toBe("reports.v1");
    setNow(clock, BASE + MIN + SEC);
    expect(await runScheduler(server)).toBe(1);
    const record = (await server.call("GET", `/v2/schedules/${json.scheduleId}`)).json;
    const messageId = Object.keys(record.lastScheduleStates)[0]!;
    const message = (await server.call("GET", `/v2/messages/${messageId}`)).json;
    expect(message.queueName).toBe("reports.v1");
    expect(message.scheduleId).toBe(json.scheduleId);
  });
});

describe("exactly once across restarts and nodes", () => {
  it("never fires a tick twice after a restart, and fires the next tick once", async () => {
    const clock = new OffsetClock();
    const dataDir = sharedDataDir();
    const r = await receiver();
    setNow(clock, BASE + 5 * SEC);
    let server = await boot(clock, { dataDir });
    const { json } = await create(server, r.url("/restart"), { "svc-cron": "* * * * *" });

    setNow(clock, BASE + MIN + SEC);
    expect(await runScheduler(server)).toBe(1);
    await settle(server, r, 1);
    await server.stop();

    // Same instant, new process: the tick was claimed in the store, so neither start-up nor a pass fires it again.
    server = await boot(clock, { dataDir });
    expect(await runScheduler(server)).toBe(0);
    await r.expectQuiet(200);
    expect(r.requests).toHaveLength(1);

    setNow(clock, BASE + 2 * MIN + SEC);
    expect(await runScheduler(server)).toBe(1);
    await settle(server, r, 2);
    await server.stop();

    server = await boot(clock, { dataDir });
    expect(await runScheduler(server)).toBe(0);
    await r.expectQuiet(200);
    expect(r.requests).toHaveLength(2);
    const record = (await server.call("GET", `/v2/schedules/${json.scheduleId}`)).json;
    expect(record.lastScheduleTime).toBe(BASE + 2 * MIN);
  });

  it("fires a tick missed within the last 60 s once at start-up, and skips older missed ticks", async () => {
    const clock = new OffsetClock();
    const dataDir = sharedDataDir();
    const r = await receiver();
    setNow(clock, BASE + 5 * SEC);
    let server = await boot(clock, { dataDir });
    const { json } = await create(server, r.url("/missed"), { "svc-cron": "0 * * * *" });
    await server.stop();

    // Down across the BASE+1h tick; back 30 s later: the start-up pass fires it, once.
    setNow(clock, BASE + HOUR + 30 * SEC);
    server = await boot(clock, { dataDir });
    const [got] = await settle(server, r, 1);
    expect(got!.headers["svc-schedule-id"]).toBe(json.scheduleId);
    expect(await runScheduler(server)).toBe(0);
    let record = (await server.call("GET", `/v2/schedules/${json.scheduleId}`)).json;
    expect(record.lastScheduleTime).toBe(BASE + HOUR);
    expect(record.nextScheduleTime).toBe(BASE + 2 * HOUR);
    await server.stop();

    // Down across the BASE+2h tick; back 90 s later: too old, skipped, and the next tick is the one after now.
    setNow(clock, BASE + 2 * HOUR + 90 * SEC);
    server = await boot(clock, { dataDir });
    expect(await runScheduler(server)).toBe(0);
    await r.expectQuiet(200);
    expect(r.requests).toHaveLength(1);
    record = (await server.call("GET", `/v2/schedules/${json.scheduleId}`)).json;
    expect(record.lastScheduleTime).toBe(BASE + HOUR);
    expect(record.nextScheduleTime).toBe(BASE + 3 * HOUR);
  });

  it("fires once when two nodes share one database and run the scheduler at the same moment", async () => {
    const clock = new OffsetClock();
    const dataDir = sharedDataDir();
    const r = await receiver();
    setNow(clock, BASE + 5 * SEC);
    const a = await boot(clock, { dataDir });
    const b = await boot(clock, { dataDir });
    await create(a, r.url("/nodes"), { "svc-cron": "* * * * *" });

    setNow(clock, BASE + MIN + SEC);
    const counts = await Promise.all([runScheduler(a), runScheduler(b), runScheduler(a), runScheduler(b)]);
    expect(counts.reduce((x, y) => (x ?? 0) + (y ?? 0), 0)).toBe(1);
    await r.waitForCount(1);
    await r.expectQuiet(300);
    expect(r.requests).toHaveLength(1);
  });
});

describe("CRON_TZ", () => {
  it("follows the zone across the March daylight-saving change (America/New_York)", async () => {
    const clock = new OffsetClock();
    const r = await receiver();
    setNow(clock, Date.parse("2026-03-06T12:00:00Z"));
    const server = await boot(clock);
    const { json } = await create(server, r.url("/dst"), { "svc-cron": "CRON_TZ=America/New_York 30 2 * * *" });
    const id = json.scheduleId;
    const next = async () => (await server.call("GET", `/v2/schedules/${id}`)).json.nextScheduleTime;

    // 02:30 EST = 07:30Z. On 8 March 02:30 does not exist (clocks jump 02:00 → 03:00): the tick comes at the
    // first valid time after the gap, 03:00 EDT = 07:00Z. From 9 March, 02:30 EDT = 06:30Z.
    const expected = ["2026-03-07T07:30:00Z", "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"];
    expect(await next()).toBe(Date.parse(expected[0]!));
    for (let i = 0; i < 3; i++) {
      setNow(clock, Date.parse(expected[i]!) - 2 * SEC);
      expect(await runScheduler(server)).toBe(0);
      setNow(clock, Date.parse(expected[i]!) + 2 * SEC);
      expect(await runScheduler(server)).toBe(1);
      await settle(server, r, i + 1);
      expect(await next()).toBe(Date.parse(expected[i + 1]!));
    }
    // 07:30Z on 8 March (02:30 at the old offset) fired nothing: three ticks, three messages.
    expect(r.requests).toHaveLength(3);
  });
});

describe("overwrite", () => {
  it("replaces every field of the schedule with the same id; fields not sent are cleared", async () => {
    const clock = new OffsetClock();
    setNow(clock, BASE + 5 * SEC);
    const server = await boot(clock);
    const r = await receiver();
    const first = await create(
      server,
      r.url("/v1"),
      {
        "svc-cron": "0 * * * *",
        "svc-schedule-id": "nightly.report-1",
        "content-type": "text/plain",
        "svc-forward-x-old": "1",
        "svc-retries": "5",
        "svc-delay": "10s",
        "svc-queue-name": "old-queue",
      },
      "old body",
    );
    expect(first.json).toEqual({ scheduleId: "nightly.report-1" });
    await server.call("PATCH", "/v2/schedules/nightly.report-1/pause");

    const second = await create(server, r.url("/v2"), {
      "svc-cron": "* * * * *",
      "svc-schedule-id": "nightly.report-1",
    });
    expect(second.status).toBe(200);
    expect(second.json).toEqual({ scheduleId: "nightly.report-1" });
    const list = (await server.call("GET", "/v2/schedules")).json;
    expect(list).toHaveLength(1);
    expect(list[0]).toEqual({
      scheduleId: "nightly.report-1",
      cron: "* * * * *",
      createdAt: expect.any(Number),
      destination: r.url("/v2"),
      method: "POST",
      isPaused: false,
      retries: 3,
      callerIP: "127.0.0.1",
      callerIp: "127.0.0.1",
      nextScheduleTime: BASE + MIN,
    });

    // The tick uses the new configuration only.
    setNow(clock, BASE + MIN + SEC);
    expect(await runScheduler(server)).toBe(1);
    const got = await r.next();
    expect(got.url).toBe("/v2");
    expect(got.text).toBe("");
    expect(got.headers["x-old"]).toBeUndefined();
  });
});

describe("pause and resume", () => {
  it("fires nothing while paused and does not catch up missed ticks on resume (PATCH and POST)", async () => {
    const clock = new OffsetClock();
    setNow(clock, BASE + 5 * SEC);
    const server = await boot(clock);
    const r = await receiver();
    const { json } = await create(server, r.url("/paused"), { "svc-cron": "* * * * *" });
    const id = json.scheduleId;

    const paused = await server.call("PATCH", `/v2/schedules/${id}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.text).toBe("");
    expect((await server.call("POST", `/v2/schedules/${id}/pause`)).status).toBe(200); // idempotent
    expect((await server.call("GET", `/v2/schedules/${id}`)).json.isPaused).toBe(true);

    // Ticks pass while paused: nothing fires, and the next tick moves on.
    setNow(clock, BASE + MIN + SEC);
    expect(await runScheduler(server)).toBe(0);
    let record = (await server.call("GET", `/v2/schedules/${id}`)).json;
    expect(record.nextScheduleTime).toBe(BASE + 2 * MIN);
    expect(record.lastScheduleTime).toBeUndefined();

    // The BASE+2m tick is missed while paused (no pass ran); resuming 2 s later does not fire it.
    setNow(clock, BASE + 2 * MIN + 2 * SEC);
    const resumed = await server.call("POST", `/v2/schedules/${id}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.text).toBe("");
    expect((await server.call("PATCH", `/v2/schedules/${id}/resume`)).status).toBe(200); // idempotent
    record = (await server.call("GET", `/v2/schedules/${id}`)).json;
    expect(record.isPaused).toBe(false);
    expect(record.nextScheduleTime).toBe(BASE + 3 * MIN);
    expect(await runScheduler(server)).toBe(0);
    await r.expectQuiet(200);
    expect(r.requests).toHaveLength(0);

    setNow(clock, BASE + 3 * MIN + SEC);
    expect(await runScheduler(server)).toBe(1);
    await r.waitForCount(1);
  });

  it("answers 404 for pause or resume of an unknown schedule", async () => {
    const server = await boot(new OffsetClock());
    expect((await server.call("POST", "/v2/schedules/nope/pause")).status).toBe(404);
    expect((await server.call("PATCH", "/v2/schedules/nope/resume")).status).toBe(404);
  });
});

describe("routing", () => {
  it("keeps pause and resume of an id apart from creating a schedule whose destination ends that way", async () => {
    const clock = new OffsetClock();
    setNow(clock, BASE + 5 * SEC);
    const server = await boot(clock);
    const r = await receiver();

    const toPause = await create(server, r.url("/jobs/pause"), { "svc-cron": "* * * * *" });
    expect(toPause.status).toBe(200);
    const toResume = await create(server, `${r.url("/resume")}?a=b`, { "svc-cron": "* * * * *" });
    expect(toResume.status).toBe(200);
    const records = (await server.call("GET", "/v2/schedules")).json;
    expect(records.map((s: { destination: string }) => s.destination)).toEqual([
      r.url("/jobs/pause"),
      `${r.url("/resume")}?a=b`,
    ]);
    expect(records.every((s: { isPaused: boolean }) => !s.isPaused)).toBe(true);

    // A percent-encoded destination is one segment, yet still a URL.
    const encoded = await create(server, encodeURIComponent(r.url("/enc/pause")), { "svc-cron": "* * * * *" });
    expect(encoded.status).toBe(200);
    expect((await server.call("GET", `/v2/schedules/${encoded.json.scheduleId}`)).json.destination).toBe(
      r.url("/enc/pause"),
    );
    await server.call("DELETE", `/v2/schedules/${encoded.json.scheduleId}`);

    // `{id}/pause` is the action, with a custom id too (and with the Go SDK's capital S).
    await create(server, r.url("/x"), { "svc-cron": "* * * * *", "svc-schedule-id": "my-job" });
    expect((await server.call("POST", "/v2/Schedules/my-job/pause")).status).toBe(200);
    expect((await server.call("GET", "/v2/schedules/my-job")).json.isPaused).toBe(true);
    expect((await server.call("GET", "/v2/schedules")).json).toHaveLength(3);

    // A single segment is a URL-group name: the group seam answers (404 until URL groups exist on this branch).
    const group = await create(server, "my-group", { "svc-cron": "* * * * *" });
    expect(group.status).toBe(404);
    expect(group.json.error).toMatch(/url group my-group not found/);
  });
});

describe("validation and quota", () => {
  it("answers 400 naming the field for bad input", async () => {
    const server = await boot(new OffsetClock());
    const r = await receiver();
    const dest = r.url("/v");
    const cases: [string, Record<string, string>, RegExp][] = [
      [dest, {}, /Svc-Cron/],
      [dest, { "svc-cron": "   " }, /Svc-Cron/],
      [dest, { "svc-cron": "61 * * * *" }, /Svc-Cron/],
      [dest, { "svc-cron": "* * * * * *" }, /Svc-Cron.*5 fields/],
      [dest, { "svc-cron": "* * * *" }, /Svc-Cron.*5 fields/],
      [dest, { "svc-cron": "CRON_TZ=Mars/Olympus 0 * * * *" }, /Svc-Cron.*time zone/],
      [dest, { "svc-cron": "0 0 30 2 *" }, /Svc-Cron.*never fires/],
      [dest, { "svc-cron": "* * * * *", "svc-schedule-id": "bad id" }, /Svc-Schedule-Id/],
      [dest, { "svc-cron": "* * * * *", "svc-schedule-id": "a/b" }, /Svc-Schedule-Id/],
      [dest, { "svc-cron": "* * * * *", "svc-queue-name": "bad queue!" }, /Svc-Queue-Name/],
      [dest, { "svc-cron": "* * * * *", "svc-not-before": "1893456000" }, /Svc-Not-Before/],
      [dest, { "svc-cron": "* * * * *", "svc-retries": "many" }, /Svc-Retries/],
      [dest, { "svc-cron": "* * * * *", "svc-delay": "soon" }, /Svc-Delay/],
      ["ftp://example.com/x", { "svc-cron": "* * * * *" }, /destination/],
      ["api/llm", { "svc-cron": "* * * * *" }, /destination/],
    ];
    for (const path of ["/v2/schedules", "/v2/schedules/"]) {
      const res = await server.call("POST", path, { headers: { "svc-cron": "* * * * *" } });
      expect(res.status).toBe(400);
      expect(res.json.error).toMatch(/^invalid destination/);
    }
    for (const [destination, headers, error] of cases) {
      const res = await create(server, destination, headers);
      expect(res.status, JSON.stringify(headers)).toBe(400);
      expect(res.json.error, JSON.stringify(headers)).toMatch(error);
    }
    // The cron may come as a query parameter too (webhook mode); it is trimmed.
    const viaQuery = await create(server, `${dest}?svc-cron=${encodeURIComponent(" 0 9 * * 1-5 ")}`, {});
    expect(viaQuery.status).toBe(200);
    expect((await server.call("GET", `/v2/schedules/${viaQuery.json.scheduleId}`)).json.cron).toBe("0 9 * * 1-5");
    expect((await server.call("GET", "/v2/schedules")).json).toHaveLength(1);
  });

  it("answers 412 past max_schedules, while an overwrite of an existing id still works", async () => {
    // The free plan allows 10 schedules.
    const server = await boot(new OffsetClock(), { env: { FERRY_DEFAULT_PLAN: "free" } });
    const r = await receiver();
    for (let i = 0; i < 10; i++) {
      const res = await create(server, r.url("/q"), { "svc-cron": "0 0 * * *", "svc-schedule-id": `s${i}` });
      expect(res.status).toBe(200);
    }
    const over = await create(server, r.url("/q"), { "svc-cron": "0 0 * * *" });
    expect(over.status).toBe(412);
    expect(over.json.error).toMatch(/max_schedules/);
    const overwrite = await create(server, r.url("/q2"), { "svc-cron": "0 1 * * *", "svc-schedule-id": "s3" });
    expect(overwrite.status).toBe(200);
    expect((await server.call("DELETE", "/v2/schedules/s0")).status).toBe(200);
    expect((await create(server, r.url("/q"), { "svc-cron": "0 0 * * *" })).status).toBe(200);
    expect((await server.call("GET", "/v2/schedules")).json).toHaveLength(10);
  });
});
