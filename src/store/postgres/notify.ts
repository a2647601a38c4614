import pg from "pg";
import type { Logger } from "pino";
import { clientConfig, type PgConnectionOptions } from "./connection.js";
import { timerDelay } from "../../domain/timers.js";

/** Reconnect delays of the LISTEN connection: from 100 ms, doubling, capped at 5 s. */
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5000;

/**
 * One dedicated connection per node that LISTENs on the given channels (`ferry_due`, `ferry_accounts`) and calls
 * each channel's subscribers on each notification. When the connection drops (database restart, network), it
 * reconnects with backoff and then calls every subscriber once, since notifications sent while it was away are lost.
 * It never throws and never ends the process.
 */
export class ChannelListener {
  private readonly subscribers = new Map<string, Set<() => void>>();
  private readonly received = new Map<string, number>();
  private readonly waiters = new Set<() => void>();
  private client: pg.Client | undefined;
  private connecting = false;
  private closed = false;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: PgConnectionOptions,
    private readonly channels: readonly string[],
    private readonly log: Logger | undefined,
  ) {
    for (const channel of channels) this.subscribers.set(channel, new Set());
  }

  subscribe(channel: string, onNotify: () => void): () => void {
    const set = this.subscribers.get(channel);
    if (!set) throw new Error(`not listening on ${channel}`);
    set.add(onNotify);
    this.ensureConnected();
    return () => {
      set.delete(onNotify);
    };
  }

  /** True once the LISTEN connection is up (a notification sent from now on reaches this node). */
  get listening(): boolean {
    return this.client !== undefined;
  }

  /** Notifications received on `channel` so far (reconnects count as one, since they stand for lost ones). */
  count(channel: string): number {
    return this.received.get(channel) ?? 0;
  }

  /**
   * Resolves once more than `seen` notifications arrived on `channel`, or after `timeoutMs`. A node that wrote an
   * account waits here for its own notification: once it is back, PostgreSQL has sent it to every listening node.
   */
  waitBeyond(channel: string, seen: number, timeoutMs: number): Promise<void> {
    if (this.count(channel) > seen || !this.listening) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (this.count(channel) > seen) done();
      };
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(done, timerDelay(timeoutMs));
      this.waiters.add(check);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
    for (const check of [...this.waiters]) check();
  }

  private ensureConnected(): void {
    if (!this.client && !this.connecting && !this.retryTimer) void this.connect();
  }

  private notify(channel: string): void {
    this.received.set(channel, this.count(channel) + 1);
    for (const onNotify of this.subscribers.get(channel) ?? []) onNotify();
    for (const check of [...this.waiters]) check();
  }

  private notifyAll(): void {
    for (const channel of this.channels) this.notify(channel);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    this.connecting = true;
    const client = new pg.Client(clientConfig(this.options));
    let lost = false;
    const onLost = (error?: unknown) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = undefined;
      client.end().catch(() => {});
      if (this.closed) return;
      this.log?.warn({ err: error, retryInMs: this.retryMs }, "LISTEN connection lost; reconnecting");
      this.scheduleReconnect();
    };
    client.on("error", onLost);
    client.on("end", () => onLost());
    client.on("notification", (n) => this.notify(n.channel));
    try {
      await client.connect();
      for (const channel of this.channels) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      this.connecting = false;
      onLost(error);
      return;
    }
    this.connecting = false;
    if (lost) return;
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.retryMs = FIRST_RETRY_MS;
    // Whatever was notified while we were not listening is lost: every subscriber looks once now.
    this.notifyAll();
  }

  private scheduleReconnect(): void {
    if (this.retryTimer || this.closed) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, timerDelay(delay));
    this.retryTimer.unref();
  }
}
