import type { Config } from "../config.js";
import { boundedMemo } from "../domain/bounded-memo.js";
import { type EgressPolicy, literalAddress, parseEgressPolicy } from "../domain/egress-policy.js";
import type { MessageSpec } from "../domain/message.js";
import { invalidField, quoted } from "../errors.js";

/**
 * The publish-time half of the egress policy (docs/reliability.md "Egress policy"): a destination or callback whose
 * host is an IP literal the policy denies is refused with a 400 naming it, instead of being stored and failing every
 * attempt. A host name is checked at connect time only, on the addresses it resolves to then (src/delivery/egress.ts).
 */

// Parsed once per configuration: the policy is a pure function of FERRY_DESTINATION_ALLOW. Keyed by the Config object,
// so several servers in one process (tests) each keep their own. With it, the address each URL's literal host denies
// (undefined: none), remembered per URL: parsing the URL and checking the address against the policy's BlockLists cost
// a few microseconds on every publish, and the same destinations repeat (docs/threading.md "The P1 path now").
const deniedOf = new WeakMap<Config, (url: string) => string | undefined>();

function deniedAddressOf(config: Config): (url: string) => string | undefined {
  let denied = deniedOf.get(config);
  if (!denied) {
    const policy: EgressPolicy = parseEgressPolicy(config.destinationAllow);
    denied = boundedMemo((url) => {
      const address = literalAddress(url);
      return address !== undefined && !policy.allowsAddress(address) ? address : undefined;
    });
    deniedOf.set(config, denied);
  }
  return denied;
}

/** Refuses the first URL whose literal address the policy denies; `field` names it in the 400. */
export function refuseDeniedLiterals(config: Config, urls: { url: string; field: string }[]): void {
  const denied = deniedAddressOf(config);
  for (const { url, field } of urls) {
    const address = denied(url);
    if (address !== undefined) {
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
