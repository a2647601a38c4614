import { randomUUID } from "node:crypto";
import { Agent, request } from "undici";
import { deliveryPump } from "./delivery-pump.js";
import { servePublishEndpoint } from "./publish-endpoint.js";

/**
 * Ceiling 2: a bare in-memory forwarder. Same HTTP in as Ferry (Fastify, `/v2/publish/<url>`, body as a Buffer),
 * same undici out (one keep-alive Agent, `request`, at most 512 deliveries in flight like Ferry's default
 * FERRY_DELIVERY_CONCURRENCY), but no storage, no signing, no logs: it acknowledges at once and delivers from memory.
 * Port from BENCH_PORT.
 */
interface Job {
  url: string;
  body: Buffer;
  contentType: string;
  attempt: number;
}

const agent = new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
const enqueue = deliveryPump<Job>(512, deliver);

async function deliver(job: Job): Promise<void> {
  try {
    const res = await request(job.url, {
      dispatcher: agent,
      method: "POST",
      headers: { "content-type": job.contentType },
      body: job.body,
    });
    await res.body.dump();
    if (res.statusCode >= 300 && job.attempt < 3) enqueue({ ...job, attempt: job.attempt + 1 });
  } catch {
    if (job.attempt < 3) enqueue({ ...job, attempt: job.attempt + 1 });
  }
}

await servePublishEndpoint(async ({ url, body, contentType }) => {
  enqueue({ url, body, contentType: contentType ?? "application/octet-stream", attempt: 1 });
  return { messageId: `msg_${randomUUID()}`, url };
});
