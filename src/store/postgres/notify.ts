import pg from "pg";
import type { Logger } from "pino";
import { clientConfig, type PgConnectionOptions } from "./connection.js";
import { DUE_CHANNEL } from "./context.js";

/** Reconnect delays of the LISTEN connection: from 100 ms, doubling, capped at 5 s. */
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5000;

/**
 * One dedicated connection per node that LISTENs on `ferry_due` and calls every subscriber on each notification.
 * When the connection drops (database restart, network), it reconnects with backoff and then calls the subscribers
 * once, since notifications sent while it was away are lost. It never throws and never ends the process.
 */
export class DueListener {
  private readonly subscribers = new Set<() => void>();
  private client: pg.Client | undefined;
  private connecting = false;
  private closed = false;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: PgConnectionOptions,
    private readonly log: Logger | undefined,
  ) {}

  subscribe(onDue: () => void): () => void {
    this.subscribers.add(onDue);
    if (!this.client && !this.connecting && !this.retryTimer) void this.connect();
    return () => {
      this.subscribers.delete(onDue);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private notifyAll(): void {
    for (const onDue of this.subscribers) onDue();
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
    client.on("notification", () => this.notifyAll());
    try {
      await client.connect();
      await client.query(`LISTEN ${DUE_CHANNEL}`);
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
    // Whatever was notified while we were not listening is lost: look once now.
    this.notifyAll();
  }

  private scheduleReconnect(): void {
    if (this.retryTimer || this.closed) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, delay);
    this.retryTimer.unref();
  }
}
