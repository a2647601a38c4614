import { randomUUID } from "node:crypto";
import Fastify from "fastify";
import { Agent, request } from "undici";

/**
 * Ceiling 2: a bare in-memory forwarder. Same HTTP in as Ferry (Fastify, `/v2/publish/<url>`, body as a Buffer),
 * same undici out (one keep-alive Agent, `request`, at most 512 deliveries in flight like Ferry's default
 * FERRY_DELIVERY_CONCURRENCY), but no storage, no signing, no logs: it acknowledges at once and delivers from memory.
 * Port from BENCH_PORT.
 */
const MAX_IN_FLIGHT = 512;
const agent = new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
const queue: { url: string; body: Buffer; contentType: string; attempt: number }[] = [];
let inFlight = 0;

async function deliver(job: (typeof queue)[number]): Promise<void> {
  try {
    const res = await request(job.url, {
      dispatcher: agent,
      method: "POST",
      headers: { "content-type": job.contentType },
      body: job.body,
    });
    await res.body.dump();
    if (res.statusCode >= 300 && job.attempt < 3) queue.push({ ...job, attempt: job.attempt + 1 });
  } catch {
    if (job.attempt < 3) queue.push({ ...job, attempt: job.attempt + 1 });
  }
}

function pump(): void {
  while (inFlight < MAX_IN_FLIGHT && queue.length > 0) {
    const job = queue.shift()!;
    inFlight++;
    void deliver(job).finally(() => {
      inFlight--;
      pump();
    });
  }
}

const app = Fastify({ logger: false, bodyLimit: 100 * 1024 * 1024 });
app.removeAllContentTypeParsers();
app.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
app.get("/health", async () => ({ status: "ok" }));
app.post("/v2/publish/*", async (req) => {
  const url = (req.raw.url ?? "").slice("/v2/publish/".length);
  queue.push({
    url,
    body: req.body as Buffer,
    contentType: req.headers["content-type"] ?? "application/octet-stream",
    attempt: 1,
  });
  setImmediate(pump);
  return { messageId: `msg_${randomUUID()}`, url };
});
await app.listen({ port: Number(process.env.BENCH_PORT), host: "127.0.0.1" });
process.once("SIGTERM", () => void app.close().then(() => process.exit(0)));
