import { deliveryRun } from "../lib/delivery-run.js";
import { ferryCall, publishRequest, startFerry } from "../lib/ferry.js";
import { BenchReceiver } from "../lib/receiver.js";
import { rounds, type Scenario } from "../lib/scenario.js";
import { medianOf } from "../lib/stats.js";
import { endToEndLoad } from "./forwarder.js";

const GROUP = "bench-fanout";
const ENDPOINTS = 10;

/**
 * Fan-out: a URL group of 10 endpoints (reference 1.7: POST /v2/topics/{name}/endpoints), then P1's load published
 * to the group's name; delivered msg/s counts every endpoint's delivery. Skipped when the server has no URL groups
 * (404 on creating the group or on publishing to it).
 */
export const fanoutScenario: Scenario = {
  id: "fanout",
  title: "Fan-out to a URL group of 10 endpoints",
  async run(ctx) {
    const receiver = await BenchReceiver.start();
    ctx.defer(() => receiver.close());
    const ferry = await startFerry({ workDir: ctx.workDir, name: "fanout" });
    ctx.defer(() => ferry.stop());
    const metric = `publish to a group of ${ENDPOINTS}, deliveries`;
    const skip = (reason: string) =>
      ctx.record({
        key: "fanout.delivered",
        scenario: "Fan-out",
        metric,
        value: undefined,
        unit: "msg/s",
        skipped: reason,
      });

    const endpoints = Array.from({ length: ENDPOINTS }, (_, k) => ({
      name: `e${k}`,
      url: receiver.url(`/fanout/e${k}`),
    }));
    const created = await ferryCall(ferry.origin, "POST", `/v2/topics/${GROUP}/endpoints`, { endpoints });
    if (created.status === 404)
      return skip("URL groups not in this build: POST /v2/topics/{name}/endpoints answered 404");
    if (created.status >= 300)
      return skip(`creating the group answered ${created.status}: ${created.text.slice(0, 120)}`);
    const probe = await ferryCall(ferry.origin, "POST", `/v2/publish/${GROUP}`, "probe");
    if (probe.status === 404) return skip(`publishing to the group answered 404: ${probe.text.slice(0, 120)}`);
    if (probe.status >= 300)
      return skip(`publishing to the group answered ${probe.status}: ${probe.text.slice(0, 120)}`);
    await receiver.waitFor(ENDPOINTS, 10_000);

    const load = endToEndLoad(ctx);
    const total = Math.max(100, Math.floor(load.total / ENDPOINTS));
    const make = () => publishRequest(GROUP, load.body);
    const origin = ferry.origin;
    await deliveryRun({
      origin,
      receiver,
      serverPids: [ferry.child.pid],
      ...load,
      total: 50,
      make,
      deliveriesPerAck: ENDPOINTS,
    });
    const { median: r, spread } = await medianOf(
      rounds(ctx),
      () =>
        deliveryRun({
          origin,
          receiver,
          serverPids: [ferry.child.pid],
          ...load,
          total,
          make,
          deliveriesPerAck: ENDPOINTS,
        }),
      (x) => x.deliveredPerSec,
    );
    const perEndpoint = Object.values(receiver.byPath);
    ctx.record({
      key: "fanout.delivered",
      scenario: "Fan-out",
      metric,
      value: r.deliveredPerSec,
      unit: "msg/s",
      detail: `${r.detail}; ${r.load.acked} publishes (${(r.load.acked / Math.max(0.001, r.seconds)).toFixed(0)}/s); per endpoint (last round) ${Math.min(...perEndpoint)}–${Math.max(...perEndpoint)}; ${spread}`,
    });
  },
};
