import type { ConfigHeaders } from "./config-values.js";
import type { MessageSpec } from "./message.js";
import { writeOptions } from "./message-options.js";

export type { ConfigHeaders };

/**
 * The inverse of parsePublishConfig: the lower-case configuration headers that would publish a message with this
 * spec, each option written by its descriptor (src/domain/message-options.ts). A DLQ retry lays the retry request's
 * own `Svc-*` headers over these and parses the result, so every override is validated exactly like a publish
 * (docs/dlq.md). Delay and deduplication are not carried over: a retry is a new message, due now.
 */
export function specToConfigHeaders(spec: MessageSpec, prefixLower: string): ConfigHeaders {
  return writeOptions(spec, prefixLower);
}
