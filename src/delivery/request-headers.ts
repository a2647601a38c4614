import { flattenHeaders } from "../domain/headers.js";
import type { Message } from "../domain/message.js";
import type { Dialect } from "../domain/dialect.js";

/**
 * The headers a destination receives (docs/messaging.md "Publish"), but its signature: the HTTP client adds that
 * (`SendParams.sign`), in the thread that sends.
 */
export function deliveryHeaders(p: { message: Message; dialect: Dialect }): Record<string, string> {
  const { message: m, dialect: d } = p;
  const headers = flattenHeaders(m.spec.headers);
  headers["User-Agent"] = d.userAgent;
  headers[d.header("Message-Id")] = m.id;
  headers[d.header("Retried")] = String(m.retried);
  if (m.topicName !== undefined) headers[d.header("Topic-Name")] = m.topicName;
  if (m.scheduleId !== undefined) headers[d.header("Schedule-Id")] = m.scheduleId;
  if (m.callerIp !== undefined) headers[d.header("Caller-Ip")] = m.callerIp;
  return headers;
}
