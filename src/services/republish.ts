import type { Dialect } from "../domain/dialect.js";
import type { Message, NewMessage } from "../domain/message.js";
import type { Account } from "../domain/records.js";
import { type ConfigSource, parsePublishConfig } from "../domain/publish-config.js";
import { specToConfigHeaders } from "../domain/spec-headers.js";
import type { Services } from "./context.js";
import { buildMessages } from "./publish.js";

/**
 * A request's own configuration laid over a stored message's (docs/dlq.md "Retry"), in the names it used. The new
 * message keeps the dialect its original was published in (docs/messaging.md "Dialects").
 */
export interface RetryOverrides {
  source: ConfigSource;
  dialect: Dialect;
}

/**
 * A new message with the stored message's request: destination, method, forwarded headers, body and options, read
 * back through `parsePublishConfig` so that every override is validated like a publish. Delay and deduplication are
 * not carried over (src/domain/spec-headers.ts): it is due now. Shared by the DLQ retry and the replay
 * (src/services/message-actions.ts).
 */
export function republishedMessage(
  services: Services,
  account: Account,
  m: Message,
  overrides: RetryOverrides,
  now: number,
  opts: { keepSchedule: boolean },
): NewMessage {
  const { dialect } = overrides;
  const limits = services.plans.limitsOf(account);
  // The original's configuration in the request's names, so that the request's own headers override it.
  const source = overlay(specToConfigHeaders(m.spec, dialect.prefixLower), overrides.source, dialect.prefixLower);
  const parsed = parsePublishConfig(source, dialect, limits, now);
  parsed.spec.dialect = services.dialects.of(m.spec.dialect).name;
  const input: Parameters<typeof buildMessages>[0] = {
    account,
    destination: m.url,
    // The stored spec and body hold the original values: redacted fields are redacted in views only.
    body: m.body ?? Buffer.alloc(0),
    callerIp: m.callerIp ?? "",
  };
  if (m.queueName !== undefined) input.queueName = m.queueName;
  if (opts.keepSchedule && m.scheduleId !== undefined) input.scheduleId = m.scheduleId;
  const target: { url: string; topicName?: string; endpointName?: string } = { url: m.url };
  if (m.topicName !== undefined) target.topicName = m.topicName;
  if (m.endpointName !== undefined) target.endpointName = m.endpointName;
  const [built] = buildMessages(input, [target], { ...parsed, contentBasedDedup: false }, now);
  const message = built!.message;
  delete message.dedupId;
  if (m.callerIp === undefined) delete message.callerIp;
  // A retried callback is still a callback (it gets no callbacks of its own), but no longer holds a queue slot.
  message.kind = m.kind;
  return message;
}

/** The request's own `Svc-*` headers (and `svc-*` query keys) win over the original's configuration. */
function overlay(original: ConfigSource["headers"], request: ConfigSource, prefixLower: string): ConfigSource {
  // Null prototype: a header named `__proto__` is a name, not the object's prototype (docs/reliability.md).
  const headers: ConfigSource["headers"] = Object.assign(Object.create(null) as ConfigSource["headers"], original);
  for (const [key, value] of request.query) headers[key] = value;
  for (const [key, value] of Object.entries(request.headers)) {
    if (value !== undefined && key.startsWith(prefixLower)) headers[key] = value;
  }
  return { headers, query: new Map() };
}
