import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";

/** Wall-clock milliseconds with sub-millisecond precision; generator and receiver share this process's clock. */
export const nowMs = (): number => performance.timeOrigin + performance.now();

/** Header a publisher sets (through the system under test) to the send time, in `nowMs()` milliseconds. */
export const SENT_HEADER = "x-bench-sent";
/** Header carrying the intended delay in ms of a delayed message, for lateness. */
export const DELAY_HEADER = "x-bench-delay";
/** Ferry's message id on every delivery (neutral dialect), lower-cased as node:http gives it. */
const MESSAGE_ID_HEADER = "svc-message-id";

/**
 * The destination every scenario delivers to: a bare node:http server on 127.0.0.1 in the bench process that
 * answers 200 at once, counts arrivals (per path too, for fan-out), and records publish→arrival latency and
 * lateness when the request carries the bench headers. It keeps only numbers, never bodies.
 */
export class BenchReceiver {
  count = 0;
  firstAt = 0;
  lastAt = 0;
  readonly byPath = new Map<string, number>();
  /** publish→arrival in ms, for requests carrying SENT_HEADER without DELAY_HEADER. */
  readonly latencies: number[] = [];
  /** arrival − (send + delay) in ms, for requests carrying both headers. */
  readonly lateness: number[] = [];
  /** Arrivals that carried a signature header (Ferry signs; the peers do not). */
  signed = 0;
  /**
   * Set by scenarios with several delivering nodes: message ids (the `Svc-Message-Id` header) are remembered and an
   * arrival whose id was seen before counts as a duplicate. Off by default (one Set insert per arrival).
   */
  trackMessageIds = false;
  /** Arrivals whose message id had already arrived (only counted with `trackMessageIds`). */
  duplicates = 0;
  private readonly seenIds = new Set<string>();
  private waiters: { count: number; resolve: () => void }[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<BenchReceiver> {
    const server = createServer();
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 70_000;
    const receiver = new BenchReceiver(server);
    server.on("request", (req: IncomingMessage, res: ServerResponse) => receiver.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path = "/"): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Forgets every count, between phases of one scenario. */
  reset(): void {
    this.count = 0;
    this.firstAt = 0;
    this.lastAt = 0;
    this.signed = 0;
    this.duplicates = 0;
    this.seenIds.clear();
    this.byPath.clear();
    this.latencies.length = 0;
    this.lateness.length = 0;
  }

  /** Arrivals that count towards `waitFor`: distinct messages when ids are tracked (a duplicate is not progress). */
  private get arrived(): number {
    return this.trackMessageIds ? this.count - this.duplicates : this.count;
  }

  /**
   * Resolves true once `count` requests (distinct messages with `trackMessageIds`) arrived, false after `timeoutMs`
   * (never rejects: the caller reports).
   */
  waitFor(count: number, timeoutMs: number): Promise<boolean> {
    if (this.arrived >= count) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    // Drain the body without keeping it; answer when it has fully arrived, as a real endpoint would.
    req.on("data", () => {});
    req.on("end", () => {
      const at = nowMs();
      this.count++;
      if (this.firstAt === 0) this.firstAt = at;
      this.lastAt = at;
      const path = req.url ?? "/";
      this.byPath.set(path, (this.byPath.get(path) ?? 0) + 1);
      const sent = req.headers[SENT_HEADER];
      if (typeof sent === "string") {
        const delay = req.headers[DELAY_HEADER];
        if (typeof delay === "string") this.lateness.push(at - (Number(sent) + Number(delay)));
        else this.latencies.push(at - Number(sent));
      }
      if (req.headers["svc-signature"] !== undefined) this.signed++;
      const id = req.headers[MESSAGE_ID_HEADER];
      if (this.trackMessageIds && typeof id === "string") {
        if (this.seenIds.has(id)) this.duplicates++;
        else this.seenIds.add(id);
      }
      res.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
      res.end("ok");
      if (this.waiters.length > 0) {
        const ready = this.waiters.filter((w) => this.arrived >= w.count);
        if (ready.length > 0) {
          this.waiters = this.waiters.filter((w) => this.arrived < w.count);
          for (const w of ready) w.resolve();
        }
      }
    });
  }
}
