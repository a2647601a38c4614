/**
 * Peer: pg-boss 10 on PostgreSQL doing Ferry's job. A Fastify endpoint (same HTTP in as Ferry) accepts the message
 * and answers once `boss.send` has committed the job; workers in the same process fetch jobs in batches and POST
 * each to the destination with undici. A job whose delivery fails is failed alone (`boss.fail`), so pg-boss retries
 * it (retryLimit 3, retryDelay 1 s, exponential backoff); the rest of its batch completes.
 * pg-boss polls: a worker fetches a batch, handles it, and waits out the rest of its polling interval (0.5 s, the
 * minimum pg-boss allows). BENCH_PGBOSS_WORKERS workers (default 4) × batchSize BENCH_PGBOSS_BATCH (default 500).
 * Env: BENCH_PORT, DATABASE_URL.
 */
import PgBoss from "pg-boss";
import { Agent, request } from "undici";
import { servePublishEndpoint } from "./publish-endpoint.js";

const NAME = "deliveries";
const WORKERS = Number(process.env.BENCH_PGBOSS_WORKERS ?? "4");
const BATCH = Number(process.env.BENCH_PGBOSS_BATCH ?? "500");

interface Job {
  url: string;
  body: string;
  contentType: string;
}

const boss = new PgBoss({ connectionString: process.env.DATABASE_URL, max: 20 });
boss.on("error", (error) => process.stderr.write(`pg-boss error: ${error.message}\n`));
await boss.start();
await boss.createQueue(NAME, { name: NAME, retryLimit: 3, retryDelay: 1, retryBackoff: true });

const agent = new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
async function deliver(job: PgBoss.Job<Job>): Promise<boolean> {
  try {
    const res = await request(job.data.url, {
      dispatcher: agent,
      method: "POST",
      headers: { "content-type": job.data.contentType },
      body: job.data.body,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    await res.body.dump();
    return res.statusCode < 300;
  } catch {
    return false;
  }
}

for (let w = 0; w < WORKERS; w++) {
  await boss.work<Job>(NAME, { batchSize: BATCH, pollingIntervalSeconds: 0.5 }, async (jobs) => {
    const ok = await Promise.all(jobs.map(deliver));
    const failed = jobs.filter((_, i) => !ok[i]).map((j) => j.id);
    // Failed jobs leave the active state here; the batch's completion then only touches the delivered ones.
    if (failed.length > 0) await boss.fail(NAME, failed);
  });
}

await servePublishEndpoint(
  async ({ url, body, contentType }) => {
    const id = await boss.send(NAME, {
      url,
      body: body.toString("latin1"),
      contentType: contentType ?? "",
    });
    return { messageId: id, url };
  },
  async () => {
    await boss.stop({ graceful: true, timeout: 5_000 });
  },
);
