import { createHash } from "node:crypto";
import { type Dialect, type Dialects, inDialect } from "../domain/dialect.js";
import type { HeaderMap } from "../domain/headers.js";
import { newMessageId } from "../domain/ids.js";
import type { NewMessage } from "../domain/message.js";
import { type ConfigSource, type ParsedConfig, parseHttpUrl, parsePublishConfig } from "../domain/publish-config.js";
import { AppError, invalidField, quoted } from "../errors.js";
import type { Account } from "../domain/records.js";
import type { InsertItem, TokenCheck } from "../store/store.js";
import { confirmToken } from "./accounts.js";
import type { PublishedMessage, PublishTarget, Services } from "./context.js";
import { connectUrls, refuseDeniedLiterals } from "./egress-check.js";
import { enforceDailyQuota } from "./limits.js";
import { recordPublished, recordPublishRefused } from "../metrics/delivery-metrics.js";
import { publishWorkflowMessage, withoutTransportHeaders, workflowRunIdOf } from "./workflow-publish.js";

export interface PublishInput {
  account: Account;
  /** A full http(s) URL (query string included) or a URL-group name. */
  destination: string;
  source: ConfigSource;
  /**
   * The names `source` is written in: the request's (docs/messaging.md "Dialects"). The messages are delivered,
   * signed and called back in them.
   */
  dialect: Dialect;
  body: Buffer;
  callerIp: string;
  queueName?: string;
  scheduleId?: string;
  /** A run created by `POST /v2/trigger` (docs/workflows.md "REST trigger"). */
  restTrigger?: boolean;
  /** Targets resolved beforehand (batch): publish then runs synchronously up to its insert, keeping item order. */
  resolved?: { targets: PublishTarget[]; defaultHeaders: HeaderMap };
  /** The account came from the account cache of a node sharing its store: the insert checks the token again. */
  tokenCheck?: TokenCheck | undefined;
}

export type { PublishedMessage } from "./context.js";

/** URL or group? Group names are alphanumerics, `-`, `_`, `.`; anything else must be an http(s) URL. */
const GROUP_NAME = /^[A-Za-z0-9._-]+$/;

export function isUrlDestination(destination: string): boolean {
  return /^https?:\/\//i.test(destination);
}

export async function resolveTargets(
  services: Services,
  account: Account,
  destination: string,
): Promise<{ targets: PublishTarget[]; defaultHeaders: HeaderMap }> {
  if (isUrlDestination(destination)) {
    return { targets: [{ url: parseHttpUrl(destination, "destination") }], defaultHeaders: {} };
  }
  if (!GROUP_NAME.test(destination)) {
    throw invalidField("destination", `${quoted(destination)} has invalid scheme, add http:// or https://`);
  }
  return services.groups.resolve(account, destination);
}

/**
 * Group default headers apply unless the request sets the same header (request headers win). A default configuration
 * header is read in the publish's dialect whichever dialect it was set in (`Svc-Retries` counts as `Upstash-Retries`
 * for a publish in the official SDKs' names; docs/url-groups.md).
 */
export function withDefaults(
  source: ConfigSource,
  defaults: HeaderMap,
  dialects: Dialects,
  dialect: Dialect,
): ConfigSource {
  if (Object.keys(defaults).length === 0) return source;
  // Null prototype: `headers[key] = …` must not run the `__proto__` setter for a header of that name.
  const headers: ConfigSource["headers"] = Object.assign(Object.create(null) as ConfigSource["headers"], source.headers);
  for (const [name, values] of Object.entries(defaults)) {
    const key = inDialect(dialects, name.toLowerCase(), dialect);
    if (headers[key] === undefined && !source.query.has(key)) headers[key] = values.length === 1 ? values[0] : values;
  }
  return { headers, query: source.query };
}

function contentHash(destination: string, body: Buffer, spec: NewMessage["spec"]): string {
  const h = createHash("sha256").update(destination).update("\0").update(body).update("\0");
  for (const name of Object.keys(spec.headers).sort()) h.update(`${name}:${spec.headers[name]!.join(",")}\n`);
  return h.digest("base64url");
}

/** Builds the messages of one publish (one per target) without writing anything. */
export function buildMessages(
  input: Pick<PublishInput, "account" | "destination" | "body" | "callerIp" | "queueName" | "scheduleId">,
  targets: PublishTarget[],
  parsed: ParsedConfig,
  now: number,
): { message: NewMessage; dedupKey?: string }[] {
  const contentKey = parsed.contentBasedDedup ? contentHash(input.destination, input.body, parsed.spec) : undefined;
  return targets.map((t) => {
    const message: NewMessage = {
      id: newMessageId(now),
      accountId: input.account.id,
      kind: "message",
      state: input.queueName !== undefined ? "QUEUED" : "CREATED",
      url: t.url,
      body: input.body.length > 0 ? input.body : undefined,
      spec: parsed.spec,
      createdAt: now,
      notBefore: parsed.notBefore,
      dueAt: Math.max(now, parsed.notBefore),
      retried: 0,
      callerIp: input.callerIp,
    };
    if (t.topicName !== undefined) message.topicName = t.topicName;
    if (t.endpointName !== undefined) message.endpointName = t.endpointName;
    if (input.queueName !== undefined) message.queueName = input.queueName;
    if (input.scheduleId !== undefined) message.scheduleId = input.scheduleId;
    const item: { message: NewMessage; dedupKey?: string } = { message };
    const dedup =
      parsed.dedupId !== undefined ? `id:${parsed.dedupId}` : contentKey ? `content:${contentKey}` : undefined;
    if (dedup !== undefined) {
      message.dedupId = parsed.dedupId ?? contentKey!;
      // Per endpoint: one endpoint of a group may be a duplicate while another is not (docs/messaging.md
      // "Deduplication").
      item.dedupKey = `${dedup}|${t.url}`;
    }
    return item;
  });
}

/**
 * Publish use case: validate, resolve the destination, write durably, then hand due messages to this node's
 * dispatcher. A message that can go at once is inserted already leased to this node, so it needs no claim.
 */
export async function publish(services: Services, input: PublishInput): Promise<PublishedMessage[]> {
  try {
    const published = await publishOnce(services, input);
    recordPublished(input.account.id, published);
    return published;
  } catch (error) {
    recordPublishRefused(input.account.id, error);
    throw error;
  }
}

async function publishOnce(services: Services, input: PublishInput): Promise<PublishedMessage[]> {
  const { store, clock, config, dispatcher } = services;
  const { dialect } = input;
  const limits = services.plans.limitsOf(input.account);
  if (input.body.length > limits.max_message_size) {
    throw new AppError(
      "payload_too_large",
      `invalid body: ${input.body.length} bytes is above the plan's max_message_size (${limits.max_message_size})`,
    );
  }
  const now = clock.now();
  const { targets, defaultHeaders } =
    input.resolved ?? (await resolveTargets(services, input.account, input.destination));
  // A workflow message (docs/workflows.md): its transport headers forwarded by the SDK are dropped, not refused.
  const runId = workflowRunIdOf(input.source, dialect);
  const own = runId === undefined ? input.source : withoutTransportHeaders(input.source, dialect);
  const source = withDefaults(own, defaultHeaders, services.dialects, dialect);
  const parsed = parsePublishConfig(source, dialect, limits, now);
  parsed.spec.dialect = dialect.name;
  refuseDeniedLiterals(config, connectUrls(targets, parsed.spec, (name) => dialect.header(name)));
  const built = buildMessages(input, targets, parsed, now);
  await enforceDailyQuota(services, input.account, built.length);
  if (runId !== undefined) {
    // A workflow message writes more than its insert (the run, its steps): the token is read again instead.
    if (input.tokenCheck) await confirmToken(store, input.tokenCheck);
    if (built.length !== 1) throw invalidField("destination", "a workflow message goes to one URL, not a URL group");
    const message = built[0]!.message;
    const wf = {
      accountId: input.account.id,
      account: input.account,
      source,
      parsed,
      message,
      now,
      dialect,
      restTrigger: input.restTrigger === true,
    };
    return [await publishWorkflowMessage(services, wf)];
  }

  const immediate = built.filter(
    (b) => b.message.state === "CREATED" && b.message.dueAt <= now && !b.message.spec.flowControl,
  );
  const reserved = dispatcher.reserve(immediate.length);
  const leaseUntil = now + config.leaseMs;
  const fast = new Set(immediate.slice(0, reserved).map((b) => b.message.id));
  // Written out, not `{ ...b, leaseOwner, leaseUntil }`: V8 builds a spread followed by more properties on a slow
  // path, about 1 µs a publish (docs/threading.md "The P1 path now").
  const items: InsertItem[] = built.map((b) => {
    if (!fast.has(b.message.id)) return b;
    const item: InsertItem = { message: b.message, leaseOwner: dispatcher.owner, leaseUntil };
    if (b.dedupKey !== undefined) item.dedupKey = b.dedupKey;
    return item;
  });

  let results: Awaited<ReturnType<typeof store.messageInsertMany>>;
  try {
    const call: Parameters<typeof store.messageInsertMany>[0] = { items, now, dedupWindowMs: config.dedupWindowMs };
    if (input.tokenCheck) call.tokenCheck = input.tokenCheck;
    results = await store.messageInsertMany(call);
  } catch (error) {
    dispatcher.deliverLeased([], reserved);
    throw error;
  }
  const leased = results.flatMap((r) => (r.message && r.message.leaseOwner !== undefined ? [r.message] : []));
  dispatcher.deliverLeased(leased, reserved, input.account);
  for (const r of results) {
    if (r.message && r.message.leaseOwner === undefined) {
      if (r.message.dueAt <= now) dispatcher.nudge();
      else dispatcher.noteDue(r.message.dueAt);
    }
  }
  return results.map((r, i) => ({ messageId: r.messageId, url: targets[i]!.url, deduplicated: r.deduplicated }));
}
