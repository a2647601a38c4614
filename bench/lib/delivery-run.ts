import { closedLoop, type LoadResult, type OutgoingRequest } from "./generator.js";
import { CpuMeter } from "./proc.js";
import type { BenchReceiver } from "./receiver.js";
import { cpuPerMessage, microsPerMessage } from "./stats.js";

export interface DeliveryRunResult {
  load: LoadResult;
  delivered: number;
  /** Receiver arrivals / seconds from the first publish to the last arrival. */
  deliveredPerSec: number;
  /** Everything acknowledged arrived before the drain timeout. */
  complete: boolean;
  seconds: number;
  serverCpu: number;
  /** CPU seconds of the generator (the bench process) and of the receiver's process. */
  benchCpu: number;
  receiverCpu: number;
  /** Arrivals that carried a signature header. */
  signed: number;
  /** Arrivals of a message id that had already arrived (0 unless the receiver tracks ids). */
  duplicates: number;
  detail: string;
}

/**
 * The shared end-to-end measurement (forwarder, P1, peers): `concurrency` publishers send `total` messages
 * (closed loop, bounded by `maxMs`), then the run waits (at most `drainMs`) until the receiver has as many arrivals
 * as there were acknowledgements. Delivered msg/s = arrivals / time from the first publish to the last arrival.
 * CPU is read from /proc for `serverPids` (the system under test, its database included).
 */
export async function deliveryRun(opts: {
  /** Several origins: nodes of one system, publishers spread over them round-robin. */
  origin: string | string[];
  receiver: BenchReceiver;
  serverPids: number[] | (() => number[]);
  concurrency: number;
  total: number;
  maxMs: number;
  drainMs: number;
  make: (i: number) => OutgoingRequest;
  /** Deliveries each acknowledged publish produces (a URL group's endpoint count). (Default: 1) */
  deliveriesPerAck?: number;
}): Promise<DeliveryRunResult> {
  const { receiver } = opts;
  await receiver.reset();
  const cpu = new CpuMeter(opts.serverPids);
  const receiverCpu = new CpuMeter([receiver.pid]);
  const load = await closedLoop({
    origin: opts.origin,
    concurrency: opts.concurrency,
    total: opts.total,
    maxMs: opts.maxMs,
    make: opts.make,
  });
  const expected = load.acked * (opts.deliveriesPerAck ?? 1);
  const complete = await receiver.waitFor(expected, opts.drainMs);
  const used = cpu.read();
  const receiverSeconds = receiverCpu.read().servers;
  const seconds = (receiver.lastAt - load.startedAt) / 1000;
  const delivered = receiver.count;
  const deliveredPerSec = seconds > 0 ? delivered / seconds : 0;
  const parts = [
    `${delivered}/${expected} delivered in ${seconds.toFixed(1)} s`,
    `${opts.concurrency} publishers`,
    cpuPerMessage(used.servers, delivered),
    `generator ${microsPerMessage(used.bench, delivered)} µs/msg, receiver ${microsPerMessage(receiverSeconds, delivered)} µs/msg`,
  ];
  if (receiver.trackMessageIds) {
    // Duplicates count as arrivals above; a message that never arrived is hidden by them unless counted apart.
    const missing = expected - (delivered - receiver.duplicates);
    const never = missing > 0 ? `, ${missing} messages never arrived` : "";
    parts.push(`${receiver.duplicates} duplicate deliveries${never}`);
  }
  if (load.errors > 0) parts.push(`${load.errors} publish errors (${load.firstError})`);
  if (!complete) parts.push(`INCOMPLETE after ${opts.drainMs / 1000} s drain`);
  return {
    load,
    delivered,
    deliveredPerSec,
    complete,
    seconds,
    serverCpu: used.servers,
    signed: receiver.signed,
    duplicates: receiver.duplicates,
    benchCpu: used.bench,
    receiverCpu: receiverSeconds,
    detail: parts.filter((p) => p !== "").join("; "),
  };
}
