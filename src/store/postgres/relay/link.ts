import { connect, type Socket } from "node:net";
import { timerDelay } from "../../../domain/timers.js";
import { errorFromWire } from "../../../threads/wire.js";
import { framePerTurn, readFrames, writeHello } from "./frames.js";
import type { RelayAnswer, RelayCall, RelayedMethod } from "./wire.js";

/** A relayed call left without an answer this long ends the link: its calls fall back to local writes. */
const CALL_TIMEOUT_MS = 10_000;

/**
 * Thrown for a relayed call whose answer will not come (the link broke, was closed, or timed out): the leader may
 * or may not have committed it, so the caller writes it again itself in a way that is safe either way (index.ts).
 */
export class RelayLost extends Error {
  constructor(cause: string) {
    super(`write relay lost: ${cause}`);
    this.name = "RelayLost";
  }
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  at: number;
}

/**
 * A follower's connection to the leader (docs/postgres.md "The write relay"). Calls made in one event-loop turn
 * leave in one frame; each resolves with the leader's answer, rejects with the leader's error (a 401, a 503 …), or
 * with RelayLost once the link is gone. A link is used until it breaks, then replaced (election.ts).
 */
export class RelayLink {
  private readonly socket: Socket;
  private readonly pending = new Map<number, Pending>();
  private readonly send: (call: RelayCall) => void;
  private nextId = 1;
  private broken: string | undefined;
  private readonly timer: NodeJS.Timeout;
  /** Set once the TCP connection was made: a link that never connected says so (election.ts backs off). */
  connected = false;

  constructor(
    readonly address: string,
    readonly port: number,
    readonly secret: string,
  ) {
    this.socket = connect({ host: address, port, noDelay: true, keepAlive: true });
    this.socket.on("connect", () => {
      this.connected = true;
    });
    writeHello(this.socket, secret); // buffered by the socket until it connects
    this.send = framePerTurn<RelayCall>(this.socket);
    readFrames(this.socket, (frame) => this.answer(frame as RelayAnswer[]));
    this.socket.on("error", (error) => this.end(error.message));
    this.socket.on("close", () => this.end("connection closed"));
    this.timer = setInterval(() => this.checkTimeouts(), timerDelay(1000));
    this.timer.unref();
  }

  get usable(): boolean {
    return this.broken === undefined;
  }

  call(method: RelayedMethod, params: unknown): Promise<unknown> {
    if (this.broken !== undefined) return Promise.reject(new RelayLost(this.broken));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, at: performance.now() });
      this.send([id, method, params]);
    });
  }

  /** Ends the link: calls still unanswered reject with RelayLost. */
  close(): void {
    this.end("closed by this node");
  }

  private answer(answers: RelayAnswer[]): void {
    for (const [id, ok, value] of answers) {
      const p = this.pending.get(id);
      if (p === undefined) continue;
      this.pending.delete(id);
      if (ok) p.resolve(value);
      else p.reject(errorFromWire(value));
    }
  }

  private checkTimeouts(): void {
    const now = performance.now();
    for (const p of this.pending.values()) {
      if (now - p.at > CALL_TIMEOUT_MS) {
        this.end(`no answer within ${CALL_TIMEOUT_MS} ms`);
        return;
      }
    }
  }

  private end(cause: string): void {
    if (this.broken !== undefined) return;
    this.broken = cause;
    clearInterval(this.timer);
    this.socket.destroy(); // calls not yet written stay unwritten (framePerTurn)
    const lost = [...this.pending.values()];
    this.pending.clear();
    for (const p of lost) p.reject(new RelayLost(cause));
  }
}
