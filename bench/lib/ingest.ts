import { CANNON_CONNECTIONS } from "../scenarios/fastify.js";
import { type CannonResult, cannon } from "./cannon.js";
import { BENCH_TOKEN, startFerry } from "./ferry.js";
import { makeBody } from "./generator.js";
import { CpuMeter, memoryOf } from "./proc.js";
import { BenchReceiver } from "./receiver.js";
import type { BenchContext } from "./scenario.js";
import { cpuPerMessage, microsPerMessage } from "./stats.js";

export interface IngestRound extends CannonResult {
  cpuSeconds: number;
  /** CPU seconds of autocannon (the bench process) during the shot, and of the receiver's process until the drain. */
  generatorCpuSeconds: number;
  receiverCpuSeconds: number;
  delivered: number;
}

/** A running Ferry child with its own receiver, ready for ingest rounds (P2, P4). */
export interface IngestTarget {
  /** One round: autocannon for `seconds`, then a bounded wait until the round's deliveries caught up. */
  round(seconds: number): Promise<IngestRound>;
  peakMiB(): number | undefined;
  stop(): Promise<void>;
}

/**
 * Durable publish acknowledgements against one Ferry child, with autocannon (the same generator and connections
 * as the raw Fastify ceiling): POST /v2/publish/<receiver URL> with a 1 KiB body. Every answer counted is a 200
 * sent after the SQLite commit; the deliveries run meanwhile, as they would in production. Warmed up (1 s) before
 * it is returned.
 */
export async function startIngestTarget(
  ctx: BenchContext,
  opts: { name: string; dataDir?: string; compiled?: boolean },
): Promise<IngestTarget> {
  const receiver = await BenchReceiver.start();
  const ferry = await startFerry({ workDir: ctx.workDir, ...opts });
  const body = makeBody(1024);
  const shot = (seconds: number) =>
    cannon({
      url: `${ferry.origin}/v2/publish/${receiver.url(`/${opts.name}`)}`,
      connections: CANNON_CONNECTIONS,
      seconds,
      maxRequests: 2_000_000,
      method: "POST",
      headers: { authorization: `Bearer ${BENCH_TOKEN}`, "content-type": "application/octet-stream" },
      body,
    });
  const target: IngestTarget = {
    round: async (seconds) => {
      await receiver.reset();
      const cpu = new CpuMeter([ferry.child.pid]);
      const receiverCpu = new CpuMeter([receiver.pid]);
      const r = await shot(seconds);
      const used = cpu.read();
      // Let the deliveries catch up (bounded) so the next round does not compete with this backlog.
      await receiver.waitFor(r.ok, 30_000);
      const receiverCpuSeconds = receiverCpu.read().servers;
      return {
        ...r,
        cpuSeconds: used.servers,
        generatorCpuSeconds: used.bench,
        receiverCpuSeconds,
        delivered: receiver.count,
      };
    },
    peakMiB: () => memoryOf(ferry.child.pid)?.peakMiB,
    stop: async () => {
      await ferry.stop();
      await receiver.close();
    },
  };
  ctx.defer(() => target.stop());
  await target.round(1);
  return target;
}

export function describeRound(r: IngestRound, seconds: number): string {
  const bad = r.non2xx + r.errors;
  return [
    `autocannon ${CANNON_CONNECTIONS} conns, ${seconds} s, ${r.ok} acks${bad > 0 ? `, ${bad} BAD` : ""}`,
    `ack latency p50 ${r.latencyP50} ms / p99 ${r.latencyP99} ms`,
    cpuPerMessage(r.cpuSeconds, r.ok),
    `generator ${microsPerMessage(r.generatorCpuSeconds, r.ok)} µs/msg, receiver ${microsPerMessage(r.receiverCpuSeconds, r.delivered)} µs/msg`,
    `${r.delivered} delivered during or after`,
  ].join("; ");
}
