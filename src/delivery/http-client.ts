import { Agent, type Dispatcher, request } from "undici";
import { addHeader, emptyHeaderMap, type HeaderMap } from "../domain/headers.js";
import type { AttemptResponse } from "../domain/message.js";
import type { EgressPolicy } from "../domain/egress-policy.js";
import { signDelivery } from "../domain/signing.js";
import { egressConnector } from "./egress.js";

/**
 * Outgoing HTTP for deliveries and callbacks: undici `request` over one keep-alive Agent (3–5x cheaper than fetch
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

async function send(agent: Dispatcher, p: SendParams): Promise<AttemptResponse> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`timeout after ${p.timeoutMs} ms`)), p.timeoutMs);
  try {
    const sign = p.sign;
    const headers = sign
      ? { ...p.headers, [sign.header]: signDelivery({ ...sign, url: p.url, body: p.body }) }
      : p.headers;
    const res = await request(p.url, {
      dispatcher: agent,
      method: p.method as Dispatcher.HttpMethod,
      headers,
      body: p.method === "GET" || p.method === "HEAD" ? undefined : p.body,
      signal: controller.signal,
      headersTimeout: p.timeoutMs,
      bodyTimeout: p.timeoutMs,
    });
    const responseHeaders: HeaderMap = emptyHeaderMap();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) addHeader(responseHeaders, name, v);
    }
    // Read up to maxBodyBytes, then stop: leaving the loop destroys the body and its connection, so a 100 MB or an
    // endless response costs neither memory nor the rest of the timeout (docs/reliability.md, "Destination faults").
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      chunks.push(buf.subarray(0, p.maxBodyBytes - size));
      size += Math.min(buf.length, p.maxBodyBytes - size);
      if (size >= p.maxBodyBytes) break;
    }
    return { status: res.statusCode, headers: responseHeaders, body: Buffer.concat(chunks) };
  } catch (error) {
    const reason = controller.signal.aborted ? controller.signal.reason : error;
    return { headers: {}, body: Buffer.alloc(0), error: describeError(reason) };
  } finally {
    clearTimeout(timer);
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
