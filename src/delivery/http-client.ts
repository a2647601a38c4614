import type { IncomingHttpHeaders } from "node:http";
import { Agent, type Dispatcher } from "undici";
import { addHeader, emptyHeaderMap, type HeaderMap } from "../domain/headers.js";
import type { AttemptResponse } from "../domain/message.js";
import type { EgressPolicy } from "../domain/egress-policy.js";
import { signDelivery } from "../domain/signing.js";
import { egressConnector } from "./egress.js";
import { timerDelay } from "../domain/timers.js";

/**
 * Outgoing HTTP for deliveries and callbacks: undici's `dispatch` over one keep-alive Agent (3–5x cheaper than fetch
 * here). The whole attempt, body included, is bounded by `timeoutMs`; the response body is read up to `maxBodyBytes`.
 * Redirects are never followed (a 3xx is a failed attempt, retried); TLS certificates are verified (a self-signed one
 * fails the attempt as a TLS error, retried). docs/reliability.md lists every destination fault and its outcome.
 */
export interface SendParams {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  timeoutMs: number;
  maxBodyBytes: number;
  /** Signs the request (docs/messaging.md "Signing keys") into `header`: done here, in the thread that sends. */
  sign?: { header: string; key: string; issuer: string; nowMs: number };
  /**
   * A 2xx answer then carries its status alone (no headers, an empty body; the body is still read, up to
   * `maxBodyBytes`): for an attempt whose success needs nothing more than the status (no callback, not a workflow
   * step; src/delivery/dispatcher.ts). Spares building the header map and the body, and, from the egress thread,
   * carrying them back to the main thread. Any other answer is whole.
   */
  statusOnlyOnSuccess?: boolean;
}

export interface HttpClient {
  send(p: SendParams): Promise<AttemptResponse>;
  /** Aborts what is still in flight (its sends answer with an error) and closes the connections. */
  close(): Promise<void>;
}

export function createHttpClient(options: { egress: EgressPolicy }): HttpClient {
  const agent = new Agent({
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    connect: egressConnector(options.egress, { timeout: 10_000 }),
  });
  return {
    send: (p) => send(agent, p),
    // Called at shutdown once the dispatcher has drained or abandoned its attempts (dispatcher.ts, stop): what is
    // still in flight is aborted, not waited for, so SIGTERM's grace bounds the stop.
    close: () => agent.destroy(),
  };
}

/**
 * One attempt on undici's `dispatch` API rather than `request`: `request` wraps every response in a Readable stream
 * and an AsyncResource, and the whole-attempt bound needed an AbortController whose listener undici adds and
 * removes per request. With a handler of our own the attempt cost 13 µs less CPU (27 against 40 µs a request, client
 * and server, in a loop on this machine; docs/threading.md "Where the rest goes").
 */
function send(agent: Dispatcher, p: SendParams): Promise<AttemptResponse> {
  return new Promise((resolve) => {
    const attempt = new Attempt(p, resolve);
    try {
      const url = new URL(p.url);
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`unsupported protocol ${url.protocol}`);
      const sign = p.sign;
      let headers = p.headers;
      if (sign) {
        // Copied key by key, not `{ ...p.headers, [sign.header]: … }` (nor `{ ...sign, url, body }`): V8 builds a
        // spread followed by a new property on a slow path, ~0.6 µs each per attempt (docs/threading.md "The P1
        // path now"). The caller's map is left as it was; null prototype, as flattenHeaders' (a header may be named
        // `__proto__`: test/e2e/hostile-headers.test.ts).
        headers = emptyHeaderMap<string>();
        for (const name in p.headers) headers[name] = p.headers[name]!;
        const claims = { key: sign.key, issuer: sign.issuer, url: p.url, body: p.body, nowMs: sign.nowMs };
        headers[sign.header] = signDelivery(claims);
      }
      agent.dispatch(
        {
          origin: url.origin,
          path: url.search ? `${url.pathname}${url.search}` : url.pathname,
          method: p.method as Dispatcher.HttpMethod,
          headers,
          body: p.method === "GET" || p.method === "HEAD" ? undefined : p.body,
          headersTimeout: p.timeoutMs,
          bodyTimeout: p.timeoutMs,
        },
        attempt,
      );
    } catch (error) {
      attempt.fail(error);
    }
  });
}

/** undici's handler for one attempt: collects the answer, bounds it in time and size, and settles once. */
class Attempt implements Dispatcher.DispatchHandler {
  private settled = false;
  private controller: Dispatcher.DispatchController | undefined;
  /** Set when the attempt timed out before undici started it (still queued or connecting): abort it on start. */
  private abortOnStart: Error | undefined;
  private readonly timer: NodeJS.Timeout;
  private status = 0;
  /** A success whose answer is its status alone (`SendParams.statusOnlyOnSuccess`). */
  private statusOnly = false;
  private readonly headers: HeaderMap = emptyHeaderMap();
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly p: SendParams,
    private readonly resolve: (response: AttemptResponse) => void,
  ) {
    this.timer = setTimeout(() => this.timeOut(), timerDelay(p.timeoutMs));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortOnStart) controller.abort(this.abortOnStart);
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.status = statusCode;
    this.statusOnly = this.p.statusOnlyOnSuccess === true && statusCode >= 200 && statusCode < 300;
    if (this.statusOnly) return;
    for (const name in headers) {
      const value = headers[name];
      if (value === undefined) continue;
      if (typeof value === "string") addHeader(this.headers, name, value);
      else for (const v of value) addHeader(this.headers, name, v);
    }
  }

  /**
   * Reads up to maxBodyBytes, then stops: aborting destroys the body and its connection, so a 100 MB or an endless
   * response costs neither memory nor the rest of the timeout (docs/reliability.md, "Destination faults").
   */
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const room = this.p.maxBodyBytes - this.size;
    if (!this.statusOnly) this.chunks.push(chunk.length <= room ? chunk : chunk.subarray(0, room));
    this.size += Math.min(chunk.length, room);
    if (this.size < this.p.maxBodyBytes) return;
    this.answer();
    controller.abort(new Error("response body read up to the limit"));
  }

  onResponseEnd(): void {
    this.answer();
  }

  onResponseError(_c: Dispatcher.DispatchController, error: Error): void {
    this.fail(error);
  }

  fail(error: unknown): void {
    this.settle({ headers: {}, body: Buffer.alloc(0), error: describeError(error) });
  }

  private answer(): void {
    // Its own empty buffer, not a shared one: the egress thread moves what it answers (src/threads/wire.ts).
    const body = this.statusOnly ? Buffer.alloc(0) : Buffer.concat(this.chunks);
    this.settle({ status: this.status, headers: this.headers, body });
  }

  private timeOut(): void {
    const reason = new Error(`timeout after ${this.p.timeoutMs} ms`);
    if (this.controller) this.controller.abort(reason);
    else this.abortOnStart = reason;
    this.fail(reason);
  }

  private settle(response: AttemptResponse): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(response);
  }
}

function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: string }).code;
    const cause = (error as { cause?: unknown }).cause;
    const causeText = cause instanceof Error ? `: ${cause.message}` : "";
    return `${code ? `${code}: ` : ""}${error.message}${causeText}`;
  }
  return String(error);
}
