import { curlCommand } from "./curl.js";
import { utf8Of } from "./format.js";
import { buildPublishRequest, emptyPublishForm, type PublishForm } from "./publish-request.js";
import type { LogEntry } from "./types.js";

/** Base64 to text when the bytes are valid UTF-8 (no body: empty); undefined for binary bytes. */
function textOf(base64: string | undefined): string | undefined {
  return base64 === undefined ? "" : utf8Of(base64);
}

/**
 * The publish form of a message's request, from its CREATED log entry (which carries the request as stored:
 * destination, method, forwarded headers, body and options). The destination is the message's own URL: a message
 * of a URL group is one endpoint's, and publishing to the group would reach every endpoint.
 */
export function formOfMessage(created: LogEntry, body: string): PublishForm {
  const form = emptyPublishForm();
  form.destination = created.url;
  form.method = created.method ?? "POST";
  form.body = body;
  form.contentType = "";
  for (const [name, values] of Object.entries(created.header ?? {})) {
    if (name.toLowerCase() === "content-type") form.contentType = values.join(", ");
    else form.headers.push({ name, value: values.join(", ") });
  }
  if (created.maxRetries !== undefined) form.retries = String(created.maxRetries);
  if (created.retryDelayExpr) form.retryDelay = created.retryDelayExpr;
  if (created.timeout !== undefined) form.timeout = `${created.timeout}ms`;
  form.callback = created.callback ?? "";
  form.failureCallback = created.failureCallback ?? "";
  form.labels = (created.labels ?? []).join(",");
  if (created.flowControlKey) {
    form.flowControlKey = created.flowControlKey;
    if (created.parallelism !== undefined) form.flowParallelism = String(created.parallelism);
    if (created.rate !== undefined) form.flowRate = String(created.rate);
    if (created.period !== undefined) form.flowPeriod = `${created.period}s`;
  }
  form.queue = created.queueName ?? "";
  return form;
}

/**
 * The message's request as a curl command that publishes it again (`$FERRY_TOKEN` stands for the token, never
 * written). A binary body (or one the log page cut) cannot be written into a command: it is read from a file,
 * `<id>.body`, which the message page's Body section downloads.
 */
export function messageCurl(origin: string, created: LogEntry, prefix: string): string {
  // A body cut to the log page's bound is not the message's: read from the downloaded file like a binary one.
  const text = created.bodyTruncated ? undefined : textOf(created.body);
  const request = buildPublishRequest(formOfMessage(created, text ?? ""), prefix);
  const command = curlCommand(origin, request);
  return text === undefined ? `${command} \\\n  --data-binary @${created.messageId}.body` : command;
}
