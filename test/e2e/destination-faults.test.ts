import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  endlessChunks,
  hangingDestination,
  rawDestination,
  selfSignedDestination,
  stream,
} from "../helpers/faulty-destinations.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { waitUntil } from "../helpers/wait.js";

/**
 * The destination fault matrix (docs/reliability.md, "Destination faults"): each misbehaving destination is a real
 * local server, and each outcome is read back from the message's logs. The plan's max_message_size is 1 MiB here,
 * which is also the most of a response body Ferry reads.
 */
const CAP = 1024 * 1024;
let server: TestServer;
let callbacks: Receiver;
const opened: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  server = await startTestServer({ env: { FERRY_PLAN_PAID_MAX_MESSAGE_SIZE: String(CAP) } });
  callbacks = await Receiver.start();
});
afterAll(async () => {
  await Promise.all(opened.map((o) => o.close()));
  await callbacks.close();
  await server.stop();
});

function track<T extends { close(): Promise<void> }>(d: T): T {
  opened.push(d);
  return d;
}

interface Log {
  state: string;
  time: number;
  error?: string;
  responseStatus?: number;
  responseBody?: string;
  nextDeliveryTime?: number;
}

async function publish(url: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await server.call("POST", `/v2/publish/${url}`, {
    headers: { "Svc-Retries": "1", "Svc-Retry-Delay": "100", ...headers },
    body: "fault",
  });
  expect(res.status, res.text).toBe(200);
  return res.json.messageId as string;
}

/** The message's logs, oldest first, once one of `states` is among them. */
async function logsUntil(id: string, states: string[], timeoutMs = 20_000): Promise<Log[]> {
  return waitUntil(
    async () => {
      const logs = (await server.call("GET", `/v2/logs?messageId=${id}&order=earliestFirst`)).json.logs as Log[];
      return logs.some((l) => states.includes(l.state)) && logs;
    },
    { timeoutMs, what: `${id} to reach ${states.join("/")}` },
  );
}

/** An attempt that failed, was retried once and then failed for good, each attempt's error matching `error`. */
async function expectRetriedThenFailed(id: string, error: RegExp): Promise<Log[]> {
  const logs = await logsUntil(id, ["FAILED"]);
  const errors = logs.filter((l) => l.state === "ERROR");
  expect(errors, JSON.stringify(logs)).toHaveLength(2);
  for (const e of errors) expect(e.error, JSON.stringify(e)).toMatch(error);
  expect(logs.map((l) => l.state)).toContain("RETRY");
  return logs;
}

const retryDelay = (logs: Log[]) => {
  const retry = logs.find((l) => l.state === "RETRY")!;
  return retry.nextDeliveryTime! - retry.time;
};

describe("destination fault matrix", () => {
  it("500 and 503 with Retry-After: retried after the hinted delay", async () => {
    const d500 = track(await rawDestination((s) => s.end("HTTP/1.1 500 Oops\r\nRetry-After: 1\r\nContent-Length: 2\r\n\r\nno")));
    const d503 = track(await rawDestination((s) => s.end("HTTP/1.1 503 Busy\r\nRetry-After: 2\r\nContent-Length: 0\r\n\r\n")));
    const [a, b] = await Promise.all([publish(d500.url), publish(d503.url)]);
    const la = await expectRetriedThenFailed(a, /destination answered 500/);
    const lb = await expectRetriedThenFailed(b, /destination answered 503/);
    expect(retryDelay(la)).toBe(1000);
    expect(retryDelay(lb)).toBe(2000);
  });

  it("429 with X-RateLimit-Reset: retried after the hinted delay", async () => {
    const d = track(await rawDestination((s) => s.end("HTTP/1.1 429 Slow\r\nX-RateLimit-Reset: 1\r\nContent-Length: 0\r\n\r\n")));
    const logs = await expectRetriedThenFailed(await publish(d.url), /destination answered 429/);
    expect(retryDelay(logs)).toBe(1000);
  });

  it("connection refused: a connection error, retried", async () => {
    const d = await rawDestination(() => {});
    const url = d.url;
    await d.close();
    await expectRetriedThenFailed(await publish(url), /ECONNREFUSED/);
  });

  it("reset mid-response: a socket error, retried", async () => {
    const d = track(
      await rawDestination((s) => {
        s.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial");
        setImmediate(() => s.resetAndDestroy());
      }),
    );
    await expectRetriedThenFailed(await publish(d.url), /UND_ERR_SOCKET|ECONNRESET|terminated|other side closed/);
  });

  it("headers never sent: the attempt times out, retried", async () => {
    const d = track(await rawDestination(() => {}));
    await expectRetriedThenFailed(await publish(d.url, { "Svc-Timeout": "1s" }), /timeout/i);
    expect(d.requests).toBe(2);
  });

  it("a body trickled slower than the timeout: the attempt times out, retried", async () => {
    const d = track(
      await rawDestination((s) => {
        s.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
        const timer = setInterval(() => (s.destroyed ? clearInterval(timer) : s.write("x")), 200);
      }),
    );
    await expectRetriedThenFailed(await publish(d.url, { "Svc-Timeout": "1s" }), /timeout/i);
  });

  it("a 100 MB response: read up to max_message_size, then the connection is closed; stored and called back cut", async () => {
    const d = track(
      await rawDestination((s, dest) => {
        s.write(`HTTP/1.1 500 Big\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`);
        stream(s, dest, 100 * 1024 * 1024);
      }),
    );
    const id = await publish(d.url, { "Svc-Retries": "0", "Svc-Failure-Callback": callbacks.url("/failed") });
    const logs = await logsUntil(id, ["FAILED"]);
    const failed = logs.find((l) => l.state === "FAILED")! as Log & { dlqId: string };
    const entry = (await server.call("GET", `/v2/dlq/${failed.dlqId}`)).json as { responseBody: string };
    expect(entry.responseBody.length).toBe(CAP);
    const cb = await callbacks.next();
    expect(Buffer.from(JSON.parse(cb.text).body as string, "base64").length).toBe(CAP);
    // Ferry stopped reading: far less than 100 MB left the destination (socket buffers hold a few MB at most).
    expect(d.bytesWritten).toBeLessThan(50 * 1024 * 1024);
  });

  it("an endless chunked response: read up to max_message_size, then closed; a 200 counts as delivered", async () => {
    const d = track(
      await rawDestination((s, dest) => {
        s.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        endlessChunks(s, dest);
      }),
    );
    const logs = await logsUntil(await publish(d.url, { "Svc-Timeout": "30s" }), ["DELIVERED"]);
    expect(logs.map((l) => l.state)).not.toContain("ERROR");
  });

  it("3xx: never followed, the attempt fails with its status and is retried", async () => {
    const target = track(await Receiver.start());
    const d = track(
      await rawDestination((s) =>
        s.end(`HTTP/1.1 302 Found\r\nLocation: ${target.url("/moved")}\r\nContent-Length: 0\r\n\r\n`),
      ),
    );
    const logs = await expectRetriedThenFailed(await publish(d.url), /destination answered 302/);
    expect(logs.find((l) => l.state === "ERROR")!.responseStatus).toBe(302);
    expect(target.requests).toHaveLength(0);
  });

  it("a malformed HTTP response: a parse error, retried", async () => {
    const d = track(await rawDestination((s) => s.end("this is not HTTP at all\r\n\r\n")));
    await expectRetriedThenFailed(await publish(d.url), /HPE_|does not match the HTTP/i);
  });

  it("TLS with a self-signed certificate: a TLS error, retried; the destination never sees a request", async () => {
    const d = track(await selfSignedDestination());
    await expectRetriedThenFailed(await publish(d.url), /self[- ]signed|DEPTH_ZERO_SELF_SIGNED_CERT|certificate/i);
    expect(d.requests).toBe(0);
  });

  it("the server kept serving throughout", async () => {
    expect((await server.call("GET", "/health")).status).toBe(200);
  });
});

describe("isolation", () => {
  it("while one destination hangs with hundreds of deliveries, another receives all of its messages", async () => {
    const iso = await startTestServer({
      env: { FERRY_DELIVERY_CONCURRENCY: "128", FERRY_DESTINATION_CONCURRENCY: "32" },
    });
    const hanging = await hangingDestination();
    const healthy = await Receiver.start();
    try {
      const send = (url: string) =>
        iso.call("POST", `/v2/publish/${url}`, { headers: { "Svc-Timeout": "120s" }, body: "m" });
      for (let i = 0; i < 300; i += 10) {
        const res = await Promise.all(Array.from({ length: 10 }, () => send(hanging.url)));
        for (const r of res) expect(r.status).toBe(200);
      }
      await waitUntil(() => hanging.requests >= 32, { what: "the hanging destination to hold 32 requests" });
      for (let i = 0; i < 100; i += 10) {
        const res = await Promise.all(Array.from({ length: 10 }, (_, k) => send(healthy.url(`/h${i + k}`))));
        for (const r of res) expect(r.status).toBe(200);
      }
      await healthy.waitForCount(100, 20_000);
      // The hanging destination still holds its deliveries, never more than its bound at once.
      expect(hanging.requests).toBe(32);
    } finally {
      await hanging.close();
      await healthy.close();
      await iso.stop();
    }
  }, 60_000);
});
