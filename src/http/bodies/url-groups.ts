import {
  addHeader,
  emptyHeaderMap,
  type HeaderMap,
  refuseUnsendableHeader,
  refuseUnsendableValue,
} from "../../domain/headers.js";
import { parseHttpUrl } from "../../domain/publish-config.js";
import type { TopicEndpoint } from "../../domain/records.js";
import { invalidField, quoted } from "../../errors.js";
import type { EndpointSelector } from "../../store/topic-store.js";
import { keyName } from "../query.js";

/*
 * The request bodies of the URL-group routes (docs/url-groups.md), read into the typed values that
 * src/services/url-groups.ts takes. Every refusal is a 400 naming the field.
 */

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const MAX_ENDPOINT_NAME = 256;

function endpointList(body: unknown): unknown[] {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidField("body", 'must be a JSON object {"endpoints": [...]}');
  }
  const list = (body as { endpoints?: unknown }).endpoints;
  if (!Array.isArray(list) || list.length === 0) throw invalidField("endpoints", "must be a non-empty array");
  return list;
}

function endpointName(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw invalidField(field, "must be a string");
  if (value.length > MAX_ENDPOINT_NAME) throw invalidField(field, `must be at most ${MAX_ENDPOINT_NAME} characters`);
  return value;
}

function entry(value: unknown, i: number): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidField(`endpoints[${i}]`, "must be an object");
  }
  return value as Record<string, unknown>;
}

/** `{"endpoints":[{"url", "name"?}]}`: every URL must be http(s); a name may not point at two URLs. */
export function parseEndpoints(body: unknown): TopicEndpoint[] {
  const byUrl = new Map<string, TopicEndpoint>();
  endpointList(body).forEach((raw, i) => {
    const e = entry(raw, i);
    if (typeof e.url !== "string" || e.url.trim() === "") throw invalidField(`endpoints[${i}].url`, "is required");
    const url = parseHttpUrl(e.url, `endpoints[${i}].url`);
    const name = endpointName(e.name, `endpoints[${i}].name`);
    byUrl.set(url, name !== undefined ? { url, name } : { url });
  });
  const names = new Map<string, string>();
  for (const e of byUrl.values()) {
    if (e.name === undefined) continue;
    const other = names.get(e.name);
    if (other !== undefined) throw invalidField("endpoints", `name ${quoted(e.name)} is given to two URLs`);
    names.set(e.name, e.url);
  }
  return [...byUrl.values()];
}

/** `{"endpoints":[{"url"?, "name"?}]}`: each entry needs a URL or a name. */
export function parseEndpointSelectors(body: unknown): EndpointSelector[] {
  return endpointList(body).map((raw, i) => {
    const e = entry(raw, i);
    const selector: EndpointSelector = {};
    if (e.url !== undefined && e.url !== null && e.url !== "") {
      if (typeof e.url !== "string") throw invalidField(`endpoints[${i}].url`, "must be a string");
      selector.url = e.url.trim();
    }
    const name = endpointName(e.name, `endpoints[${i}].name`);
    if (name !== undefined) selector.name = name;
    if (selector.url === undefined && selector.name === undefined) {
      throw invalidField(`endpoints[${i}]`, "needs a url or a name");
    }
    return selector;
  });
}

/** `{"headers": {"Name": "value" | ["value", …]}}` → canonical header map (docs/url-groups.md). */
export function parseDefaultHeaders(body: unknown): HeaderMap {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidField("body", 'must be a JSON object {"headers": {...}}');
  }
  const raw = (body as { headers?: unknown }).headers;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw invalidField("headers", "must be an object of header name to a string or an array of strings");
  }
  const headers = emptyHeaderMap();
  for (const [name, value] of Object.entries(raw)) {
    if (!HEADER_NAME.test(name)) throw invalidField("headers", `${quoted(name)} is not a valid header name`);
    refuseUnsendableHeader(name, keyName(`headers.${name}`, "field"));
    const values = Array.isArray(value) ? value : [value];
    if (values.length === 0) continue;
    for (const v of values) {
      if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean") {
        throw invalidField(keyName(`headers.${name}`, "field"), "must be a string or an array of strings");
      }
      refuseUnsendableValue(String(v), keyName(`headers.${name}`, "field"));
      addHeader(headers, name, String(v));
    }
  }
  return headers;
}
