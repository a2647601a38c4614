/** Header maps in records use Go's canonical MIME form: `content-type` → `Content-Type`. */
export function canonicalHeaderName(name: string): string {
  return name
    .toLowerCase()
    .split("-")
    .map((part) => (part.length === 0 ? part : part[0]!.toUpperCase() + part.slice(1)))
    .join("-");
}

export type HeaderMap = Record<string, string[]>;

/** Adds a value under the canonical name, keeping earlier values (a header may repeat). */
export function addHeader(map: HeaderMap, name: string, value: string): void {
  const key = canonicalHeaderName(name);
  const list = map[key];
  if (list) list.push(value);
  else map[key] = [value];
}

/** Flattens a header map for an outgoing request: repeated values are joined as HTTP allows. */
export function flattenHeaders(map: HeaderMap): Record<string, string> {
  const out: Record<string, string> = {};
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
