import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { OffsetClock } from "../../src/domain/clock.js";
import { createLogger } from "../../src/logger.js";
import type { SchedulerLoop } from "../../src/maintenance/scheduler.js";
import { eventually } from "../helpers/eventually.js";
import { metricValue, parseMetrics } from "../helpers/metrics.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, TEST_CURRENT_KEY, TEST_NEXT_KEY, TEST_TOKEN, type TestServer } from "../helpers/server.js";

/**
 * The failure lines of docs/operations.md "Logs", read from the server's own log output: the logger `ferry serve`
 * makes (src/logger.ts createLogger at the default level, info), writing to a stream this test reads. One line each
 * for a failed attempt, a move to the DLQ, a failed callback and a schedule that could not publish; none carries a
 * body, token or signing key; a failing destination is rate-limited; request lines only at debug.
 */
type Line = Record<string, unknown> & { msg: string; level: number };
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function serverWithLog(
  level: string,
  clock?: OffsetClock,
): Promise<{ server: TestServer; lines: () => Line[]; raw: string[] }> {
  const raw: string[] = [];
  const log = createLogger(level, { write: (s: string) => void raw.push(s) });
  // The scheduler runs when the test asks (runOnce); leases outlive the clock jumps.
  const env = { FERRY_SCHEDULER_INTERVAL_MS: "3600000", FERRY_LEASE_MS: "3600000" };
  const server = await startTestServer(clock ? { env, log, clock } : { env, log });
  cleanup.push(() => server.stop());
  return {
    server,
    raw,
    lines: () => raw.map((s) => JSON.parse(s) as Line),
  };
}

async function receiver(): Promise<Receiver> {
  const r = await Receiver.start();
  cleanup.push(() => r.close());
  return r;
}

/** A port on 127.0.0.1 with nothing listening: every attempt there is refused. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

const SECRET_BODY = "body-secret-payload-77";
const SECRET_ANSWER = "answer-secret-payload-78";

describe("failure lines at info", () => {
  it("a failed attempt, the move to the DLQ and a failed failure callback: one line each, ids, host and status, no secrets", async () => {
    const { server, lines, raw } = await serverWithLog("info");
    const dest = (await receiver()).setDefault({ status: 500, body: SECRET_ANSWER });
    const callback = (await receiver()).setDefault({ status: 503, body: SECRET_ANSWER });
    const res = await server.call("POST", `/v2/publish/${dest.url("/hook?secret=q")}`, {
      body: SECRET_BODY,
      headers: {
        "Svc-Retries": "1",
        "Svc-Retry-Delay": "0",
        "Svc-Failure-Callback": callback.url("/failed"),
        "Svc-Failure-Callback-Retries": "0",
      },
    });
    expect(res.status).toBe(200);
    const messageId = (res.json as { messageId: string }).messageId;
    await eventually(() => expect(lines().map((l) => l.msg)).toContain("failure callback failed; moved to the DLQ"), 15_000);

    const failures = lines().filter((l) => /failed/.test(l.msg));
    const host = new URL(dest.url()).host;
    expect(failures.filter((l) => l.messageId === messageId)).toEqual([
      expect.objectContaining({ level: 30, msg: "delivery attempt failed; retrying", host, status: 500, attempt: 1 }),
      expect.objectContaining({ level: 30, msg: "delivery failed; moved to the DLQ", host, status: 500, attempt: 2 }),
    ]);
    expect(failures[0]!.nextAttemptAt).toEqual(expect.any(String));
    expect(failures[1]!.dlqId).toEqual(expect.any(String));
    const cb = failures.find((l) => l.msg === "failure callback failed; moved to the DLQ")!;
    expect(cb).toMatchObject({ parentId: messageId, host: new URL(callback.url()).host, status: 503, attempt: 1 });

    // Never a body, the answer, the path or query, the token, a signing key or a signature.
    const output = raw.join("");
    for (const secret of [SECRET_BODY, SECRET_ANSWER, "secret=q", "/hook", TEST_TOKEN, TEST_CURRENT_KEY, TEST_NEXT_KEY]) {
      expect(output).not.toContain(secret);
    }
    expect(output.toLowerCase()).not.toContain("signature");
    // At info, no request lines.
    expect(lines().filter((l) => l.msg === "request")).toEqual([]);
  }, 30_000);

  it("a failing destination cannot flood the log: 5 lines a minute per host, the next one says how many were left out", async () => {
    const clock = new OffsetClock();
    const { server, lines } = await serverWithLog("info", clock);
    const down = `http://127.0.0.1:${await closedPort()}/down`;
    const host = new URL(down).host;
    const publish = () => server.call("POST", `/v2/publish/${down}`, { body: "x", headers: { "Svc-Retries": "0" } });
    for (let i = 0; i < 12; i++) expect((await publish()).status).toBe(200);
    // Every attempt's outcome recorded: its metric is counted in the same step that writes (or counts) its line. (The
    // DLQ itself can list a move before the commit's fsync returned, i.e. before the line.)
    const account = server.ferry.bootstrap.account.id;
    const failed = async () =>
      metricValue(parseMetrics((await server.call("GET", "/metrics")).text), "ferry_deliveries_total", {
        account,
        outcome: "failed",
      });
    await eventually(async () => expect(await failed(), JSON.stringify(lines())).toBe(12), 15_000);
    const ofHost = () => lines().filter((l) => l.host === host);
    expect(ofHost(), JSON.stringify(lines())).toHaveLength(5);
    expect(ofHost()[0]).toMatchObject({ msg: "delivery failed; moved to the DLQ", error: expect.stringMatching(/ECONNREFUSED/) });

    clock.offsetMs += 61_000;
    expect((await publish()).status).toBe(200);
    await eventually(() => expect(ofHost(), JSON.stringify(lines())).toHaveLength(6), 15_000);
    expect(ofHost()[5]).toMatchObject({ msg: "delivery failed; moved to the DLQ", suppressed: 7 });
  }, 30_000);

  it("a schedule whose URL group is gone: one line per tick that could not publish", async () => {
    const clock = new OffsetClock();
    const { server, lines } = await serverWithLog("info", clock);
    const r = await receiver();
    const json = { headers: { "content-type": "application/json" } };
    const group = await server.call("POST", "/v2/topics/gone/endpoints", {
      ...json,
      body: JSON.stringify({ endpoints: [{ url: r.url("/g") }] }),
    });
    expect(group.status).toBe(200);
    const created = await server.call("POST", "/v2/schedules/gone", { body: "tick", headers: { "Svc-Cron": "* * * * *" } });
    expect(created.status).toBe(200);
    const scheduleId = (created.json as { scheduleId: string }).scheduleId;
    expect((await server.call("DELETE", "/v2/topics/gone")).status).toBe(200);

    clock.offsetMs += 61_000;
    await (server.ferry.loops.scheduler as SchedulerLoop).runOnce();
    expect(lines().filter((l) => l.msg === "schedule could not publish")).toEqual([
      expect.objectContaining({ level: 30, scheduleId, urlGroup: "gone", error: expect.stringContaining("gone") }),
    ]);
  }, 30_000);
});

describe("request lines", () => {
  it("at debug: method, path without its query, status and duration; never at info", async () => {
    const { server, lines } = await serverWithLog("debug");
    const r = await receiver();
    expect((await server.call("POST", `/v2/publish/${r.url("/x")}?svc_token=${TEST_TOKEN}`, { body: SECRET_BODY })).status).toBe(
      200,
    );
    await eventually(() => expect(lines().filter((l) => l.msg === "request")).not.toEqual([]));
    const line = lines().find((l) => l.msg === "request")!;
    expect(line).toMatchObject({ level: 20, method: "POST", path: `/v2/publish/${r.url("/x")}`, status: 200 });
    expect(line.ms).toEqual(expect.any(Number));
    expect(JSON.stringify(lines())).not.toContain(TEST_TOKEN);
    expect(JSON.stringify(lines())).not.toContain(SECRET_BODY);
  });
});
