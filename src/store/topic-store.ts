import type { HeaderMap } from "../domain/headers.js";
import type { Topic, TopicEndpoint } from "../domain/records.js";

export type { Topic, TopicEndpoint } from "../domain/records.js";

/** Why an endpoint upsert was refused; limits are checked inside the write so concurrent nodes cannot overshoot. */
export type TopicUpsertResult =
  | { ok: true }
  | { ok: false; reason: "max_topics" | "max_endpoints" }
  | { ok: false; reason: "endpoint_name_taken"; endpointName: string };

/** A removal entry matches an endpoint by URL, by name, or by both when both are given. */
export interface EndpointSelector {
  url?: string;
  name?: string;
}

/**
 * The URL-group capability of the store (docs/url-groups.md). Merged into `Store` below, so adapters must implement
 * it.
 */
export interface TopicStore {
  /** Creates the group if missing and adds or updates endpoints (same URL = same endpoint, its name updated). */
  topicAddEndpoints(p: {
    accountId: string;
    name: string;
    endpoints: TopicEndpoint[];
    now: number;
    maxTopics: number;
    maxEndpoints: number;
  }): Promise<TopicUpsertResult>;
  /** Removes matching endpoints; the group is deleted with its last endpoint. */
  topicRemoveEndpoints(p: {
    accountId: string;
    name: string;
    endpoints: EndpointSelector[];
    now: number;
  }): Promise<"not_found" | "removed" | "deleted">;
  topicGet(p: { accountId: string; name: string }): Promise<Topic | undefined>;
  topicList(p: { accountId: string }): Promise<Topic[]>;
  /** False when the group does not exist. */
  topicDelete(p: { accountId: string; name: string }): Promise<boolean>;
  /** Replaces the default headers (an empty map clears them); false when the group does not exist. */
  topicSetHeaders(p: { accountId: string; name: string; headers: HeaderMap; now: number }): Promise<boolean>;
}
