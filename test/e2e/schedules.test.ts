import { describe, expect, it } from "vitest";
import { OffsetClock } from "../../src/domain/clock.js";
import { testStore } from "../helpers/server.js";
import { BASE, boot, create, HOUR, MIN, receiver, runScheduler, SEC, setNow, settle, sharedDataDir } from "./schedules-fixture.js";

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

  it(`fires once when ${testStore === "postgres" ? "two nodes share one database and run" : "concurrent passes of"} the scheduler at the same moment`, async () => {
    const clock = new OffsetClock();
    const dataDir = sharedDataDir();
    const r = await receiver();
    setNow(clock, BASE + 5 * SEC);
    const a = await boot(clock, { dataDir });
    // SQLite takes one process per file (docs/operations.md): a second node exists on PostgreSQL only.
    const b = testStore === "postgres" ? await boot(clock, { dataDir }) : a;
    await create(a, r.url("/nodes"), { "svc-cron": "* * * * *" });

    setNow(clock, BASE + MIN + SEC);
    const counts = await Promise.all([runScheduler(a), runScheduler(b), runScheduler(a), runScheduler(b)]);
    expect(counts.reduce((x, y) => (x ?? 0) + (y ?? 0), 0)).toBe(1);
    await r.waitForCount(1);
    await r.expectQuiet(300);
    expect(r.requests).toHaveLength(1);
  });
});
