import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { isIP } from "node:net";
import { buildConnector } from "undici";
import { type EgressPolicy, LOOPBACK_NAMES } from "../domain/egress-policy.js";

const refused = (host: string) =>
  Object.assign(new Error(`destination ${host} is not allowed by FERRY_DESTINATION_ALLOW`), { code: "EGRESS_DENIED" });

/** An undici connector enforcing the policy; plug it into the delivery Agent's `connect` option. */
export function egressConnector(policy: EgressPolicy, options: { timeout: number }): buildConnector.connector {
  type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
  const guardedLookup = (hostname: string, opts: LookupOptions, callback: LookupCallback) => {
    dnsLookup(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, "");
      const ok = addresses.filter((a) => policy.allowsAddress(a.address));
      if (ok.length === 0) return callback(refused(hostname), "");
      if (opts.all) return callback(null, ok);
      callback(null, ok[0]!.address, ok[0]!.family);
    });
  };
  // `as never`: node's LookupFunction type is an overload set a plain function cannot name; the shape matches.
  const guarded = buildConnector({ timeout: options.timeout, lookup: guardedLookup as never });
  const plain = buildConnector({ timeout: options.timeout });
  return (opts, callback) => {
    const host = opts.hostname.replace(/^\[|\]$/g, "");
    if (isIP(host) !== 0) {
      if (!policy.allowsAddress(host)) return callback(refused(host), null);
      return plain(opts, callback);
    }
    if (policy.allowsName(host)) return plain(opts, callback);
    if (policy.loopbackOnly) {
      // Only loopback is allowed: resolve the usual loopback names ourselves and refuse the rest without a lookup.
      if (LOOPBACK_NAMES.has(host.toLowerCase())) return plain({ ...opts, hostname: "127.0.0.1" }, callback);
      return callback(refused(host), null);
    }
    return guarded(opts, callback);
  };
}
