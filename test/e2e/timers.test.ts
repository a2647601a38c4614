import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Dispatcher } from "../../src/delivery/dispatcher.js";
import { buildCallbacks } from "../../src/delivery/callbacks.js";
import { DlqIdMinter } from "../../src/domain/dlq-id.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Far-future delays never reach Node's timers unclamped (src/domain/timers.ts): Node would warn
 * (`TimeoutOverflowWarning`) and fire the timer after 1 ms instead.
 */
const warnings: string[] = [];
const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  process.on("warning", onWarning);
  // An unlimited plan timeout is 2^31-1 s: the attempt's timer (2^31-1 s in ms) is far beyond 32 bits. The egress
  // thread off: its timers then run in this thread, where the warning would be seen.
  server = await startTestServer({
    env: { FERRY_PLAN_PAID_TIMEOUT: "unlimited", FERRY_EGRESS_THREAD: "off" },
  });
  receiver = await Receiver.start();
});
afterEach(() => {
  warnings.length = 0;
});
afterAll(async () => {
  process.off("warning", onWarning);
  await receiver.close();
  await server.stop();
});

/** Lets a pending `process.emitWarning` (emitted on the next tick) arrive. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("timers longer than 2^31-1 ms", () => {
  it("an attempt under an unlimited plan timeout is delivered, without a TimeoutOverflowWarning", async () => {
    const res = await server.call("POST", `/v2/publish/${receiver.url("/unlimited-timeout")}`, { body: "x" });
    expect(res.status).toBe(200);
    await receiver.waitForPath("/unlimited-timeout");
    await settle();
    expect(warnings.filter((w) => w.startsWith("TimeoutOverflowWarning"))).toEqual([]);
  });

  it("the dispatcher's wake timer for a message due in 11 years is clamped, not fired at once", async () => {
    // A dispatcher of its own on the server's store, started and not yet past its first claim: its wake timer is
    // unarmed, so the next due time it hears of arms it (what a publish does while a claim runs).
    const { services } = server.ferry;
    const dispatcher = new Dispatcher({
      store: services.store,
      clock: services.clock,
      config: services.config,
      dialects: services.dialects,
      plans: services.plans,
      log: services.log,
      nodeId: "node_timers_test",
      http: server.ferry.http,
      callbacks: buildCallbacks,
      dlqIds: new DlqIdMinter(await services.store.nodeNumberTake()),
    });
    dispatcher.start();
    dispatcher.noteDue(services.clock.now() + 351_789_047_273);
    await settle();
    await dispatcher.stop();
    expect(warnings.filter((w) => w.startsWith("TimeoutOverflowWarning"))).toEqual([]);
  });
});
