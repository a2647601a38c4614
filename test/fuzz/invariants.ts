/**
 * What every answer to a fuzzed request must satisfy (docs/reliability.md, "Fuzzing"). Returns the broken rule, or
 * undefined. Connection drops and timeouts are checked by the sender.
 */
/** No answer may be larger than this (a page of logs or DLQ entries included). */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

export function brokenRule(status: number, body: string, method: string): string | undefined {
  if (status >= 500) return `answered ${status}: ${body.slice(0, 300)}`;
  const size = Buffer.byteLength(body);
  if (size > MAX_ANSWER_BYTES) return `an answer of ${size} bytes, above ${MAX_ANSWER_BYTES}`;
  if (status < 400) return undefined;
  if (method === "HEAD") return undefined; // a HEAD answer has no body to check
  let error: unknown;
  try {
    error = (JSON.parse(body) as { error?: unknown }).error;
  } catch {
    return `a ${status} whose body is not JSON: ${body.slice(0, 200)}`;
  }
  if (typeof error !== "string" || error.trim() === "") return `a ${status} without an "error" string: ${body.slice(0, 200)}`;
  const names = namesTheFault[status];
  if (names && !names.test(error)) return `a ${status} whose error names no field, header, route or limit: ${error}`;
  return undefined;
}

/** Per status, what the message must say: which field, header, route, credential or limit is at fault. */
const namesTheFault: Record<number, RegExp> = {
  400: /^invalid [^\s:]+.*:|^invalid request: /s,
  401: /token|credentials|authorization|api key/i,
  403: /account|not active|forbidden|read-only|customer/i,
  404: / not found$|^route \S+ \S+ not found/s,
  405: /method|route/i,
  408: /timeout/i,
  412: /quota|limit|max_|maximum|parallelism/i,
  413: /max_message_size|too large/i,
  415: /content-type/i,
  429: /limit|quota|rate/i,
  431: /bytes/,
};
