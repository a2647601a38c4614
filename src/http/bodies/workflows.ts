import { emptyHeaderMap } from "../../domain/headers.js";
import { invalidField } from "../../errors.js";
import type { WaitRequest } from "../../services/workflows.js";

/*
 * The request bodies of the workflow routes (docs/workflows.md), read into the typed values src/services/workflows.ts
 * takes. Every refusal is a 400 naming the field.
 */

/** A wait request's body (`POST /v2/wait/{eventId}`, contract §6.4); every refusal names its field. */
export function parseWaitRequest(body: unknown): WaitRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidField("body", "a wait request must be a JSON object {url, timeout, timeoutUrl, timeoutHeaders, step}");
  }
  const b = body as Record<string, unknown>;
  const str = (key: string, required: boolean): string | undefined => {
    const v = b[key];
    if (v === undefined || v === null) {
      if (required) throw invalidField(key, "is required");
      return undefined;
    }
    if (typeof v !== "string") throw invalidField(key, "must be a string");
    return v;
  };
  const url = str("url", true)!;
  const timeout = str("timeout", false) ?? "7d";
  const headers = b.timeoutHeaders ?? {};
  if (typeof headers !== "object" || headers === null || Array.isArray(headers)) {
    throw invalidField("timeoutHeaders", "must be an object of header name to values");
  }
  const timeoutHeaders: Record<string, string[]> = emptyHeaderMap();
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    timeoutHeaders[name] = (Array.isArray(value) ? value : [value]).map(String);
  }
  if (typeof b.step !== "object" || b.step === null || Array.isArray(b.step)) throw invalidField("step", "must be an object");
  const request: WaitRequest = {
    url,
    timeout,
    timeoutUrl: str("timeoutUrl", false) ?? url,
    timeoutHeaders,
    step: b.step as Record<string, unknown>,
  };
  const timeoutBody = str("timeoutBody", false);
  if (timeoutBody !== undefined) request.timeoutBody = timeoutBody;
  return request;
}
