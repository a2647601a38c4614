import { boundedMemo } from "./bounded-memo.js";
import type { ConfigSource, NamingRules, ParsedConfig } from "./config-values.js";
import { emptyHeaderMap } from "./headers.js";
import { parseOptions } from "./message-options.js";
import type { PlanLimits } from "./plans.js";

// The value rules and types live below the option table (src/domain/config-values.ts); their callers import them here.
export {
  type ConfigSource,
  MAX_DEDUP_ID,
  METHODS,
  type NamingRules,
  type ParsedConfig,
  parseBool,
  parseDedupId,
  parseHttpUrl,
} from "./config-values.js";

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(",") : v);

/**
 * The lower-case key of each configuration name under a dialect's prefix (`svc-retries`), made once: a publish reads
 * some 25 of them, and building each key again cost a concatenation and a fresh string to hash on every lookup
 * (docs/threading.md "The P1 path now"). Keyed by prefix; the names are those of src/domain/message-options.ts.
 */
const configKeys = new Map<string, (name: string) => string>();
function configKeyOf(prefixLower: string): (name: string) => string {
  let keyOf = configKeys.get(prefixLower);
  if (!keyOf) configKeys.set(prefixLower, (keyOf = boundedMemo((name) => prefixLower + name.toLowerCase(), 200)));
  return keyOf;
}

/**
 * Reads every publish configuration header (docs/messaging.md "Publish") into a validated spec. Pure: limits and time
 * are passed in. Unknown `Svc-*` headers (such as the SDKs' telemetry) are ignored and never forwarded.
 */
export function parsePublishConfig(
  source: ConfigSource,
  names: NamingRules,
  limits: Pick<PlanLimits, "max_retries" | "max_delay">,
  nowMs: number,
): ParsedConfig {
  const p = names.prefixLower;
  const field = (name: string) => `${names.prefix}${name}`;
  const keyOf = configKeyOf(p);
  const get = (name: string): string | undefined => {
    const key = keyOf(name);
    return first(source.headers[key]) ?? source.query.get(key);
  };

  const out: ParsedConfig = {
    spec: { method: "POST", headers: emptyHeaderMap(), retries: 0 },
    notBefore: 0,
    delayMs: 0,
    contentBasedDedup: false,
    raw: get,
  };
  // Each option reads its own headers (src/domain/message-options.ts), in the table's order.
  parseOptions({
    source,
    prefixLower: p,
    get,
    field,
    limits,
    now: nowMs,
    out,
    callbackHeaders: emptyHeaderMap(),
    failureCallbackHeaders: emptyHeaderMap(),
  });
  return out;
}
