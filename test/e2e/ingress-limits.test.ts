import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_HEADER_BYTES } from "../../src/http/ingress-limits.js";
import { startTestServer, TEST_TOKEN, type TestServer } from "../helpers/server.js";

/**
 * Ingress limits (docs/reliability.md, "Ingress limits"): each hostile client is cut off with a status and an
 * `{"error"}` naming the limit, and the server keeps answering others meanwhile. Raw sockets play the clients.
 */
const MAX_CONNECTIONS = 16;
let server: TestServer;
let port: number;

beforeAll(async () => {
  server = await startTestServer({
    env: {
      FERRY_HEADERS_TIMEOUT_MS: "1000",
      FERRY_REQUEST_TIMEOUT_MS: "5000",
      FERRY_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
    },
  });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server.stop();
});

interface Raw {
  socket: Socket;
  /** Resolves with everything the server sent once it closes the connection. */
  closed: Promise<string>;
}

function open(): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let got = "";
    socket.on("data", (d: Buffer) => (got += d.toString("latin1")));
    const closed = new Promise<string>((r) => socket.on("close", () => r(got)));
    socket.on("error", () => {});
    socket.once("connect", () => resolve({ socket, closed }));
    socket.once("error", reject);
  });
}

/** What the server sent until its first response is complete (or the connection closed). */
function firstResponse(raw: Raw): Promise<string> {
  return new Promise((resolve) => {
    let got = "";
    const done = () => {
      raw.socket.off("data", onData);
      resolve(got);
    };
    const onData = (d: Buffer) => {
      got += d.toString("latin1");
      const end = got.indexOf("\r\n\r\n");
      const length = Number(/content-length: (\d+)/i.exec(got)?.[1] ?? NaN);
      if (end >= 0 && got.length >= end + 4 + length) done();
    };
    raw.socket.on("data", onData);
    void raw.closed.then(done);
  });
}

function statusOf(response: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);
}
function errorOf(response: string): string {
  const body = response.slice(response.indexOf("\r\n\r\n") + 4);
  return (JSON.parse(body) as { error: string }).error;
}

/** Writes `text` one byte every `everyMs`, until the socket closes or the text ends (bounded). */
function trickle(socket: Socket, text: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || i >= text.length) return clearInterval(timer);
    socket.write(text[i++]!);
  }, everyMs);
}

async function stillServing(): Promise<void> {
  const res = await server.call("POST", "/v2/publish/http://127.0.0.1:9/x", { headers: { "Svc-Delay": "1h" }, body: "x" });
  expect(res.status).toBe(200);
}

describe("ingress limits", () => {
  it("slowloris: headers trickled byte by byte are cut off with 408", async () => {
    const raw = await open();
    raw.socket.write("GET /health HTTP/1.1\r\nHost: x\r\n");
    trickle(raw.socket, `X-Slow: ${"a".repeat(400)}\r\n\r\n`, 50);
    await stillServing();
    const response = await raw.closed;
    expect(statusOf(response), response).toBe(408);
    expect(errorOf(response)).toMatch(/headers did not arrive within 1000 ms/);
  });

  it("an over-limit body sent slowly is refused with 413 before it is read", async () => {
    const raw = await open();
    const head =
      `POST /v2/publish/http://127.0.0.1:9/x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_TOKEN}\r\n` +
      `Content-Length: ${20 * 1024 * 1024}\r\n\r\n`;
    raw.socket.write(head);
    trickle(raw.socket, "b".repeat(2000), 20);
    await stillServing();
    const response = await raw.closed;
    expect(statusOf(response), response).toBe(413);
    expect(errorOf(response)).toMatch(/max_message_size/);
  });

  it("oversized headers and URLs answer 431 naming the limit", async () => {
    for (const request of [
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"h".repeat(MAX_HEADER_BYTES)}\r\n\r\n`,
      `GET /v2/messages/${"u".repeat(MAX_HEADER_BYTES)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    ]) {
      const raw = await open();
      raw.socket.write(request);
      const response = await raw.closed;
      expect(statusOf(response), response.slice(0, 200)).toBe(431);
      expect(errorOf(response)).toContain(`more than ${MAX_HEADER_BYTES} bytes`);
    }
    await stillServing();
  });

  it("connections over the cap answer 503 with Retry-After and close; the server serves again once they go", async () => {
    const idle: Raw[] = [];
    let refused: string | undefined;
    // Open keep-alive connections, one health check each, until one is refused (bounded: the cap plus the test's own
    // keep-alive connections). An accepted connection answers 200 and stays open; a refused one answers 503.
    for (let i = 0; i < MAX_CONNECTIONS + 16 && refused === undefined; i++) {
      const raw = await open();
      raw.socket.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
      const first = await firstResponse(raw);
      if (statusOf(first) === 200) idle.push(raw);
      else refused = first;
    }
    expect(refused).toBeDefined();
    expect(statusOf(refused!)).toBe(503);
    expect(refused).toMatch(/Retry-After: 1/);
    expect(errorOf(refused!)).toMatch(new RegExp(`allows ${MAX_CONNECTIONS} at once`));
    expect(idle.length).toBeLessThanOrEqual(MAX_CONNECTIONS);
    for (const raw of idle) raw.socket.destroy();
    await Promise.all(idle.map((r) => r.closed));
    await stillServing();
  });
});
