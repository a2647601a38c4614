import { draining as drainingGauge } from "../metrics/metrics.js";

/**
 * Where this node is in its life, for /ready (docs/operations.md): not ready until start-up finished, and not ready
 * again from the moment it starts draining (SIGTERM), while in-flight deliveries finish.
 */
export class Lifecycle {
  private phase: "starting" | "running" | "draining" = "starting";

  get state(): "starting" | "running" | "draining" {
    return this.phase;
  }

  started(): void {
    if (this.phase === "starting") this.phase = "running";
  }

  drain(): void {
    this.phase = "draining";
    drainingGauge.set(1);
  }
}
