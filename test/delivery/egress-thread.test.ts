import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { egressThreadStats, openEgressThread } from "../../src/delivery/egress-thread/client.js";
import type { HttpClient, SendParams } from "../../src/delivery/http-client.js";
import { Receiver } from "../helpers/receiver.js";
import { verifySignature } from "../helpers/signature.js";

/**
 * The egress thread (docs/threading.md, "The egress thread") against a real local receiver: requests signed and sent
 * from the worker, one message per turn, the destination policy applied there, and a thread that dies mid-attempt.
 */
const KEY = "sig_egress_thread_test_key";
const log = pino({ level: "silent" });
let receiver: Receiver;
let client: HttpClient | undefined;

beforeAll(async () => {
  receiver = await Receiver.start();
});
afterEach(async () => {
  await client?.close();
  client = undefined;
});
afterAll(async () => {
  await receiver.close();
});

function params(path: string, over: Partial<SendParams> = {}): SendParams {
  return {
    url: receiver.url(path),
    method: "POST",
    headers: { "content-type": "text/plain", "x-n": path },
    body: Buffer.from(`body of ${path}`),
    timeoutMs: 5_000,
    maxBodyBytes: 1_000_000,
    sign: { header: "Svc-Signature", key: KEY, issuer: "Ferry", nowMs: Date.now() },
    ...over,
  };
}

describe("the egress thread", () => {
  it("signs and sends a turn's requests in one message, and answers with status, headers and body", async () => {
    receiver.setDefault((url) => ({ status: 201, headers: { "x-echo": url }, body: `answer to ${url}` }));
    client = openEgressThread({ destinationAllow: undefined, log });
    const paths = Array.from({ length: 50 }, (_, i) => `/t1/${i}`);
    const answers = await Promise.all(paths.map((p) => client!.send(params(p))));

    for (const [i, a] of answers.entries()) {
      expect(a.error).toBeUndefined();
      expect(a.status).toBe(201);
      expect(a.headers["X-Echo"]).toEqual([paths[i]]);
      expect(a.body.toString()).toBe(`answer to ${paths[i]}`);
    }
    const got = receiver.requests.filter((r) => r.url.startsWith("/t1/"));
    expect(got).toHaveLength(50);
    for (const r of got) {
      expect(r.text).toBe(`body of ${r.url}`);
      expect(r.headers["x-n"]).toBe(r.url);
      await verifySignature({ signature: r.headers["svc-signature"], key: KEY, url: receiver.url(r.url), body: r.body });
    }
    const stats = egressThreadStats(client)!;
    expect(stats).toMatchObject({ batches: 1, sends: 50, threadsStarted: 1 });
  });

  it("statusOnlyOnSuccess: a 2xx answers its status alone, read to the end even past the size bound; others whole", async () => {
    receiver.setDefault((url) =>
      url.startsWith("/so/big")
        ? { status: 200, headers: { "x-echo": url }, body: "x".repeat(5_000) }
        : { status: url.startsWith("/so/ok") ? 201 : 500, headers: { "x-echo": url }, body: `answer to ${url}` },
    );
    client = openEgressThread({ destinationAllow: undefined, log });
    const [ok, big, failed, whole] = await Promise.all([
      client.send(params("/so/ok", { statusOnlyOnSuccess: true })),
      client.send(params("/so/big", { statusOnlyOnSuccess: true, maxBodyBytes: 1_000 })),
      client.send(params("/so/failed", { statusOnlyOnSuccess: true })),
      client.send(params("/so/ok-whole")),
    ]);
    expect(ok.status).toBe(201);
    expect(Object.keys(ok.headers)).toEqual([]);
    expect(ok.body.length).toBe(0);
    expect(ok.error).toBeUndefined();
    // Past maxBodyBytes the read stops as for any answer (docs/reliability.md "Destination faults"): still a success.
    expect(big.status).toBe(200);
    expect(Object.keys(big.headers)).toEqual([]);
    expect(big.body.length).toBe(0);
    expect(big.error).toBeUndefined();
    // A failure needs its answer (the log's ERROR entry, the DLQ, a failure callback): whole.
    expect(failed.status).toBe(500);
    expect(failed.headers["X-Echo"]).toEqual(["/so/failed"]);
    expect(failed.body.toString()).toBe("answer to /so/failed");
    expect(whole.headers["X-Echo"]).toEqual(["/so/ok-whole"]);
    expect(whole.body.toString()).toBe("answer to /so/ok-whole");
  });

  it("applies the destination policy in the thread: a refused address fails like a connection error", async () => {
    client = openEgressThread({ destinationAllow: "10.0.0.0/8", log });
    const before = receiver.requests.length;
    const answer = await client.send(params("/refused"));
    expect(answer.status).toBeUndefined();
    expect(answer.error).toMatch(/127\.0\.0\.1/);
    expect(receiver.requests.length).toBe(before);
  });

  it("fails the attempts of a thread that dies mid-attempt, and starts a new thread for the next send", async () => {
    const slow = await Receiver.start();
    try {
      slow.setDefault({ status: 200, body: "late", delayMs: 2_000 });
      client = openEgressThread({ destinationAllow: undefined, log });
      const stats = egressThreadStats(client)!;
      const inFlight = client.send({ ...params("/dies"), url: slow.url("/dies") });
      // The request reached the destination: the attempt is in the thread's hands when it dies.
      await vi.waitFor(() => expect(slow.maxConcurrent).toBe(1), { timeout: 5_000, interval: 10 });
      await stats.worker!.terminate();

      const answer = await inFlight;
      expect(answer.status).toBeUndefined();
      expect(answer.error).toMatch(/egress thread exited/);

      slow.setDefault({ status: 200, body: "ok" });
      const next = await client.send({ ...params("/after"), url: slow.url("/after") });
      expect(next.status).toBe(200);
      expect(stats.threadsStarted).toBe(2);
    } finally {
      await slow.close();
    }
  });

  it("a send made as the thread dies is either failed and never sent, or sent once and answered", async () => {
    const sink = await Receiver.start();
    try {
      client = openEgressThread({ destinationAllow: undefined, log });
      const stats = egressThreadStats(client)!;
      expect((await client.send({ ...params("/warm"), url: sink.url("/warm") })).status).toBe(200);
      const dying = stats.worker!.terminate();
      const answer = await client.send({ ...params("/as-it-dies"), url: sink.url("/as-it-dies") });
      await dying;
      const arrived = () => sink.requests.filter((r) => r.url === "/as-it-dies").length;
      if (answer.error !== undefined) {
        await sink.expectQuiet(300);
        expect(arrived()).toBe(0);
      } else {
        expect(answer.status).toBe(200);
        expect(arrived()).toBe(1);
      }
    } finally {
      await sink.close();
    }
  });

  it("after close, answers every send as failed without starting a thread", async () => {
    client = openEgressThread({ destinationAllow: undefined, log });
    await client.close();
    const answer = await client.send(params("/closed"));
    expect(answer.error).toMatch(/closed/);
    expect(egressThreadStats(client)!.threadsStarted).toBe(0);
  });
});
