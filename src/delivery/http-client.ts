import { Agent, type Dispatcher } from "undici";
import { addHeader, emptyHeaderMap, type HeaderMap } from "../domain/headers.js";
import type { AttemptResponse } from "../domain/message.js";
import type { EgressPolicy } from "../domain/egress-policy.js";
import { signDelivery } from "../domain/signing.js";
import { egressConnector } from "./egress.js";

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
}

export interface HttpClient {
  send(p: SendParams): Promise<AttemptResponse>;
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
    close: () => agent.close(),
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
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    /** Set when the attempt timed out before undici started it (still queued or connecting): abort it on start. */
    let abortOnStart: Error | undefined;
    const settle = (response: AttemptResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(response);
    };
    const fail = (error: unknown) => settle({ headers: {}, body: Buffer.alloc(0), error: describeError(error) });
    const timer = setTimeout(() => {
      const reason = new Error(`timeout after ${p.timeoutMs} ms`);
      if (controller) controller.abort(reason);
      else abortOnStart = reason;
      fail(reason);
    }, p.timeoutMs);

    let status = 0;
    const responseHeaders: HeaderMap = emptyHeaderMap();
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      const url = new URL(p.url);
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`unsupported protocol ${url.protocol}`);
      const sign = p.sign;
      const headers = sign
        ? { ...p.headers, [sign.header]: signDelivery({ ...sign, url: p.url, body: p.body }) }
        : p.headers;
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
        {
          onRequestStart: (c) => {
            controller = c;
            if (abortOnStart) c.abort(abortOnStart);
          },
          onResponseStart: (_c, statusCode, headersIn) => {
            status = statusCode;
            for (const [name, value] of Object.entries(headersIn)) {
              if (value === undefined) continue;
              for (const v of Array.isArray(value) ? value : [value]) addHeader(responseHeaders, name, v);
            }
          },
          // Read up to maxBodyBytes, then stop: aborting destroys the body and its connection, so a 100 MB or an
          // endless response costs neither memory nor the rest of the timeout (docs/reliability.md, "Destination
          // faults").
          onResponseData: (c, chunk) => {
            chunks.push(chunk.subarray(0, p.maxBodyBytes - size));
            size += Math.min(chunk.length, p.maxBodyBytes - size);
            if (size < p.maxBodyBytes) return;
            settle({ status, headers: responseHeaders, body: Buffer.concat(chunks) });
            c.abort(new Error("response body read up to the limit"));
          },
          onResponseEnd: () => settle({ status, headers: responseHeaders, body: Buffer.concat(chunks) }),
          onResponseError: (_c, error) => fail(error),
        },
      );
    } catch (error) {
      fail(error);
    }
  });
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
