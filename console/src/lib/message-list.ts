/**
 * The Messages view's filters and states, pure (unit-tested in test/unit/console-message-list.test.ts). The view lists
 * `GET /v2/messages` (docs/messaging.md "Listing messages"): one entry per message, never a body.
 *
 * Every filter lives in the fragment's query, so a link reproduces the view: `#/messages?state=RETRY&queue=orders`.
 * The keys are short and fixed, because other views link here with them (`queue`, `schedule`, `url`).
 */
import { relative } from "./format.js";
import type { MessageListEntry } from "./types.js";

export interface MessageFilters {
  id: string;
  state: string;
  label: string;
  url: string;
  group: string;
  queue: string;
  schedule: string;
}

/** Fragment key → the API's query key. */
const API_KEY: Record<keyof MessageFilters, string> = {
  id: "messageId",
  state: "state",
  label: "label",
  url: "url",
  group: "topicName",
  queue: "queueName",
  schedule: "scheduleId",
};

export const FILTER_KEYS = Object.keys(API_KEY) as (keyof MessageFilters)[];

export const noMessageFilters: MessageFilters = { id: "", state: "", label: "", url: "", group: "", queue: "", schedule: "" };

/**
 * The list states (the API's), in the order a message goes through them, and what a cancel still reaches (a message
 * that has not ended): the server's own lists (src/domain/message-list-state.ts), bundled into the page.
 */
export { CANCELLABLE_LIST_STATES as CANCELLABLE_STATES, MESSAGE_LIST_STATES as LIST_STATES } from "../../../src/domain/message-list-state.js";

/** What a bulk retry retries: a failed message's DLQ entry (the others are on their way, or have nothing to retry). */
export const RETRYABLE_STATES: readonly string[] = ["FAILED"];

/** The filters of a fragment query; unknown keys are ignored, values trimmed. */
export function messageFiltersFrom(query: URLSearchParams): MessageFilters {
  const f = { ...noMessageFilters };
  for (const key of FILTER_KEYS) f[key] = (query.get(key) ?? "").trim();
  return f;
}

/** The fragment query of the filters that are set (for `href("messages", undefined, …)`). */
export function messageFiltersQuery(f: MessageFilters): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of FILTER_KEYS) if (f[key].trim() !== "") out[key] = f[key].trim();
  return out;
}

export function hasFilters(f: MessageFilters): boolean {
  return FILTER_KEYS.some((k) => f[k].trim() !== "");
}

/** The API's query (`GET /v2/messages`) for the filters that are set. */
export function messageListQuery(f: MessageFilters): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of FILTER_KEYS) if (f[key].trim() !== "") out[API_KEY[key]] = f[key].trim();
  return out;
}

/**
 * The states a bulk action reaches within the filter's: those of `reachable` the filter allows (all of them without
 * a state filter), or none when the filter's state is outside them (a bulk cancel of DELIVERED messages touches none).
 */
export function statesWithin(filterState: string, reachable: readonly string[]): string[] {
  if (filterState === "") return [...reachable];
  const wanted = filterState.split(",").map((s) => s.trim().toUpperCase());
  return reachable.filter((s) => wanted.includes(s));
}

/** The selected entries a bulk action reaches, and how many it leaves alone. */
export function splitSelection(
  entries: readonly MessageListEntry[],
  selected: ReadonlySet<string>,
  reachable: readonly string[],
): { ids: string[]; skipped: number } {
  const chosen = entries.filter((e) => selected.has(e.messageId));
  const ids = chosen.filter((e) => reachable.includes(e.state)).map((e) => e.messageId);
  return { ids, skipped: chosen.length - ids.length };
}

/** A short line under a state badge: what the message waits for, or when it is next tried. */
export function stateDetail(e: MessageListEntry, now: number): string | undefined {
  // A due time in the past is due now (the list is a few seconds old, or a node is about to claim it).
  const inTime = (at: number | undefined) => (at === undefined ? "" : at <= now ? " now" : ` ${relative(at, now)}`);
  switch (e.state) {
    case "DELAYED":
      return `due${inTime(e.nextDeliveryTime)}`;
    case "RETRY":
      return `next try${inTime(e.nextDeliveryTime)}`;
    case "FLOW_CONTROL":
      return e.waitReason === "globalParallelism" ? "global parallelism" : "its key's limits";
    case "QUEUED":
      return "for a queue slot";
    case "ACTIVE":
      return e.cancelRequested ? "cancel requested" : "attempt in flight";
    default:
      return undefined;
  }
}

/** A destination without its scheme, so a narrow column shows its host and path (the whole URL is on hover). */
export function shortUrl(url: string): string {
  return url.replace(/^https?:\/\//i, "");
}

/** `ids` in runs of `size`: bulk calls carry at most that many ids each. */
export function chunks<T>(ids: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < ids.length; i += size) out.push(ids.slice(i, i + size));
  return out;
}
