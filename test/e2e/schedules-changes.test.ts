import { describe, expect, it } from "vitest";
import { OffsetClock } from "../../src/domain/clock.js";
import { BASE, boot, create, MIN, receiver, runScheduler, SEC, setNow, settle } from "./schedules-fixture.js";

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
