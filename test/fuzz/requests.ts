import fc from "fast-check";

/**
 * Request generators for the fuzzer (docs/reliability.md, "Fuzzing" lists what each covers). A generated request
 * is plain data, so a failure prints as JSON and fast-check can shrink it.
 */
export interface FuzzRequest {
  method: string;
  /** Path and query, already encoded as sent (may hold hostile encodings on purpose). */
  path: string;
  headers: [string, string][];
  body?: { kind: "text"; text: string } | { kind: "bytes"; base64: string } | { kind: "repeat"; char: string; size: number };
  auth: AuthVariant;
  /** Sent over a raw socket: the request line and headers may hold bytes an HTTP client library refuses. */
  raw?: string;
}

export type AuthVariant = "valid" | "missing" | "malformed" | "read-only" | "other-account" | "rotated" | "query" | "basic-valid" | "basic-admin" | "basic-wrong" | "basic-malformed";

/** What the generators need to know about the running server: ids that exist, names of its dialect. */
export interface FuzzContext {
  prefix: string;
  managementSegment: string;
  tokenQuery: string;
  ledgerUrl: string;
  knownIds: { message: string; schedule: string; dlq: string; topic: string; queue: string; flowKey: string; account: string };
}

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/** Path segments: valid-looking, unknown, encoded slashes, dot segments, very long, non-UTF-8, control bytes. */
function segment(ctx: FuzzContext): fc.Arbitrary<string> {
  const k = ctx.knownIds;
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(k.message, k.schedule, k.dlq, k.topic, k.queue, k.flowKey, k.account) },
    { weight: 3, arbitrary: fc.stringMatching(/^[a-zA-Z0-9_.-]{1,24}$/) },
    { weight: 2, arbitrary: fc.constantFrom("%2F", "a%2Fb", "..", ".", "%2e%2e", "%00", "%ZZ", "%FF%FE", "%C0%AF", "~", "%25", "%20", "😀", "msg_", "0", "-1") },
    { weight: 1, arbitrary: fc.integer({ min: 300, max: 9000 }).map((n) => "s".repeat(n)) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 12 }).map((s) => encodeURIComponent(s)) },
  );
}

/** Destinations: the ledger receiver, other URLs, URL groups, and malformed ones. */
function destination(ctx: FuzzContext): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.nat(1000).map((n) => `${ctx.ledgerUrl}/fuzz/${n}`) },
    { weight: 2, arbitrary: fc.constantFrom(ctx.knownIds.topic, "no-such-group", "http://127.0.0.1:9/closed", "https://127.0.0.1:9/x") },
    { weight: 2, arbitrary: fc.constantFrom("ftp://x", "http://", "http:/x", "javascript:alert(1)", "http://[::1", "http://169.254.169.254/latest", "", "%", "http%3A%2F%2F127.0.0.1%2Fx", "http://127.0.0.1:99999/x") },
    { weight: 1, arbitrary: fc.webUrl().map((u) => u.replace(/^https?:\/\/[^/]+/, "http://127.0.0.1:9")) },
  );
}

function routePath(ctx: FuzzContext): fc.Arbitrary<{ method: string; path: string }> {
  const seg = segment(ctx);
  const m = `/v2/${ctx.managementSegment}`;
  const routes: fc.Arbitrary<{ method: string; path: string }>[] = [
    destination(ctx).map((d) => ({ method: "POST", path: `/v2/publish/${d}` })),
    fc.tuple(seg, destination(ctx)).map(([q, d]) => ({ method: "POST", path: `/v2/enqueue/${q}/${d}` })),
    destination(ctx).map((d) => ({ method: "POST", path: `/v2/schedules/${d}` })),
    fc.constant({ method: "POST", path: "/v2/batch" }),
    seg.map((s) => ({ method: "GET", path: `/v2/messages/${s}` })),
    seg.map((s) => ({ method: "DELETE", path: `/v2/messages/${s}` })),
    fc.constantFrom("/v2/logs", "/v2/events", "/v2/dlq", "/v2/schedules", "/v2/topics", "/v2/queues", "/v2/keys", "/v2/flowControl", "/v2/globalParallelism").map((p) => ({ method: "GET", path: p })),
    seg.map((s) => ({ method: "GET", path: `/v2/dlq/${s}` })),
    seg.map((s) => ({ method: "DELETE", path: `/v2/dlq/${s}` })),
    seg.map((s) => ({ method: "POST", path: `/v2/dlq/retry/${s}` })),
    fc.constantFrom("POST /v2/dlq/retry", "DELETE /v2/dlq", "DELETE /v2/messages", "POST /v2/queues", "POST /v2/search").map((s) => {
      const [method, path] = s.split(" ") as [string, string];
      return { method, path };
    }),
    seg.map((s) => ({ method: "GET", path: `/v2/schedules/${s}` })),
    seg.map((s) => ({ method: "DELETE", path: `/v2/schedules/${s}` })),
    fc.tuple(seg, fc.constantFrom("pause", "resume")).map(([s, a]) => ({ method: "PATCH", path: `/v2/schedules/${s}/${a}` })),
    fc.tuple(seg, fc.constantFrom("POST", "DELETE")).map(([s, method]) => ({ method, path: `/v2/topics/${s}/endpoints` })),
    fc.tuple(seg, fc.constantFrom("GET", "DELETE", "PATCH")).map(([s, method]) => ({ method, path: `/v2/topics/${s}` })),
    fc.tuple(seg, fc.constantFrom("GET", "DELETE")).map(([s, method]) => ({ method, path: `/v2/queues/${s}` })),
    fc.tuple(seg, fc.constantFrom("pause", "resume")).map(([s, a]) => ({ method: "POST", path: `/v2/queues/${s}/${a}` })),
    seg.map((s) => ({ method: "GET", path: `/v2/flowControl/${s}` })),
    fc.tuple(seg, fc.constantFrom("pause", "resume", "pin", "unpin", "reset")).map(([s, a]) => ({ method: "POST", path: `/v2/flowControl/${s}/${a}` })),
    fc.constantFrom("/user", "/users", "/stats").map((p) => ({ method: "GET", path: `${m}${p}` })),
    fc.tuple(seg, fc.constantFrom("user", "stats")).map(([s, p]) => ({ method: "GET", path: `${m}/${p}/${s}` })),
    // Mutating management routes get unknown or another customer's ids only: the fuzz account keeps its token.
    fc.tuple(fc.stringMatching(/^[a-z0-9_]{0,30}$/), fc.constantFrom("rotate-token", "set-plan", "update-budget", "enable-prodpack", "disable-prodpack")).map(([s, a]) => ({ method: a === "update-budget" ? "PATCH" : "POST", path: `${m}/${a}/${s}` })),
    fc.tuple(seg, fc.constantFrom("GET", "DELETE")).map(([s, method]) => ({ method, path: `/v2/search/${s}` })),
    fc.array(seg, { minLength: 1, maxLength: 4 }).map((parts) => ({ method: "GET", path: `/${parts.join("/")}` })),
    fc.constantFrom("/v2", "/v2/", "/", "//v2//logs", "/v2/./logs", "/v2/logs/../keys", "/V2/LOGS", "/v2/publish", "/v2/publish/", "/health", "/v2/enqueue/", "/v2/messages").map((p) => ({ method: "GET", path: p })),
  ];
  // Routes that take a message (publish, enqueue, schedules, batch) come up four times as often as the others.
  const weighted = routes.map((arbitrary, i) => ({ weight: i < 4 ? 4 : 1, arbitrary }));
  return fc.tuple(fc.oneof(...weighted), fc.option(fc.constantFrom(...METHODS), { freq: 6 })).map(([r, other]) => ({
    method: other ?? r.method,
    path: r.path,
  }));
}

/** Hostile values for configuration headers and query parameters. */
const hostileValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("-1", "0", "1", "3", "10", "1e309", "99999999999999999999", "NaN", "Infinity", "0x10", "1.5", "", " ", "10x", "10s", "1h", "1d", "-5s", "999999999d", "true", "false", "TRUE", "null", "[]", "{}", "1,2", "POST", "get", "http://127.0.0.1:9/cb", "ftp://x", "a=b", "parallelism=1", "rate=0,period=0", "parallelism=-1", "rate=1,period=1h", "parallelism=99999999999", "0 0 * * *", "* * * *", "CRON_TZ=Mars/Olympus * * * * *", "1000 * pow(2, retried)", "pow(", "body,header[x]", "header[", "__proto__", "constructor"),
  fc.integer().map(String),
  fc.double().map(String),
  fc.string({ maxLength: 40 }).map((s) => s.replace(/[^\t\x20-\x7e]/g, "")),
  fc.string({ unit: "binary", maxLength: 20 }).map((s) => s.replace(/[^\t\x20-\x7e\x80-\xff]/g, "")),
  fc.integer({ min: 1000, max: 6000 }).map((n) => "9".repeat(n)),
);

const CONFIG_NAMES = [
  "Retries", "Delay", "Not-Before", "Timeout", "Method", "Retry-Delay", "Callback", "Failure-Callback", "Deduplication-Id",
  "Content-Based-Deduplication", "Flow-Control-Key", "Flow-Control-Value", "Label", "Redact-Fields", "Header-Forward",
  "Cron", "Schedule-Id", "Queue-Name", "Callback-Retries", "Callback-Timeout", "Callback-Method", "Callback-Delay",
  "Callback-Retry-Delay", "Failure-Callback-Retries", "Failure-Callback-Timeout", "Failure-Callback-Method",
  "Failure-Callback-Delay", "Forward-X-Test", "Forward-__proto__", "Forward-constructor", "Forward-Connection",
  "Forward-Transfer-Encoding", "Forward-Content-Length", "Forward-Expect", "Forward-", "Callback-Forward-Upgrade",
  "Failure-Callback-Keep-Alive", "Failure-Callback-__proto__", "Forward-toString", "Forward-Host", "Forward-Authorization",
];

function headers(ctx: FuzzContext): fc.Arbitrary<[string, string][]> {
  const configHeader = fc.tuple(fc.constantFrom(...CONFIG_NAMES), hostileValue).map(([n, v]): [string, string] => [ctx.prefix + n, v]);
  const plainHeader = fc.tuple(
    fc.constantFrom("Content-Type", "Content-Encoding", "Accept", "X-Custom", "__proto__", "constructor", "Transfer-Encoding-X", "Connection", "Expect-X", "Cookie"),
    fc.oneof(fc.constantFrom("application/json", "text/plain", "application/octet-stream", "gzip", "close", "multipart/form-data; boundary=x", ""), hostileValue),
  );
  return fc.array(fc.oneof({ weight: 3, arbitrary: configHeader }, { weight: 1, arbitrary: plainHeader }), { maxLength: 8 });
}

function query(ctx: FuzzContext): fc.Arbitrary<string> {
  const key = fc.constantFrom("count", "cursor", "order", "state", "messageId", "url", "topicName", "queueName", "fromDate", "toDate", "label", "scheduleId", "responseStatus", "dlqIds", "callerIp", "flowControlKey", "trimBody", "api", "period", `${ctx.prefix.toLowerCase()}retries`, `${ctx.prefix.toLowerCase()}delay`, "unknown", "__proto__", "constructor", "");
  const value = fc.oneof(hostileValue, fc.constantFrom(ctx.knownIds.message, "DELIVERED", "FAILED", "latestFirst", "earliestFirst", "%FF", "%"));
  // A value goes out encoded, or raw when it is printable ASCII (raw `%FF`, `%` reach the server's decoder).
  const pair = fc.tuple(key, value, fc.boolean()).map(([k, v, raw]) =>
    `${k}=${raw && /^[\x21-\x7e]*$/.test(v) && !/[#&]/.test(v) ? v : encodeURIComponent(v)}`,
  );
  return fc.array(pair, { maxLength: 5 }).map((pairs) => (pairs.length === 0 ? "" : `?${pairs.join("&")}`));
}

function nested(depth: number): string {
  return "[".repeat(depth) + "]".repeat(depth);
}

function body(ctx: FuzzContext): fc.Arbitrary<FuzzRequest["body"]> {
  const json = (v: unknown) => ({ kind: "text" as const, text: JSON.stringify(v) });
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: fc.string({ maxLength: 200 }).map((text) => ({ kind: "text" as const, text })) },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => ({ kind: "bytes" as const, base64: Buffer.from(b).toString("base64") })) },
    { weight: 1, arbitrary: fc.constantFrom("\xff\xfe\xfd", "\xc3\x28", "\xed\xa0\x80").map((s) => ({ kind: "bytes" as const, base64: Buffer.from(s, "latin1").toString("base64") })) },
    { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 4 }).map(json) },
    {
      weight: 3,
      arbitrary: fc
        .record({
          destination: fc.oneof(destination(ctx), fc.jsonValue({ maxDepth: 1 })),
          headers: fc.oneof(fc.dictionary(fc.constantFrom(...CONFIG_NAMES.map((n) => ctx.prefix + n), "__proto__", "constructor", "Content-Type", "", "a b", "x\u00e9"), fc.oneof(hostileValue, fc.array(hostileValue, { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 }))), fc.jsonValue({ maxDepth: 1 })),
          body: fc.oneof(fc.string({ maxLength: 50 }), fc.jsonValue({ maxDepth: 1 })),
          queue: fc.oneof(fc.constant(undefined), segment(ctx), fc.integer()),
        }, { requiredKeys: [] })
        .chain((item) => fc.oneof(fc.constant(item), fc.constant([item]), fc.array(fc.constant(item), { maxLength: 5 })))
        .map(json),
    },
    {
      weight: 2,
      arbitrary: fc
        .record({
          endpoints: fc.oneof(fc.array(fc.record({ url: fc.oneof(destination(ctx), fc.jsonValue({ maxDepth: 1 })), name: fc.oneof(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 1 })) }, { requiredKeys: [] }), { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })),
          headers: fc.dictionary(fc.constantFrom("__proto__", "constructor", "X-A", "Connection", "", "Transfer-Encoding", "toString"), fc.oneof(hostileValue, fc.array(hostileValue, { maxLength: 2 }), fc.jsonValue({ maxDepth: 1 }))),
          queueName: fc.oneof(segment(ctx), fc.jsonValue({ maxDepth: 1 })),
          parallelism: fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 5 })),
          paused: fc.jsonValue({ maxDepth: 1 }),
          plan: fc.oneof(fc.constantFrom("free", "paid", "msgsvc_fixed_1m", "nope"), fc.jsonValue({ maxDepth: 1 })),
          budget: fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 5 })),
          dlqIds: fc.oneof(fc.array(segment(ctx), { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })),
          name: fc.oneof(fc.string({ maxLength: 30 }), fc.jsonValue({ maxDepth: 1 })),
        }, { requiredKeys: [] })
        .map(json),
    },
    { weight: 1, arbitrary: fc.constantFrom(nested(20), nested(5000), `{"a":${"9".repeat(400)}}`, "1e99999", '{"endpoints": [', '{"headers":', "[{", '"\\ud800"', "{\"__proto__\": {\"x\": 1}}", "null", "[]", "{}").map((text) => ({ kind: "text" as const, text })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom("a", "{", "\u00e9"), fc.integer({ min: 64 * 1024, max: 1536 * 1024 })).map(([char, size]) => ({ kind: "repeat" as const, char, size })) },
  );
}

const AUTH: AuthVariant[] = ["valid", "missing", "malformed", "read-only", "other-account", "rotated", "query", "basic-valid", "basic-admin", "basic-wrong", "basic-malformed"];

/** A raw request whose request line or headers carry bytes no HTTP client library sends (control characters). */
function rawRequest(): fc.Arbitrary<string> {
  const ctl = fc.constantFrom("\x00", "\x01", "\x7f", "\x1b", "\r", "\n", "\x0b", " ");
  return fc.tuple(ctl, fc.constantFrom("path", "name", "value", "version", "no-host")).map(([c, where]) => {
    if (where === "no-host") return `GET /v2/logs HTTP/1.1\r\nX-Y: a${c === "\r" || c === "\n" ? "" : c}b\r\nConnection: close\r\n\r\n`;
    const path = where === "path" ? `/v2/logs${c}x` : "/v2/logs";
    const name = where === "name" ? `X${c}Y` : "X-Y";
    const value = where === "value" ? `a${c}b` : "ab";
    const version = where === "version" ? `HTTP/1${c}1` : "HTTP/1.1";
    return `GET ${path} ${version}\r\nHost: x\r\n${name}: ${value}\r\nConnection: close\r\n\r\n`;
  });
}

export function fuzzRequest(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const structured = fc
    .record({
      route: routePath(ctx),
      query: query(ctx),
      headers: headers(ctx),
      body: body(ctx),
      // Mostly the fuzzed account's own token, so requests get past auth into the routes' validation.
      auth: fc.oneof({ weight: 8, arbitrary: fc.constant<AuthVariant>("valid") }, { weight: 2, arbitrary: fc.constantFrom(...AUTH) }),
    })
    .map(({ route, query: q, headers: h, body: b, auth }): FuzzRequest => {
      const request: FuzzRequest = { method: route.method, path: route.path + q, headers: h, auth };
      if (b !== undefined && route.method !== "GET" && route.method !== "HEAD") request.body = b;
      return request;
    });
  const raw = rawRequest().map((r): FuzzRequest => ({ method: "RAW", path: "", headers: [], auth: "missing", raw: r }));
  return fc.oneof({ weight: 49, arbitrary: structured }, { weight: 1, arbitrary: raw });
}

/** Forwarded header names for the ledger's publishes: ordinary, object keys, and names no request can carry. */
export const forwardedName = fc.constantFrom(
  "X-Ledger", "Content-Type", "__proto__", "constructor", "toString", "hasOwnProperty", "Connection", "Keep-Alive",
  "Transfer-Encoding", "Upgrade", "Expect", "Content-Length", "TE", "Trailer", "Host", "", "X Bad", "Proxy-Connection",
);

/** A ledger publish: clean delivery configuration, hostile forwarded header names and values. */
export function ledgerHeaders(prefix: string): fc.Arbitrary<[string, string][]> {
  const value = fc.oneof(fc.constantFrom("a", "close", "0", "100-continue", "chunked", "websocket", ""), fc.string({ maxLength: 20 }).map((s) => s.replace(/[^\x20-\x7e]/g, "")));
  return fc.array(fc.tuple(forwardedName, value).map(([n, v]): [string, string] => [`${prefix}Forward-${n}`, v]), { maxLength: 3 });
}
