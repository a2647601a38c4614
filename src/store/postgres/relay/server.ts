import { createServer, type Server, type Socket } from "node:net";
import { timerDelay } from "../../../domain/timers.js";
import { timingSafeEqual } from "node:crypto";
import type { Logger } from "pino";
import { relayServed } from "../../../metrics/metrics.js";
import { errorToWire } from "../../../threads/wire.js";
import { framePerTurn, readFrames } from "./frames.js";
import type { RelayAnswer, RelayCall, RelayedMethod } from "./wire.js";

/** A connection that has not shown the secret within this long is closed. */
const HELLO_TIMEOUT_MS = 5000;
/** The most a closing leader waits for the calls it accepted to be answered. */
const CLOSE_WAIT_MS = 10_000;

export type RelayTarget = Record<RelayedMethod, (params: never) => Promise<unknown>>;

const sameSecret = (shown: Buffer, secret: Buffer) => shown.length === secret.length && timingSafeEqual(shown, secret);

/**
 * The leader's end of the write relay (docs/postgres.md "The write relay"): it runs each relayed call on its own
 * store, where it joins this node's group commit like any of its own calls, and answers once that call settled
 * (after its COMMIT). Answers finished in one event-loop turn leave in one frame per connection.
 */
export class RelayServer {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private inFlight = 0;
  private readonly idle = new Set<() => void>();

  constructor(
    private readonly target: RelayTarget,
    private readonly secret: string,
    private readonly log: Logger | undefined,
  ) {
    this.server = createServer({ noDelay: true }, (socket) => this.accept(socket));
  }

  /** Listens on `host`, on a port the system picks; resolves with that port. */
  listen(host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen({ host, port: 0 }, () => {
        this.server.removeListener("error", reject);
        const address = this.server.address();
        resolve(typeof address === "object" && address !== null ? address.port : 0);
      });
    });
  }

  /** Stops accepting, answers what was accepted (bounded), then closes every connection. */
  async close(): Promise<void> {
    this.server.close();
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timerDelay(CLOSE_WAIT_MS));
        this.idle.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    const helloTimer = setTimeout(() => socket.destroy(), timerDelay(HELLO_TIMEOUT_MS));
    const send = framePerTurn<RelayAnswer>(socket);
    const secret = Buffer.from(this.secret);
    const hello = (shown: Buffer) => {
      clearTimeout(helloTimer);
      const trusted = sameSecret(shown, secret);
      if (!trusted) this.log?.warn({ remote: socket.remoteAddress }, "write relay: a connection without the secret, closed");
      return trusted;
    };
    readFrames(
      socket,
      (frame) => {
        if (!Array.isArray(frame)) {
          socket.destroy();
          return;
        }
        for (const [id, method, params] of frame as RelayCall[]) this.run(id, method, params, send);
      },
      hello,
    );
  }

  private run(id: number, method: RelayedMethod, params: unknown, send: (answer: RelayAnswer) => void): void {
    const call = Object.hasOwn(this.target, method)
      ? (this.target[method] as (params: unknown) => Promise<unknown>)
      : undefined;
    this.inFlight++;
    // Through a promise even when the method throws at once: every accepted call is answered and counted out.
    const settled =
      call === undefined
        ? Promise.reject(new Error(`not a relayed method: ${String(method)}`))
        : Promise.resolve().then(() => call(params));
    settled.then(
      (value) => {
        relayServed.inc({ method });
        send([id, true, value]);
      },
      (error: unknown) => send([id, false, errorToWire(error)]),
    ).finally(() => {
      this.inFlight--;
      if (this.inFlight === 0) {
        for (const resolve of this.idle) resolve();
        this.idle.clear();
      }
    });
  }
}
