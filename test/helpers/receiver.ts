import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { track } from "./leaks.js";

/** What a test destination answers; consumed in order by `respondWith`, then `setDefault` applies. */
export interface Behavior {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Wait this long before answering (timeouts, concurrency). */
  delayMs?: number;
  /** Destroy the socket instead of answering (a connection reset). */
  reset?: boolean;
}

export interface ReceivedRequest {
  method: string;
  /** Path and query, e.g. `/hook?x=1`. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
  /** When the request's headers arrived (before its body and any `delayMs`). */
  arrivedAt: number;
  /** When it was recorded: after the body was read and `delayMs` passed. */
  at: number;
}

/**
 * A real local HTTP receiver on 127.0.0.1 that records every request and fails on demand (style habit 10: tests
 * wait for events instead of sleeping). It also tracks how many requests are in progress at once.
 */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  maxConcurrent = 0;
  /** Most requests in progress at once per group, for the groups `trackConcurrency` names. */
  readonly maxConcurrentBy = new Map<string, number>();
  private concurrent = 0;
  private readonly concurrentBy = new Map<string, number>();
  private groupOf: (url: string) => string | undefined = () => undefined;
  private readonly script: Behavior[] = [];
  private fallback: Behavior | ((url: string) => Behavior) = { status: 200, body: "ok" };
  private readonly waiters: { ready: () => boolean; resolve: () => void }[] = [];
  private cursor = 0;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<Receiver> {
    // A request its sender abandoned mid-body (a Ferry node killed with SIGKILL) is not recorded: it never arrived.
    const server = createServer((req, res) => void receiver.handle(req, res).catch(() => req.socket.destroy()));
    server.keepAliveTimeout = 60_000;
    const receiver = new Receiver(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    track(`receiver ${receiver.url()}`, () => server.listening);
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path = "/"): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The next requests get these behaviors, in order. */
  respondWith(...behaviors: Behavior[]): this {
    this.script.push(...behaviors);
    return this;
  }

  /** What every request answers once the script is used up; a function decides per request path. */
  setDefault(behavior: Behavior | ((url: string) => Behavior)): this {
    this.fallback = behavior;
    return this;
  }

  /** Counts requests in progress per group (e.g. per flow-control key, from the path) into `maxConcurrentBy`. */
  trackConcurrency(groupOf: (url: string) => string | undefined): this {
    this.groupOf = groupOf;
    return this;
  }

  /** Resolves when at least `count` requests have arrived in total. */
  async waitForCount(count: number, timeoutMs = 10_000): Promise<ReceivedRequest[]> {
    const ready = () => this.requests.length >= count;
    await this.waitUntil(ready, timeoutMs, () => `${this.requests.length} of ${count} requests`);
    return this.requests.slice(0, count);
  }

  /**
   * Resolves with the first request to `path` (path and query). Prefer it to counting when earlier deliveries of the
   * same test file may still be on their way: one of those would satisfy a count.
   */
  async waitForPath(path: string, timeoutMs = 10_000): Promise<ReceivedRequest> {
    const find = () => this.requests.find((r) => r.url === path);
    await this.waitUntil(() => find() !== undefined, timeoutMs, () => `no request to ${path}`);
    return find()!;
  }

  private waitUntil(ready: () => boolean, timeoutMs: number, got: () => string): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = {
        ready,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`receiver got ${got()} in ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** The next request not yet returned by next(). */
  async next(opts: { timeoutMs?: number } = {}): Promise<ReceivedRequest> {
    const index = this.cursor++;
    await this.waitForCount(index + 1, opts.timeoutMs ?? 10_000);
    return this.requests[index]!;
  }

  /** Asserts that nothing more arrives during `ms` (used sparingly, for "must not happen" rules). */
  async expectQuiet(ms: number): Promise<void> {
    const before = this.requests.length;
    await new Promise((r) => setTimeout(r, ms));
    if (this.requests.length !== before) {
      throw new Error(`expected no request, got ${this.requests.length - before}`);
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrivedAt = Date.now();
    this.concurrent++;
    this.maxConcurrent = Math.max(this.maxConcurrent, this.concurrent);
    const group = this.groupOf(req.url ?? "");
    if (group !== undefined) {
      const now = (this.concurrentBy.get(group) ?? 0) + 1;
      this.concurrentBy.set(group, now);
      this.maxConcurrentBy.set(group, Math.max(this.maxConcurrentBy.get(group) ?? 0, now));
    }
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const behavior =
        this.script.shift() ?? (typeof this.fallback === "function" ? this.fallback(req.url ?? "") : this.fallback);
      if (behavior.delayMs) await new Promise((r) => setTimeout(r, behavior.delayMs));
      this.requests.push({
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body,
        text: body.toString("utf8"),
        arrivedAt,
        at: Date.now(),
      });
      for (const w of [...this.waiters]) {
        if (w.ready()) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve();
        }
      }
      if (behavior.reset) {
        req.socket.destroy();
        return;
      }
      res.writeHead(behavior.status ?? 200, behavior.headers ?? {});
      res.end(behavior.body ?? "");
    } finally {
      this.concurrent--;
      if (group !== undefined) this.concurrentBy.set(group, this.concurrentBy.get(group)! - 1);
    }
  }
}
