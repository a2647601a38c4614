/**
 * Why an attempt failed, in words an operator reads at a glance (docs/dlq.md "Cause"): the network error's kind
 * (connection refused, timed out, TLS, DNS, reset, not allowed by the egress policy) or the HTTP status with the
 * start of the response body. Pure: it reads what the attempt recorded (src/delivery/http-client.ts `describeError`
 * writes `<code>: <message>`), so entries written before this existed are classified too.
 */
export type FailureKind = "http" | "refused" | "timeout" | "tls" | "dns" | "reset" | "egress" | "network";

export interface FailureCause {
  kind: FailureKind;
  /** One line: `Connection refused`, `HTTP 500: {"error":"database down"}`; the raw error text is kept beside it. */
  summary: string;
}

/** Characters of the response body a summary quotes: enough to recognise an error page, never the page. */
export const CAUSE_BODY_CHARS = 120;

const RULES: [FailureKind, RegExp, string][] = [
  ["egress", /EGRESS_DENIED|not allowed by FERRY_DESTINATION_ALLOW/, "Not allowed by the egress policy"],
  ["refused", /ECONNREFUSED/, "Connection refused"],
  ["dns", /ENOTFOUND|EAI_AGAIN|EAI_NONAME|getaddrinfo/, "DNS lookup failed"],
  ["tls", /CERT|certificate|SSL|TLS|ERR_TLS|EPROTO/i, "TLS error"],
  ["timeout", /timeout|timed out|ETIMEDOUT|UND_ERR_(HEADERS|BODY|CONNECT)_TIMEOUT/i, "Timed out"],
  ["reset", /ECONNRESET|EPIPE|UND_ERR_SOCKET|socket hang up|other side closed|terminated/i, "Connection reset"],
];

/** The cause of a failed attempt from its status (absent or 0: no HTTP answer), error text and response body. */
export function failureCause(p: { status?: number; error?: string; body?: Buffer }): FailureCause {
  if (p.status !== undefined && p.status > 0) {
    const text = bodyStart(p.body);
    return { kind: "http", summary: text === "" ? `HTTP ${p.status}` : `HTTP ${p.status}: ${text}` };
  }
  const error = p.error ?? "";
  for (const [kind, pattern, words] of RULES) {
    if (pattern.test(error)) return { kind, summary: words };
  }
  return { kind: "network", summary: error === "" ? "No answer" : firstLine(error) };
}

/** The body's first characters on one line, or "" for an empty or binary body. */
function bodyStart(body: Buffer | undefined): string {
  if (!body || body.length === 0) return "";
  const text = body.subarray(0, CAUSE_BODY_CHARS * 4).toString("utf8");
  // Binary: a replacement character or control bytes other than whitespace say it is not text.
  // eslint-disable-next-line no-control-regex -- control bytes are exactly what tells a binary body from text
  if (/\uFFFD|[\u0000-\u0008\u000E-\u001F]/.test(text.slice(0, CAUSE_BODY_CHARS))) return "";
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > CAUSE_BODY_CHARS ? `${line.slice(0, CAUSE_BODY_CHARS)}…` : line;
}

function firstLine(text: string): string {
  const line = text.split("\n")[0]!.trim();
  return line.length > 160 ? `${line.slice(0, 160)}…` : line;
}
