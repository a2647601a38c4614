import { type FerryProcess, publishRequest, startFerry } from "../lib/ferry.js";
import { makeBody, openLoop } from "../lib/generator.js";
import { CpuMeter } from "../lib/proc.js";
import { BenchReceiver, DELAY_HEADER, SENT_HEADER } from "../lib/receiver.js";
import { type Scenario, pick } from "../lib/scenario.js";
import { formatNumber, percentile } from "../lib/stats.js";

const RATE = 1000;

/** Open loop at 1,000 msg/s; the send time rides along as a forwarded header (`Svc-Forward-X-Bench-Sent`). */
function phase(ferry: FerryProcess, receiver: BenchReceiver, seconds: number, delayed: boolean) {
  const body = makeBody(1024);
  const destination = receiver.url(delayed ? "/p3-delayed" : "/p3");
  return openLoop({
    origin: ferry.origin,
    ratePerSec: RATE,
    durationMs: seconds * 1000,
    connections: 64,
    maxInFlight: 5_000,
    make: (i, sentAt) => {
      const headers: Record<string, string> = { [`svc-forward-${SENT_HEADER}`]: sentAt.toFixed(3) };
      if (delayed) {
        const delaySec = 1 + (i % 5); // 1–5 s, evenly
        headers["svc-delay"] = `${delaySec}s`;
        headers[`svc-forward-${DELAY_HEADER}`] = String(delaySec * 1000);
      }
      return publishRequest(destination, body, headers);
    },
  });
}

/**
 * P3: latency at a fixed 1,000 msg/s. Immediate messages: publish send → arrival at the receiver, p50/p99.
 * Delayed messages (Svc-Delay 1–5 s): lateness = arrival − (send time + delay), p99.
 */
export const p3Scenario: Scenario = {
  id: "p3",
  title: "P3 latency at 1,000 msg/s",
  async run(ctx) {
    const receiver = await BenchReceiver.start();
    ctx.defer(() => receiver.close());
    const ferry = await startFerry({ workDir: ctx.workDir, name: "p3" });
    ctx.defer(() => ferry.stop());

    await phase(ferry, receiver, 1, false); // warm-up
    await receiver.waitFor(RATE, 10_000);
    await receiver.reset();

    const seconds = pick(ctx, 20, 3);
    const cpu = new CpuMeter([ferry.child.pid]);
    const a = await phase(ferry, receiver, seconds, false);
    await receiver.waitFor(a.acked, 30_000);
    // Share of one core Ferry needed for 1,000 msg/s: when the machine is busy, latency grows as this nears what
    // the scheduler gives Ferry.
    const cores = cpu.read().servers / seconds;
    const p50 = percentile(receiver.latencies, 50);
    const p99 = percentile(receiver.latencies, 99);
    const max = percentile(receiver.latencies, 100);
    const lost = a.acked - receiver.latencies.length;
    const common = `${receiver.latencies.length} msgs at ${RATE}/s for ${seconds} s${a.skipped > 0 ? `, ${a.skipped} sends SKIPPED (backlog)` : ""}${a.errors > 0 ? `, ${a.errors} publish errors` : ""}${lost > 0 ? `, ${lost} not arrived` : ""}; publish ack p50 ${formatNumber(percentile(a.ackLatencies, 50))} ms, p99 ${formatNumber(percentile(a.ackLatencies, 99))} ms; Ferry used ${cores.toFixed(2)} of a core`;
    ctx.record({
      key: "p3.p50",
      scenario: "P3 latency",
      metric: "publish → arrival p50",
      value: p50,
      unit: "ms",
      detail: common,
    });
    ctx.record({
      key: "p3.p99",
      scenario: "P3 latency",
      metric: "publish → arrival p99",
      value: p99,
      unit: "ms",
      detail: `max ${formatNumber(max)} ms`,
    });

    await receiver.reset();
    const delayedSeconds = pick(ctx, 10, 2);
    const b = await phase(ferry, receiver, delayedSeconds, true);
    await receiver.waitFor(b.acked, 5_000 + 30_000);
    const late50 = percentile(receiver.lateness, 50);
    const late99 = percentile(receiver.lateness, 99);
    const lateMax = percentile(receiver.lateness, 100);
    const lostDelayed = b.acked - receiver.lateness.length;
    ctx.record({
      key: "p3.late99",
      scenario: "P3 latency",
      metric: "delayed 1–5 s: lateness p99",
      value: late99,
      unit: "ms",
      detail: `${receiver.lateness.length} msgs at ${RATE}/s for ${delayedSeconds} s; lateness p50 ${formatNumber(late50)} ms, max ${formatNumber(lateMax)} ms${lostDelayed > 0 ? `, ${lostDelayed} not arrived` : ""}${b.errors > 0 ? `, ${b.errors} publish errors` : ""}`,
    });
  },
};
