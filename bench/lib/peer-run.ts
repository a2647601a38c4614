import { join } from "node:path";
import { endToEndLoad } from "../scenarios/forwarder.js";
import { deliveryRun } from "./delivery-run.js";
import { type Child, freePort, startNodeChild, waitForHttp } from "./proc.js";
import { BenchReceiver } from "./receiver.js";
import { type BenchContext, rounds } from "./scenario.js";
import { medianOf } from "./stats.js";

/**
 * Runs a peer's app (a child process with a Fastify endpoint at /v2/publish/<url> and its worker) under exactly
 * P1's load, generator and receiver, and records `<key>.delivered`. `serverPids` lists the app and its database
 * server, for CPU per message.
 */
export async function peerRun(
  ctx: BenchContext,
  opts: {
    key: string;
    label: string;
    app: string;
    env: Record<string, string>;
    databasePids: () => number[];
    settings: string;
  },
): Promise<void> {
  const receiver = await BenchReceiver.start();
  ctx.defer(() => receiver.close());
  const port = await freePort();
  const child: Child = startNodeChild(opts.key, opts.app, {
    env: { BENCH_PORT: String(port), ...opts.env },
    logPath: join(ctx.workDir, `${opts.key}.log`),
  });
  ctx.defer(() => child.stop());
  try {
    await measurePeer(ctx, opts, receiver, child, port);
  } finally {
    // Stopped now, not at the scenario's end: a scenario may run several peers one after another (BullMQ under
    // each Redis policy), and an idle app whose database is gone would still spin beside the next one.
    await child.stop();
    await receiver.close();
  }
}

async function measurePeer(
  ctx: BenchContext,
  opts: { key: string; label: string; databasePids: () => number[]; settings: string },
  receiver: BenchReceiver,
  child: Child,
  port: number,
): Promise<void> {
  const origin = `http://127.0.0.1:${port}`;
  await waitForHttp(`${origin}/health`, child, 60_000);
  const load = endToEndLoad(ctx);
  const make = () => ({
    path: `/v2/publish/${receiver.url(`/${opts.key}`)}`,
    headers: { "content-type": "application/octet-stream" },
    body: load.body,
  });
  const serverPids = () => [child.pid, ...opts.databasePids()];
  await deliveryRun({ origin, receiver, serverPids, ...load, total: load.warmUp, make });
  const { median: r, spread } = await medianOf(
    rounds(ctx),
    () => deliveryRun({ origin, receiver, serverPids, ...load, make }),
    (x) => x.deliveredPerSec,
  );
  ctx.record({
    key: `${opts.key}.delivered`,
    scenario: "Peers",
    metric: opts.label,
    value: r.deliveredPerSec,
    unit: "msg/s",
    detail: `${r.detail} (CPU includes the database server); ${spread}; ${opts.settings}`,
  });
}
