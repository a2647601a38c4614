import { RateLimitedLog } from "../logger.js";
import type { Services } from "../services/context.js";
import { fireDueSchedules } from "../services/schedule-ticks.js";
import type { Loop } from "./loop.js";
import { timerDelay } from "../domain/timers.js";

/**
 * The scheduler: turns due cron ticks into messages (services/schedule-ticks.ts). It runs once at start, so a tick
 * missed while the process was down (at most 60 s ago) fires right away, then every `intervalMs`.
 * The store's atomic claim, not this timer, is the source of truth: any number of nodes may run it at once.
 */
export class SchedulerLoop implements Loop {
  private timer: NodeJS.Timeout | undefined;
  /** The last pass requested; passes run one after another, never overlapping. */
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;
  /** Ticks that could not publish, one `info` line each, rate-limited per destination across passes. */
  private readonly failures: RateLimitedLog;

  constructor(
    private readonly services: Services,
    private readonly intervalMs: number,
  ) {
    this.failures = new RateLimitedLog(services.log);
  }

  get running(): boolean {
    return this.timer !== undefined;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.pending === 0) void this.runOnce();
    }, timerDelay(this.intervalMs));
    this.timer.unref();
    void this.runOnce();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.tail;
  }

  /**
   * Runs a pass that starts after every pass already requested, so it reads the clock after the call (a pass in
   * flight may have read it before a test moved it). Resolves with the number of messages published, or undefined
   * when the pass failed (the failure is logged; the loop goes on).
   */
  runOnce(): Promise<number | undefined> {
    this.pending++;
    const pass = this.tail
      .then(() => fireDueSchedules(this.services, this.failures))
      .catch((error: unknown) => {
        this.services.log.error({ err: error, loop: "scheduler" }, "background loop failed");
        return undefined;
      })
      .finally(() => {
        this.pending--;
      });
    this.tail = pass;
    return pass;
  }
}
