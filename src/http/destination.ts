import { unescape } from "node:querystring";
import type { FastifyRequest } from "fastify";
import type { Dialect } from "../domain/dialect.js";

/** The raw URL after a route prefix such as `/v2/publish/`, matched case-insensitively. */
export function restAfter(request: FastifyRequest, prefix: RegExp): string {
  const url = request.raw.url ?? "";
  const match = prefix.exec(url);
  return match ? url.slice(match[0].length) : "";
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    return s;
  }
}

/**
 * A configuration key or value decoded as a form would be (`+` is a space): malformed escapes and bytes that are not
 * UTF-8 become U+FFFD rather than staying raw, so `svc-deduplication-id=%FF%FE` is refused by the one value rule of
 * every channel (docs/messaging.md "Wire conventions") instead of being taken as the text `%FF%FE`.
 */
function decodeConfig(s: string): string {
  return unescape(s.replace(/\+/g, " "));
}

/**
 * Splits a raw request URL into the destination and the configuration query parameters.
 * SDKs put the destination raw after the route prefix, and the request's query string belongs to the destination
 * (docs/messaging.md "Wire conventions"): only `svc_token` and `svc-*` keys are taken out; every other pair is kept
 * byte for byte. `rest` is the raw URL after the route prefix (e.g. after `/v2/publish/`).
 */
export function splitDestination(rest: string, dialect: Dialect): { destination: string; config: Map<string, string> } {
  const q = rest.indexOf("?");
  let path = q < 0 ? rest : rest.slice(0, q);
  const query = q < 0 ? "" : rest.slice(q + 1);
  const kept: string[] = [];
  const config = new Map<string, string>();
  for (const pair of query.split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const key = decodeConfig(eq < 0 ? pair : pair.slice(0, eq)).toLowerCase();
    if (key === dialect.tokenQuery) continue;
    if (key.startsWith(dialect.prefixLower)) config.set(key, decodeConfig(eq < 0 ? "" : pair.slice(eq + 1)));
    else kept.push(pair);
  }
  // A percent-encoded destination (`https%3A%2F%2F…`) is decoded; so is a `https:/host` whose `//` a proxy collapsed.
  if (/^https?%3A/i.test(path)) path = decode(path);
  path = path.replace(/^(https?):\/(?!\/)/i, "$1://");
  const destination = kept.length > 0 ? `${path}${path.includes("?") ? "&" : "?"}${kept.join("&")}` : path;
  return { destination, config };
}

/** The decoded keys of a raw destination's query string (what `splitDestination` looks at), for the dialect. */
export function queryKeys(rest: string): string[] {
  const q = rest.indexOf("?");
  if (q < 0) return [];
  return rest
    .slice(q + 1)
    .split("&")
    .filter((pair) => pair !== "")
    .map((pair) => {
      const eq = pair.indexOf("=");
      return decode(eq < 0 ? pair : pair.slice(0, eq));
    });
}

/** Config query keys of a route without a destination (everything `svc-*`). */
export function configQuery(query: Record<string, unknown>, dialect: Dialect): Map<string, string> {
  const config = new Map<string, string>();
  for (const [key, value] of Object.entries(query)) {
    const k = key.toLowerCase();
    if (k.startsWith(dialect.prefixLower)) config.set(k, Array.isArray(value) ? String(value[0]) : String(value));
  }
  return config;
}
