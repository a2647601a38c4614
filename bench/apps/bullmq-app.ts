/**
 * Peer: BullMQ on Redis doing Ferry's job. A Fastify endpoint (same HTTP in as Ferry) accepts the message and
 * answers once `queue.add` has been acknowledged by Redis; a Worker in the same process POSTs it to the
 * destination with undici, retrying (4 attempts, exponential backoff from 1 s) on a non-2xx or a network error.
 * Completed jobs are removed (like Ferry's delivered rows), failed ones kept (like Ferry's DLQ).
 * bullmq and ioredis are not project dependencies: they are loaded by path (bench/lib/peer-deps.ts).
 * Env: BENCH_PORT, REDIS_PORT, BENCH_BULLMQ and BENCH_IOREDIS (module paths), BENCH_WORKER_CONCURRENCY (default 100).
 */
import { createRequire } from "node:module";
import { Agent, request } from "undici";
import { servePublishEndpoint } from "./publish-endpoint.js";

interface Job {
  url: string;
  body: string;
  contentType: string;
}

/** The part of BullMQ's API this app uses. */
interface BullMQ {
  Queue: new (
    name: string,
    opts: { connection: unknown; defaultJobOptions: Record<string, unknown> },
  ) => { add(name: string, data: Job): Promise<{ id?: string }>; close(): Promise<void> };
  Worker: new (
    name: string,
    processor: (job: { data: Job }) => Promise<void>,
    opts: { connection: unknown; concurrency: number },
  ) => { on(event: "error", listener: (error: Error) => void): void; close(): Promise<void> };
}
type IORedisClass = new (opts: Record<string, unknown>) => { disconnect(): void };

const require = createRequire(import.meta.url);
const { Queue, Worker } = require(process.env.BENCH_BULLMQ ?? "bullmq") as BullMQ;
const IORedis = require(process.env.BENCH_IOREDIS ?? "ioredis") as IORedisClass;
const redisPort = Number(process.env.REDIS_PORT);
// BullMQ requires maxRetriesPerRequest: null on a Worker's connection.
const connection = new IORedis({ host: "127.0.0.1", port: redisPort, maxRetriesPerRequest: null });
const NAME = "deliveries";

const queue = new Queue(NAME, {
  connection,
  defaultJobOptions: {
    attempts: 4,
    backoff: { type: "exponential", delay: 1000 },
    removeOnComplete: true,
    removeOnFail: false,
  },
});

const agent = new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
const worker = new Worker(
  NAME,
  async (job) => {
    const res = await request(job.data.url, {
      dispatcher: agent,
      method: "POST",
      headers: { "content-type": job.data.contentType },
      body: job.data.body,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    await res.body.dump();
    if (res.statusCode >= 300) throw new Error(`HTTP ${res.statusCode}`);
  },
  { connection, concurrency: Number(process.env.BENCH_WORKER_CONCURRENCY ?? "100") },
);
worker.on("error", (error) => process.stderr.write(`worker error: ${error.message}\n`));

await servePublishEndpoint(
  async ({ url, body, contentType }) => {
    const job = await queue.add("deliver", {
      url,
      body: body.toString("latin1"),
      contentType: contentType ?? "",
    });
    return { messageId: job.id, url };
  },
  async () => {
    await worker.close();
    await queue.close();
    connection.disconnect();
  },
);
