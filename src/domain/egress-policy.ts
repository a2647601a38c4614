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

/**
 * Cloud-metadata and host-agent addresses (docs/reliability.md "Egress policy"): refused unless an entry inside one
 * allows it. Host names (`metadata.google.internal`, `metadata.tencentyun.com`, …) resolve into these and are caught
 * at connect time; an IPv6 address that embeds an IPv4 one is checked as that IPv4 address too (embeddedIpv4).
 */
const METADATA: [string, number, "ipv4" | "ipv6"][] = [
  // Link-local: AWS, GCP, Azure, Oracle, DigitalOcean, Hetzner, OpenStack at 169.254.169.254; AWS ECS 169.254.170.2;
  // Tencent 169.254.0.23.
  ["169.254.0.0", 16, "ipv4"],
  ["100.100.100.200", 32, "ipv4"], // Alibaba Cloud
  ["168.63.129.16", 32, "ipv4"], // Azure host agent (wireserver)
  ["192.0.0.192", 32, "ipv4"], // Oracle Cloud (classic)
  ["fe80::", 10, "ipv6"], // IPv6 link-local
  ["fd00:ec2::", 32, "ipv6"], // AWS IMDS over IPv6 (fd00:ec2::254)
  ["fd20:ce::254", 128, "ipv6"], // GCP metadata over IPv6
  ["fd00:c1::a9fe:a9fe", 128, "ipv6"], // Oracle Cloud IMDS over IPv6
];

const metadata = new BlockList();
for (const [net, prefix, type] of METADATA) metadata.addSubnet(net, prefix, type);

export const LOOPBACK_NAMES = new Set(["localhost", "localhost.localdomain", "ip6-localhost"]);
const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

const family = (address: string): "ipv4" | "ipv6" => (isIP(address) === 6 ? "ipv6" : "ipv4");

/** The eight 16-bit groups of an IPv6 address (a trailing dotted quad and a zone allowed); undefined if not one. */
function hextets(address: string): number[] | undefined {
  let text = address.toLowerCase().split("%")[0]!;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const part = (h: string) => (h === "" ? [] : h.split(":").map((g) => parseInt(g, 16)));
  const head = part(halves[0]!);
  const tail = halves.length === 2 ? part(halves[1]!) : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...Array<number>(Math.max(0, fill)).fill(0), ...tail];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 address an IPv6 address stands for, in the forms that reach it: IPv4-mapped `::ffff:0:0/96`,
 * IPv4-compatible `::/96`, IPv4-translated `::ffff:0:0:0/96`, NAT64 `64:ff9b::/96` and its local-use
 * `64:ff9b:1::/48` (RFC 6052, RFC 8215), and 6to4 `2002::/16`. Undefined for any other address.
 */
export function embeddedIpv4(address: string): string | undefined {
  if (isIP(address) !== 6) return undefined;
  const h = hextets(address);
  if (!h) return undefined;
  const zero = (from: number, to: number) => h.slice(from, to).every((g) => g === 0);
  if (zero(0, 5) && (h[5] === 0xffff || h[5] === 0)) return v4(h[6]!, h[7]!);
  if (zero(0, 4) && h[4] === 0xffff && h[5] === 0) return v4(h[6]!, h[7]!);
  if (h[0] === 0x64 && h[1] === 0xff9b && (zero(2, 6) || h[2] === 1)) return v4(h[6]!, h[7]!);
  if (h[0] === 0x2002) return v4(h[1]!, h[2]!);
  return undefined;
}

/**
 * The host of an http(s) URL when it is an IP literal, as the URL parser and the HTTP client see it: decimal, octal
 * and hex IPv4 forms normalised (`http://2852039166/` is 169.254.169.254), brackets and a trailing dot removed.
 * Undefined for a host name (checked at connect time, after resolution) or a URL that does not parse.
 */
export function literalAddress(url: string): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return undefined;
  }
  host = host.replace(/^\[|\]$/g, "").replace(/\.$/, "");
  return isIP(host) !== 0 ? host : undefined;
}

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
      const inner = embeddedIpv4(address);
      const isMetadata = metadata.check(address, type) || (inner !== undefined && metadata.check(inner, "ipv4"));
      const listed = (list: BlockList) => list.check(address, type) || (inner !== undefined && list.check(inner, "ipv4"));
      if (isMetadata) return listed(allowedMetadata);
      return open || listed(allowed);
    },
  };
}
