import { invalidField, quoted } from "../errors.js";
import { boundedMemo } from "./bounded-memo.js";

/**
 * Header maps in records use Go's canonical MIME form: `content-type` → `Content-Type`. Remembered: every publish
 * and every response canonicalizes the same few names.
 */
export const canonicalHeaderName = boundedMemo((name: string): string =>
  name
    .toLowerCase()
    .split("-")
    .map((part) => (part.length === 0 ? part : part[0]!.toUpperCase() + part.slice(1)))
    .join("-"),
);

export type HeaderMap = Record<string, string[]>;

/**
 * An empty header map without a prototype. Header names come from clients and destinations, and names such as
 * `__proto__` or `constructor` are valid HTTP tokens: on a plain object they read inherited members (and `__proto__`
 * assignment replaces the prototype). Every map Ferry builds from outside names starts here (docs/reliability.md).
 */
export function emptyHeaderMap<T = string[]>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** Own-property lookup, safe on maps that came back from JSON or a structured clone with a prototype again. */
export function ownHeader<T>(map: Record<string, T>, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(map, key) ? map[key] : undefined;
}

/** Adds a value under the canonical name, keeping earlier values (a header may repeat). */
export function addHeader(map: HeaderMap, name: string, value: string): void {
  const key = canonicalHeaderName(name);
  const list = ownHeader(map, key);
  if (list) list.push(value);
  // defineProperty, not assignment: a plain-object map must not run the `__proto__` setter.
  else Object.defineProperty(map, key, { value: [value], enumerable: true, writable: true, configurable: true });
}

/** Flattens a header map for an outgoing request: repeated values are joined as HTTP allows. */
export function flattenHeaders(map: HeaderMap): Record<string, string> {
  const out = emptyHeaderMap<string>();
  for (const [name, values] of Object.entries(map)) out[name] = values.join(", ");
  return out;
}

/** Hop-by-hop and transport headers never forwarded to a destination. */
export const unforwardableHeaders = new Set([
  "authorization",
  "host",
  "content-length",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "proxy-authorization",
  "proxy-connection",
  "expect",
]);

/**
 * Names a destination request can never carry: hop-by-hop headers (RFC 9110 §7.6.1), which belong to one connection,
 * and the framing headers the HTTP client computes itself. The client refuses to send them, so a message forwarding
 * one would fail every attempt; publish refuses it instead, with a 400 naming the header (docs/reliability.md).
 */
export const unsendableHeaders = new Set([
  // Host comes from the destination URL: a forwarded one would aim the signed request elsewhere, and a malformed
  // one (`[x`) makes the HTTP client fail every attempt (found by the fuzzer's ledger).
  "host",
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "expect",
  "content-length",
]);

export const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What an HTTP/1.1 header value may hold (RFC 9110 §5.5: no CR, LF, NUL or other controls but tab; latin-1). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Refuses, with a 400 naming `field`, a header name that no request to a destination could carry. */
export function refuseUnsendableHeader(name: string, field: string): void {
  if (name.length === 0) throw invalidField(field, "the forwarded header name is empty");
  if (!HTTP_TOKEN.test(name)) throw invalidField(field, `${quoted(name)} is not a valid header name`);
  if (unsendableHeaders.has(name.toLowerCase())) {
    throw invalidField(field, `${quoted(name)} is a hop-by-hop or framing header and cannot be forwarded`);
  }
}

/** Refuses a header value the HTTP client cannot send (control characters, characters beyond latin-1). */
export function refuseUnsendableValue(value: string, field: string): void {
  if (!HEADER_VALUE.test(value)) throw invalidField(field, "the value holds control or non-latin-1 characters");
}
