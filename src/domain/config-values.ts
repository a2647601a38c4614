import { invalidField, quoted } from "../errors.js";
import { refuseUnsendableValue } from "./headers.js";
import type { MessageSpec } from "./message.js";

/*
 * The value rules of publish configuration (docs/messaging.md "Publish") and the types the parser shares with the
 * message-option table (src/domain/message-options.ts): below both, so that neither imports the other.
 */

/** Incoming configuration: request headers (lower-case names) plus `svc-*` query parameters. */
export interface ConfigSource {
  headers: Record<string, string | string[] | undefined>;
  /** Lower-case `svc-*` keys from the query string; a header of the same name wins. */
  query: ReadonlyMap<string, string>;
}

export interface NamingRules {
  /** `svc-` */
  prefixLower: string;
  /** `Svc-`, for field names in error messages. */
  prefix: string;
}

export interface ParsedConfig {
  spec: MessageSpec;
  /** Unix ms before which the message must not be delivered (0 = now). */
  notBefore: number;
  delayMs: number;
  dedupId?: string;
  contentBasedDedup: boolean;
  /** Svc-Queue-Name, Svc-Cron, Svc-Schedule-Id: read by the routes that own them. */
  raw(name: string): string | undefined;
}

/** Lower-case configuration headers, as the reverse of the parser writes them (src/domain/spec-headers.ts). */
export type ConfigHeaders = Record<string, string | string[]>;

export const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;

export function parseBool(value: string, field: string): boolean {
  const v = value.trim().toLowerCase();
  if (v === "true") return true;
  if (v === "false") return false;
  throw invalidField(field, `${quoted(value)} must be true or false`);
}

export function parseNonNegativeInt(value: string, field: string): number {
  const v = value.trim();
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) {
    throw invalidField(field, `${quoted(value)} must be a non-negative integer`);
  }
  return Number(v);
}

export function parseMethod(value: string, field: string): string {
  const m = value.trim().toUpperCase();
  if (!(METHODS as readonly string[]).includes(m)) {
    throw invalidField(field, `${quoted(value)} is not one of ${METHODS.join(", ")}`);
  }
  return m;
}

/** Longest deduplication id (characters): a key stored per message, not a payload. */
export const MAX_DEDUP_ID = 1024;

/**
 * The one rule for a deduplication id, whichever channel brought it (header, query parameter, batch item header):
 * trimmed, not empty, at most MAX_DEDUP_ID characters, and only what a header value may hold (no control characters,
 * nothing beyond latin-1), so the same id means the same key everywhere.
 */
export function parseDedupId(value: string, field: string): string {
  refuseUnsendableValue(value, field);
  const id = value.trim();
  if (id.length === 0) throw invalidField(field, "must not be empty");
  if (id.length > MAX_DEDUP_ID) throw invalidField(field, `must be at most ${MAX_DEDUP_ID} characters`);
  return id;
}

export function parseHttpUrl(value: string, field: string): string {
  const v = value.trim();
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw invalidField(field, `${quoted(value)} is not a valid URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw invalidField(field, `${quoted(value)} has invalid scheme, use http:// or https://`);
  }
  return v;
}
