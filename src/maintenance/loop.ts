import type { Logger } from "pino";

/** Every background loop has the same contract: start(), an idempotent stop() that waits, and runOnce() for tests. */
export interface Loop {
  start(): void;
  stop(): Promise<void>;
  runOnce(): Promise<unknown>;
}

/** Runs `work` every `intervalMs`, never overlapping itself; errors are logged and the loop goes on. */
export class IntervalLoop implements Loop {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<unknown> | undefined;

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly work: () => Promise<unknown>,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.current;
  }

  runOnce(): Promise<unknown> {
    return this.tick();
  }

  private tick(): Promise<unknown> {
    if (this.current) return this.current;
    this.current = this.work()
      .catch((error: unknown) => this.log.error({ err: error, loop: this.name }, "background loop failed"))
      .finally(() => {
        this.current = undefined;
      });
    return this.current;
  }
}
