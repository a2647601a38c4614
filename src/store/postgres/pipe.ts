import type pg from "pg";
import { compose, type ComposableStatement, type Statement } from "./compose.js";

/* The connection of one group-commit run, with its statements held back until they must leave (write-batcher.ts). */

const queryConfig = (statement: Statement, values: unknown[]) =>
  typeof statement === "string" ? { text: statement, values } : { name: statement.name, text: statement.text, values };

const isComposable = (statement: Statement): statement is ComposableStatement =>
  typeof statement !== "string" && "steps" in statement;

interface Held {
  statement: ComposableStatement;
  values: unknown[];
  resolve: (result: pg.QueryResult) => void;
  reject: (error: unknown) => void;
}

/**
 * A batch's connection with its writes held back until they are needed: statements sent in a row (BEGIN and the
 * first statement, the deferred ones, the flush and COMMIT) leave in one socket write, and PostgreSQL reads them in
 * one go. pg writes each statement on its own otherwise (pipeline mode sends without waiting, but one write each),
 * and on loopback each write also does the server's side of the work. Anything awaited flushes first.
 *
 * Composing (a pipelined run): BEGIN and the statements whose answers wait for COMMIT (`sendLater`) are not sent at
 * all while they are composable (compose.ts). If the run ends that way, they leave as ONE statement in autocommit,
 * without BEGIN and COMMIT; the first statement that must be sent on its own sends BEGIN and what was held first,
 * in their order, and the run goes on as a transaction.
 */
export class Pipe {
  private corked = false;
  /** The deferred statements of the current run, in the order they were sent. */
  readonly deferred: Promise<unknown>[] = [];
  private composing: boolean;
  private held: Held[] = [];
  private settleBegin: { resolve: () => void; reject: (error: unknown) => void } | undefined;

  constructor(
    readonly client: pg.PoolClient,
    compose = false,
  ) {
    this.composing = compose;
  }

  /** Opens the run's transaction: at once, or when composing, once a statement has to be sent on its own. */
  begin(): Promise<unknown> {
    if (!this.composing) return this.send("BEGIN");
    return new Promise<void>((resolve, reject) => {
      this.settleBegin = { resolve, reject };
    });
  }

  /** Sends without waiting (held back until `flush`). */
  send(statement: Statement, values: unknown[] = []): Promise<pg.QueryResult> {
    this.stopComposing();
    return this.sendNow(statement, values);
  }

  /** A statement whose answer is only needed at COMMIT: held to be composed with the others when it can be. */
  sendLater(statement: Statement, values: unknown[] = []): Promise<pg.QueryResult> {
    if (!this.composing || !isComposable(statement)) return this.send(statement, values);
    return new Promise((resolve, reject) => this.held.push({ statement, values, resolve, reject }));
  }

  /** Lets everything held back leave now (one write). */
  flush(): void {
    if (!this.corked) return;
    this.corked = false;
    socketOf(this.client)?.uncork();
  }

  /** Sends, flushes and waits for the answer. */
  query(statement: Statement, values: unknown[] = []): Promise<pg.QueryResult> {
    const result = this.send(statement, values);
    this.flush();
    return result;
  }

  /**
   * Ends the run: COMMIT; or, when every statement of the run was held, all of them as ONE statement, which commits
   * alone (nothing at all when nothing was held: no transaction was opened).
   */
  commit(): Promise<unknown> {
    if (this.composing) {
      if (this.held.length === 0) {
        this.endComposing();
        return Promise.resolve();
      }
      const composed = compose(this.held);
      if (composed !== undefined) {
        const held = this.endComposing();
        const result = this.sendNow(composed.statement, composed.values);
        for (const h of held) result.then(h.resolve, h.reject);
        return result;
      }
    }
    return this.send("COMMIT");
  }

  /** Rolls the run back; when composing nothing was sent, so what was held is simply dropped. */
  rollback(): Promise<unknown> {
    if (!this.composing) return this.query("ROLLBACK");
    for (const h of this.endComposing()) h.reject(new Error("rolled back before it was sent"));
    return Promise.resolve();
  }

  /** Composing ends without BEGIN (nothing opened a transaction): returns what was held. */
  private endComposing(): Held[] {
    const held = this.held;
    this.composing = false;
    this.held = [];
    this.settleBegin?.resolve();
    return held;
  }

  /** The first failure among the deferred statements sent so far (they are answered in order), if any. */
  async deferredFailure(): Promise<unknown> {
    if (this.composing) return undefined; // nothing was sent
    for (const d of this.deferred) {
      try {
        await d;
      } catch (error) {
        return error ?? new Error("deferred statement failed");
      }
    }
    return undefined;
  }

  /** A statement must leave on its own: BEGIN and what was held go first, in their order. */
  private stopComposing(): void {
    if (!this.composing) return;
    this.composing = false;
    const settle = this.settleBegin;
    const begun = this.sendNow("BEGIN");
    if (settle) begun.then(() => settle.resolve(), settle.reject);
    else begun.catch(() => {});
    for (const h of this.held) this.sendNow(h.statement, h.values).then(h.resolve, h.reject);
    this.held = [];
  }

  private sendNow(statement: Statement, values: unknown[] = []): Promise<pg.QueryResult> {
    if (!this.corked) {
      this.corked = true;
      socketOf(this.client)?.cork();
    }
    return this.client.query(queryConfig(statement, values));
  }
}

/**
 * The client's socket. pg keeps it as `connection.stream` (not in its types); without it statements simply leave
 * one write each, as before.
 */
function socketOf(client: pg.PoolClient): { cork(): void; uncork(): void } | undefined {
  const stream = (client as unknown as { connection?: { stream?: { cork?: unknown; uncork?: unknown } } }).connection
    ?.stream;
  return stream && typeof stream.cork === "function" && typeof stream.uncork === "function"
    ? (stream as { cork(): void; uncork(): void })
    : undefined;
}
