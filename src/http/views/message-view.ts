import type { Message } from "../../domain/message.js";
import { type OptionRecordFields, optionRecordFields } from "../../domain/message-options.js";
import { redactedValue, type RedactSpec } from "../../domain/redact.js";
import type { Same, Static } from "../schemas/common.js";
import type { MessageRecord, OptionRecordFieldsShape } from "../schemas/messages.js";

/** The option table's record fields and their wire shape name the same keys (a compile error otherwise). */
const optionFieldsAgree: Same<OptionRecordFields, Static<typeof OptionRecordFieldsShape>> = true;
void optionFieldsAgree;

/** The bytes as text when they are valid UTF-8, else as base64; neither when there are none. */
export function textOrBase64(bytes: Buffer | undefined): { text?: string; base64?: string } {
  if (bytes === undefined || bytes.length === 0) return {};
  const text = bytes.toString("utf8");
  return Buffer.from(text, "utf8").equals(bytes) ? { text } : { base64: bytes.toString("base64") };
}

/** A record's `body` / `bodyBase64`, with Svc-Redact-Fields' `body` applied (one-way). */
export function bodyFields(body: Buffer | undefined, redact: RedactSpec | undefined): { body?: string; bodyBase64?: string } {
  if (redact?.body && body !== undefined) return { body: redactedValue(body) };
  const { text, base64 } = textOrBase64(body);
  return text !== undefined ? { body: text } : base64 !== undefined ? { bodyBase64: base64 } : {};
}

/** The string when it says something: empty optional fields are omitted (docs/messaging.md "Wire conventions"). */
export const nonEmpty = (s: string | undefined): s is string => s !== undefined && s !== "";

/** The message record, and the shared fields of a DLQ record; the options' fields come from their descriptors. */
export function messageRecord(m: Message): MessageRecord {
  const out: MessageRecord = {
    messageId: m.id,
    url: m.url,
    notBefore: m.notBefore > 0 ? m.notBefore : m.createdAt,
    createdAt: m.createdAt,
    ...bodyFields(m.body, m.spec.redact),
    ...optionRecordFields(m.spec),
  };
  if (nonEmpty(m.topicName)) out.topicName = m.topicName;
  if (nonEmpty(m.endpointName)) out.endpointName = m.endpointName;
  if (nonEmpty(m.queueName)) out.queueName = m.queueName;
  if (nonEmpty(m.scheduleId)) out.scheduleId = m.scheduleId;
  if (nonEmpty(m.callerIp)) out.callerIP = m.callerIp;
  return out;
}
