import { type ChildProcess, fork } from "node:child_process";
import { performance } from "node:perf_hooks";

/** Wall-clock milliseconds with sub-millisecond precision; comparable between the generator's and receiver's processes. */
export const nowMs = (): number => performance.timeOrigin + performance.now();

/** Header a publisher sets (through the system under test) to the send time, in `nowMs()` milliseconds. */
export const SENT_HEADER = "x-bench-sent";
/** Header carrying the intended delay in ms of a delayed message, for lateness. */
export const DELAY_HEADER = "x-bench-delay";

/** What the receiver counted since its last reset. */
export interface ReceiverCounts {
  count: number;
  firstAt: number;
  lastAt: number;
  byPath: Record<string, number>;
  /** publish→arrival in ms, for requests carrying SENT_HEADER without DELAY_HEADER. */
  latencies: number[];
  /** arrival − (send + delay) in ms, for requests carrying both headers. */
  lateness: number[];
  /** Arrivals that carried a signature header (Ferry signs; the peers do not). */
  signed: number;
  /** Arrivals whose message id had already arrived (only counted with `trackMessageIds`). */
  duplicates: number;
}

/** The counts of a receiver that has received nothing. */
export const noCounts = (): ReceiverCounts => ({
  count: 0,
  firstAt: 0,
  lastAt: 0,
  byPath: {},
  latencies: [],
  lateness: [],
  signed: 0,
  duplicates: 0,
});

/** A request the receiver answers; the bench numbers it to match the answer. */
type Question = { type: "reset"; trackMessageIds: boolean } | { type: "wait"; count: number; timeoutMs: number };

/** Bench → receiver process (bench/apps/receiver-app.ts). */
export type ReceiverRequest = (Question & { id: number }) | { type: "close" };

/** Receiver process → bench. */
export type ReceiverReply =
  | { type: "ready"; port: number }
  | { type: "done"; id: number }
  | { type: "waited"; id: number; ok: boolean; counts: ReceiverCounts };

const APP = new URL("../apps/receiver-app.ts", import.meta.url);

/**
 * The destination every scenario delivers to. It runs in a child process of its own (bench/apps/receiver-app.ts),
 * so the bench reports the generator's CPU (this process) and the receiver's apart. The counts below are those of
 * the receiver's last answer: `waitFor` brings them up to date.
 */
export class BenchReceiver implements ReceiverCounts {
  count = 0;
  firstAt = 0;
  lastAt = 0;
  byPath: Record<string, number> = {};
  latencies: number[] = [];
  lateness: number[] = [];
  signed = 0;
  duplicates = 0;
  /**
   * Set by scenarios with several delivering nodes before their first reset: message ids (the `Svc-Message-Id`
   * header) are remembered and an arrival whose id was seen before counts as a duplicate (one Set insert per arrival).
   */
  trackMessageIds = false;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (reply: ReceiverReply) => void; reject: (e: Error) => void }>();

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {
    child.on("message", (reply: ReceiverReply) => {
      if (reply.type === "ready") return;
      this.pending.get(reply.id)?.resolve(reply);
      this.pending.delete(reply.id);
    });
    child.on("exit", (code) => {
      for (const { reject } of this.pending.values()) reject(new Error(`the bench receiver exited (${code})`));
      this.pending.clear();
    });
  }

  static async start(): Promise<BenchReceiver> {
    const child = fork(APP, [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
    const port = await new Promise<number>((resolve, reject) => {
      child.once("message", (reply: ReceiverReply) => {
        if (reply.type === "ready") resolve(reply.port);
      });
      child.once("exit", (code) => reject(new Error(`the bench receiver exited (${code}) before it was ready`)));
    });
    return new BenchReceiver(child, port);
  }

  /** The receiver process, for CPU accounting. */
  get pid(): number {
    return this.child.pid!;
  }

  url(path = "/"): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Forgets every count, between phases of one scenario; resolves once the receiver has. */
  async reset(): Promise<void> {
    await this.ask({ type: "reset", trackMessageIds: this.trackMessageIds });
    Object.assign(this, noCounts());
  }

  /**
   * Resolves true once `count` requests (distinct messages with `trackMessageIds`) arrived, false after `timeoutMs`
   * (never rejects: the caller reports). Either way the counts are then the receiver's.
   */
  async waitFor(count: number, timeoutMs: number): Promise<boolean> {
    const reply = await this.ask({ type: "wait", count, timeoutMs });
    if (reply.type !== "waited") return false;
    Object.assign(this, reply.counts);
    return reply.ok;
  }

  close(): Promise<void> {
    if (this.child.exitCode !== null || !this.child.connected) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once("exit", () => resolve());
      this.child.send({ type: "close" } satisfies ReceiverRequest);
    });
  }

  private ask(question: Question): Promise<ReceiverReply> {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ ...question, id } satisfies ReceiverRequest);
    });
  }
}
