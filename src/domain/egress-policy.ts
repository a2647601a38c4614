import { BlockList, isIP } from "node:net";

/**
 * Where deliveries, callbacks and failure callbacks may connect (docs/configuration.md FERRY_DESTINATION_ALLOW).
 * Entries are CIDRs (`127.0.0.0/8`, `::1/128`), single addresses, host names (`hooks.example.com`) or wildcard
 * names (`*.example.com`). Without a list everything is allowed except the cloud-metadata ranges, which always need
 * an explicit entry inside them. Addresses are checked after resolution, on the address actually connected to, so
 * DNS rebinding cannot get around the policy; a refused destination fails like a connection error.
 */
export interface EgressPolicy {
  /** True when nothing was configured (only the metadata ranges are refused). */
  readonly open: boolean;
  /** True when every entry is a loopback address or name: non-listed names are refused without any DNS lookup. */
  readonly loopbackOnly: boolean;
  allowsName(host: string): boolean;
  allowsAddress(address: string): boolean;
}

const METADATA: [string, number, "ipv4" | "ipv6"][] = [
  ["169.254.0.0", 16, "ipv4"],
  ["fe80::", 10, "ipv6"],
  ["fd00:ec2::", 32, "ipv6"],
];

const metadata = new BlockList();
for (const [net, prefix, type] of METADATA) metadata.addSubnet(net, prefix, type);

export const LOOPBACK_NAMES = new Set(["localhost", "localhost.localdomain", "ip6-localhost"]);
const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

const family = (address: string): "ipv4" | "ipv6" => (isIP(address) === 6 ? "ipv6" : "ipv4");

export class EgressConfigError extends Error {}

export function parseEgressPolicy(value: string | undefined): EgressPolicy {
  const entries = (value ?? "")
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== "");
  const allowed = new BlockList();
  const allowedMetadata = new BlockList();
  const names: string[] = [];
  const suffixes: string[] = [];
  let loopbackOnly = entries.length > 0;
  for (const entry of entries) {
    const [address, prefixText] = entry.split("/");
    const type = isIP(address ?? "");
    if (type !== 0) {
      const prefix = prefixText === undefined ? (type === 4 ? 32 : 128) : Number(prefixText);
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > (type === 4 ? 32 : 128)) {
        throw new EgressConfigError(`config error: FERRY_DESTINATION_ALLOW has a bad CIDR "${entry}"`);
      }
      const ipType = type === 4 ? "ipv4" : "ipv6";
      allowed.addSubnet(address!, prefix, ipType);
      // An entry inside a metadata range is the explicit allow those ranges need.
      if (metadata.check(address!, ipType) && prefix >= METADATA.find((m) => m[2] === ipType)![1]) {
        allowedMetadata.addSubnet(address!, prefix, ipType);
      }
      if (!(loopback.check(address!, ipType) && prefix >= (type === 4 ? 8 : 128))) loopbackOnly = false;
    } else if (/^(\*\.)?[a-z0-9.-]+$/.test(entry) && prefixText === undefined) {
      if (entry.startsWith("*.")) suffixes.push(entry.slice(1));
      else names.push(entry);
      if (!LOOPBACK_NAMES.has(entry)) loopbackOnly = false;
    } else {
      throw new EgressConfigError(`config error: FERRY_DESTINATION_ALLOW has a bad entry "${entry}"`);
    }
  }
  const open = entries.length === 0;
  return {
    open,
    loopbackOnly,
    allowsName: (host) => {
      const h = host.toLowerCase();
      return names.includes(h) || suffixes.some((s) => h.endsWith(s));
    },
    allowsAddress: (address) => {
      const type = family(address);
      if (metadata.check(address, type)) return allowedMetadata.check(address, type);
      return open || allowed.check(address, type);
    },
  };
}
