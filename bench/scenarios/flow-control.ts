import { deliveryRun } from "../lib/delivery-run.js";
import { ferryCall, publishRequest, startFerry } from "../lib/ferry.js";
import { BenchReceiver } from "../lib/receiver.js";
import { type Scenario, pick } from "../lib/scenario.js";
import { endToEndLoad } from "./forwarder.js";

const KEY = "bench-flow";

/**
 * Flow control: every message carries Svc-Flow-Control-Key and Svc-Flow-Control-Value `rate=<R>, period=1s`; the
 * backlog is published at full speed and delivered msg/s should come out at R (not above it, not far below).
 * Skipped when the server does not know flow-control keys (GET /v2/flowControl/{key} answers 404 after a publish).
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
    const key = await ferryCall(ferry.origin, "GET", `/v2/flowControl/${KEY}`);
    if (key.status === 404) return skip("flow control not in this build: GET /v2/flowControl/{key} answered 404");
    await receiver.waitFor(1, 10_000);

    const total = rate * pick(ctx, 10, 3);
    const r = await deliveryRun({
      origin: ferry.origin,
      receiver,
      serverPids: [ferry.child.pid],
      ...load,
      total,
      drainMs: (total / rate) * 1000 + 30_000,
      make: () => req,
    });
    const over = r.deliveredPerSec > rate * 1.1;
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
