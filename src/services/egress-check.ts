import type { Config } from "../config.js";
import { type EgressPolicy, literalAddress, parseEgressPolicy } from "../domain/egress-policy.js";
import type { MessageSpec } from "../domain/message.js";
import { invalidField, quoted } from "../errors.js";

/**
 * The publish-time half of the egress policy (docs/reliability.md "Egress policy"): a destination or callback whose
 * host is an IP literal the policy denies is refused with a 400 naming it, instead of being stored and failing every
 * attempt. A host name is checked at connect time only, on the addresses it resolves to then (src/delivery/egress.ts).
 */

// Parsed once per configuration: the policy is a pure function of FERRY_DESTINATION_ALLOW. Keyed by the Config object,
// so several servers in one process (tests) each keep their own.
const policies = new WeakMap<Config, EgressPolicy>();

function policyOf(config: Config): EgressPolicy {
  let policy = policies.get(config);
  if (!policy) policies.set(config, (policy = parseEgressPolicy(config.destinationAllow)));
  return policy;
}

/** Refuses the first URL whose literal address the policy denies; `field` names it in the 400. */
export function refuseDeniedLiterals(config: Config, urls: { url: string; field: string }[]): void {
  const policy = policyOf(config);
  for (const { url, field } of urls) {
    const address = literalAddress(url);
    if (address !== undefined && !policy.allowsAddress(address)) {
      throw invalidField(
        field,
        `${quoted(url)} goes to ${address}, which FERRY_DESTINATION_ALLOW does not allow (cloud-metadata addresses need an explicit entry)`,
      );
    }
  }
}

/** Every URL a publish would connect to: its targets, its callback and its failure callback. */
export function connectUrls(
  targets: readonly { url: string }[],
  spec: MessageSpec,
  header: (name: string) => string,
): { url: string; field: string }[] {
  const urls = targets.map((t) => ({ url: t.url, field: "destination" }));
  if (spec.callback) urls.push({ url: spec.callback.url, field: header("Callback") });
  if (spec.failureCallback) urls.push({ url: spec.failureCallback.url, field: header("Failure-Callback") });
  return urls;
}
