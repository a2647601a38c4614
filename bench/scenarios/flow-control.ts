import { deliveryRun } from "../lib/delivery-run.js";
import { ferryCall, publishRequest, startFerry } from "../lib/ferry.js";
import { BenchReceiver } from "../lib/receiver.js";
import { type Scenario, pick } from "../lib/scenario.js";
import { endToEndLoad } from "./forwarder.js";

const KEY = "bench-flow";

/**
 * Flow control: every message carries Svc-Flow-Control-Key and Svc-Flow-Control-Value `rate=<R>, period=1s`; the
 * backlog is published at full speed and delivered msg/s should come out at R (not above it, not far below).
 * Skipped when the server has no flow control (GET /v2/flowControl answers 404).
 */
export const flowControlScenario: Scenario = {
  id: "flow",
  title: "Flow-controlled key at its rate",
  async run(ctx) {
    const rate = pick(ctx, 500, 200);
    const metric = `one key at rate=${rate}/s, delivered`;
    const receiver = await BenchReceiver.start();
    ctx.defer(() => receiver.close());
    const ferry = await startFerry({ workDir: ctx.workDir, name: "flow" });
    ctx.defer(() => ferry.stop());
    const skip = (reason: string) =>
      ctx.record({
        key: "flow.delivered",
        scenario: "Flow control",
        metric,
        value: undefined,
        unit: "msg/s",
        skipped: reason,
      });
    const headers = { "svc-flow-control-key": KEY, "svc-flow-control-value": `rate=${rate}, period=1s` };
    const load = endToEndLoad(ctx);
    const req = publishRequest(receiver.url("/flow"), load.body, headers);

    const probe = await ferryCall(ferry.origin, "POST", req.path, "probe");
    if (probe.status >= 300)
      return skip(`a flow-controlled publish answered ${probe.status}: ${probe.text.slice(0, 120)}`);
    // The list endpoint exists exactly when flow control does (a key may come and go with its messages).
    const list = await ferryCall(ferry.origin, "GET", "/v2/flowControl");
    if (list.status === 404) return skip("flow control not in this build: GET /v2/flowControl answered 404");
    await receiver.waitFor(1, 10_000);

    // With fixed rate windows, N = k × rate messages take between k − 1 and k windows: the longer the run, the
    // smaller that edge effect (at most k / (k − 1) above the rate: 5% for the full run's k = 20).
    const windows = pick(ctx, 20, 3);
    const total = rate * windows;
    const r = await deliveryRun({
      origin: ferry.origin,
      receiver,
      serverPids: [ferry.child.pid],
      ...load,
      total,
      drainMs: (total / rate) * 1000 + 30_000,
      make: () => req,
    });
    const over = r.deliveredPerSec > rate * (windows / (windows - 1)) * 1.05;
    ctx.record({
      key: "flow.delivered",
      scenario: "Flow control",
      metric,
      value: r.deliveredPerSec,
      unit: "msg/s",
      detail: `${(r.deliveredPerSec / rate).toFixed(2)} of the key's rate${over ? " (ABOVE the rate: not limited)" : ""}; ${r.detail}`,
    });
  },
};
