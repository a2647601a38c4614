/**
 * The publish builder's form and the HTTP request it stands for. Pure, so the request the console sends and the curl
 * command it shows are built by the same code (and unit-tested: test/unit/console-publish.test.ts).
 */
export interface HeaderRow {
  name: string;
  value: string;
}

export interface PublishForm {
  /** A URL (`https://…`) or a URL group's name. */
  destination: string;
  method: string;
  contentType: string;
  body: string;
  /** Headers forwarded to the destination (sent as `<prefix>Forward-<Name>`). */
  headers: HeaderRow[];
  /** Either a delay (`30s`, `5m`) or a not-before time; the not-before wins when both are set. */
  delay: string;
  /** Unix ms, or undefined. */
  notBefore: number | undefined;
  retries: string;
  retryDelay: string;
  timeout: string;
  callback: string;
  failureCallback: string;
  deduplicationId: string;
  contentBasedDeduplication: boolean;
  /** Comma-separated. */
  labels: string;
  flowControlKey: string;
  flowParallelism: string;
  flowRate: string;
  flowPeriod: string;
  queue: string;
  /** Only for schedules: the cron expression. */
  cron?: string;
}

export interface BuiltRequest {
  method: "POST";
  path: string;
  headers: Record<string, string>;
  body: string;
}

export function emptyPublishForm(): PublishForm {
  return {
    destination: "",
    method: "POST",
    contentType: "application/json",
    body: "",
    headers: [],
    delay: "",
    notBefore: undefined,
    retries: "",
    retryDelay: "",
    timeout: "",
    callback: "",
    failureCallback: "",
    deduplicationId: "",
    contentBasedDeduplication: false,
    labels: "",
    flowControlKey: "",
    flowParallelism: "",
    flowRate: "",
    flowPeriod: "",
    queue: "",
  };
}

/** The Flow-Control-Value header: `parallelism=2, rate=10, period=1m` with the parts that are set. */
export function flowControlValue(form: Pick<PublishForm, "flowParallelism" | "flowRate" | "flowPeriod">): string {
  const parts: string[] = [];
  if (form.flowParallelism.trim()) parts.push(`parallelism=${form.flowParallelism.trim()}`);
  if (form.flowRate.trim()) parts.push(`rate=${form.flowRate.trim()}`);
  if (form.flowPeriod.trim()) parts.push(`period=${form.flowPeriod.trim()}`);
  return parts.join(", ");
}

/**
 * The request: `POST /v2/publish/<destination>`, `/v2/enqueue/<queue>/<destination>` with a queue, or
 * `/v2/schedules/<destination>` with a cron. Options are `<prefix>*` headers; the destination goes raw after the
 * path, as the API reads it.
 */
export function buildPublishRequest(form: PublishForm, prefix: string): BuiltRequest {
  const headers: Record<string, string> = {};
  const set = (name: string, value: string | undefined) => {
    const v = value?.trim();
    if (v) headers[prefix + name] = v;
  };
  const destination = form.destination.trim();
  if (form.contentType.trim()) headers["Content-Type"] = form.contentType.trim();
  if (form.method && form.method !== "POST") set("Method", form.method);
  for (const h of form.headers) if (h.name.trim()) headers[`${prefix}Forward-${h.name.trim()}`] = h.value;
  if (form.notBefore !== undefined) set("Not-Before", String(Math.floor(form.notBefore / 1000)));
  else set("Delay", form.delay);
  set("Retries", form.retries);
  set("Retry-Delay", form.retryDelay);
  set("Timeout", form.timeout);
  set("Callback", form.callback);
  set("Failure-Callback", form.failureCallback);
  set("Deduplication-Id", form.deduplicationId);
  if (form.contentBasedDeduplication) set("Content-Based-Deduplication", "true");
  const labels = form.labels
    .split(",")
    .map((l) => l.trim())
    .filter(Boolean)
    .join(",");
  set("Label", labels);
  if (form.flowControlKey.trim()) {
    set("Flow-Control-Key", form.flowControlKey);
    set("Flow-Control-Value", flowControlValue(form));
  }
  let path: string;
  if (form.cron !== undefined) {
    set("Cron", form.cron);
    if (form.queue.trim()) set("Queue-Name", form.queue);
    path = `/v2/schedules/${destination}`;
  } else if (form.queue.trim()) {
    path = `/v2/enqueue/${encodeURIComponent(form.queue.trim())}/${destination}`;
  } else {
    path = `/v2/publish/${destination}`;
  }
  return { method: "POST", path, headers, body: form.body };
}
