import type { Logger } from "pino";
import { timerDelay } from "../domain/timers.js";

/**
 * Every background loop has the same contract: start() (idempotent), stop() (idempotent; resolves once the pass in
 * flight is over), runOnce() for tests and `running` (true between start() and stop(); the test suite fails a file
 * that leaves one running: test/helpers/leaks.ts). Each loop lives in its own file of src/maintenance/ (the
 * dispatcher, the delivery engine, in src/delivery/); src/server.ts only wires them.
 */
export interface Loop {
  start(): void;
  stop(): Promise<void>;
  runOnce(): Promise<unknown>;
  readonly running: boolean;
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

  get running(): boolean {
    return this.timer !== undefined;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), timerDelay(this.intervalMs));
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
