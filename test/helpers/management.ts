import { createCustomer } from "../../src/services/customers.js";
import type { HttpResult, TestServer } from "./server.js";

/** Management credentials of the first customer in tests that pass `adminEnv` to startTestServer. */
export const ADMIN_EMAIL = "admin@test.local";
export const ADMIN_KEY = "admin-key-0123456789abcdef";
export const adminEnv = { FERRY_ADMIN_EMAIL: ADMIN_EMAIL, FERRY_ADMIN_API_KEY: ADMIN_KEY };

export interface Credentials {
  email: string;
  key: string;
}
export const admin: Credentials = { email: ADMIN_EMAIL, key: ADMIN_KEY };

export const basic = (c: Credentials): string => `Basic ${Buffer.from(`${c.email}:${c.key}`).toString("base64")}`;

/**
 * Calls the management API. `auth` is Basic credentials, a raw Authorization value, or null for none; the default
 * messaging token is never sent.
 */
export function manage(
  server: TestServer,
  method: string,
  path: string,
  opts: { auth?: Credentials | string | null; body?: unknown } = {},
): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  const auth = opts.auth === undefined ? admin : opts.auth;
  if (auth !== null) headers.authorization = typeof auth === "string" ? auth : basic(auth);
  const call: Parameters<TestServer["call"]>[2] = { headers, token: null };
  if (opts.body !== undefined) {
    headers["content-type"] = "application/json";
    call.body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
  }
  return server.call(method, path, call);
}

/** A second customer with its own messaging account, created through Ferry's own use case (what the CLI runs). */
export async function addCustomer(
  server: TestServer,
  email: string,
  plan: Parameters<typeof createCustomer>[2]["plan"] = "paid",
): Promise<{ credentials: Credentials; accountId: string; token: string }> {
  const { config, store, clock } = server.ferry.services;
  const created = await createCustomer(config, store, { email, plan, now: clock.now() });
  return {
    credentials: { email, key: created.apiKey },
    accountId: created.account.id,
    token: created.account.token,
  };
}

/** Polls `check` every 20 ms until it returns true (bounded: fails after `timeoutMs`). */
export async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** Every field of the seed 2.2 record, in order (`modifying_state` and `enterprise` appear only when set). */
export const ACCOUNT_FIELDS = [
  "customer_id",
  "id",
  "password",
  "token",
  "read_only_token",
  "active",
  "state",
  "last_plan_upgrade_time",
  "max_message_size",
  "max_requests_per_day",
  "max_requests_per_day_hard",
  "max_endpoints_per_topic",
  "max_requests_per_second",
  "max_dlq_size",
  "max_completion_tokens_per_day",
  "max_completion_tokens_per_minute",
  "max_completions_per_day",
  "max_completions_per_minute",
  "max_retries",
  "max_topics",
  "max_schedules",
  "max_events_size",
  "max_dlq_retention_time_milis",
  "max_delay",
  "max_parallelism",
  "max_global_parallelism",
  "max_queues",
  "retention",
  "timeout",
  "rate_limit",
  "type",
  "reserved_type",
  "reserved_price",
  "prod_pack_enabled",
  "prometheus_enabled",
  "region",
  "budget",
  "created_by",
  "creation_time",
];
