import { describe, expect, it } from "vitest";
import { embeddedIpv4, literalAddress, parseEgressPolicy } from "../../src/domain/egress-policy.js";

describe("egress policy", () => {
  it("allows everything but the metadata ranges by default", () => {
    const p = parseEgressPolicy(undefined);
    expect(p.open).toBe(true);
    expect(p.allowsAddress("127.0.0.1")).toBe(true);
    expect(p.allowsAddress("8.8.8.8")).toBe(true);
    expect(p.allowsAddress("169.254.169.254")).toBe(false);
    expect(p.allowsAddress("fe80::1")).toBe(false);
  });

  it("allows only the listed CIDRs and names", () => {
    const p = parseEgressPolicy("10.1.0.0/16, hooks.example.com, *.internal.test");
    expect(p.allowsAddress("10.1.2.3")).toBe(true);
    expect(p.allowsAddress("10.2.0.1")).toBe(false);
    expect(p.allowsName("HOOKS.example.com")).toBe(true);
    expect(p.allowsName("a.internal.test")).toBe(true);
    expect(p.allowsName("internal.test.evil.com")).toBe(false);
    expect(p.loopbackOnly).toBe(false);
  });

  it("needs an entry inside a metadata range to allow it; a wide CIDR is not enough", () => {
    expect(parseEgressPolicy("0.0.0.0/0").allowsAddress("169.254.169.254")).toBe(false);
    expect(parseEgressPolicy("169.254.169.254/32").allowsAddress("169.254.169.254")).toBe(true);
  });

  it("knows when only loopback is allowed", () => {
    expect(parseEgressPolicy("127.0.0.0/8,::1,localhost").loopbackOnly).toBe(true);
    expect(parseEgressPolicy("127.0.0.1,10.0.0.0/8").loopbackOnly).toBe(false);
  });

  it("rejects bad entries", () => {
    expect(() => parseEgressPolicy("10.0.0.0/33")).toThrow(/FERRY_DESTINATION_ALLOW/);
    expect(() => parseEgressPolicy("http://x")).toThrow(/FERRY_DESTINATION_ALLOW/);
  });

  it("refuses every cloud's metadata address in every written form by default", () => {
    const p = parseEgressPolicy(undefined);
    const denied = [
      "169.254.169.254", // AWS, GCP, Azure, Oracle, DigitalOcean
      "169.254.170.2", // AWS ECS
      "100.100.100.200", // Alibaba
      "168.63.129.16", // Azure host agent
      "192.0.0.192", // Oracle classic
      "fd00:ec2::254", // AWS IPv6
      "fd20:ce::254", // GCP IPv6
      "fd00:c1::a9fe:a9fe", // Oracle IPv6
      "::ffff:169.254.169.254", // IPv4-mapped
      "::ffff:a9fe:a9fe",
      "::a9fe:a9fe", // IPv4-compatible
      "::169.254.169.254",
      "::ffff:0:a9fe:a9fe", // IPv4-translated
      "64:ff9b::a9fe:a9fe", // NAT64
      "64:ff9b::169.254.169.254",
      "64:ff9b:1::a9fe:a9fe", // NAT64 local use
      "2002:a9fe:a9fe::1", // 6to4
      "::ffff:100.100.100.200",
      "64:ff9b::6464:64c8", // NAT64 of Alibaba's
      "0:0:0:0:0:ffff:a9fe:a9fe",
      "fe80::1%eth0",
    ];
    for (const address of denied) expect(p.allowsAddress(address), address).toBe(false);
    for (const address of ["8.8.8.8", "100.100.100.201", "2001:db8::1", "::1", "64:ff9b::808:808"]) {
      expect(p.allowsAddress(address), address).toBe(true);
    }
  });

  it("an explicit entry allows a metadata address in whichever form it is reached", () => {
    const p = parseEgressPolicy("100.100.100.200");
    expect(p.allowsAddress("100.100.100.200")).toBe(true);
    expect(p.allowsAddress("::ffff:100.100.100.200")).toBe(true);
    expect(p.allowsAddress("169.254.169.254")).toBe(false);
  });

  it("reads the IPv4 address an IPv6 one stands for", () => {
    expect(embeddedIpv4("::ffff:1.2.3.4")).toBe("1.2.3.4");
    expect(embeddedIpv4("64:ff9b::102:304")).toBe("1.2.3.4");
    expect(embeddedIpv4("2002:102:304::")).toBe("1.2.3.4");
    expect(embeddedIpv4("2001:db8::1")).toBeUndefined();
    expect(embeddedIpv4("1.2.3.4")).toBeUndefined();
  });

  it("finds the literal address of a URL as the HTTP client would connect to it", () => {
    expect(literalAddress("http://2852039166/x")).toBe("169.254.169.254"); // decimal
    expect(literalAddress("http://0251.0376.0251.0376/")).toBe("169.254.169.254"); // octal
    expect(literalAddress("http://0xa9fea9fe/")).toBe("169.254.169.254"); // hex
    expect(literalAddress("http://169.254.43518/")).toBe("169.254.169.254"); // short form
    expect(literalAddress("http://169.254.169.254./")).toBe("169.254.169.254"); // trailing dot
    expect(literalAddress("http://[::ffff:169.254.169.254]:80/")).toBe("::ffff:a9fe:a9fe");
    expect(literalAddress("https://hooks.example.com/")).toBeUndefined();
    expect(literalAddress("not a url")).toBeUndefined();
  });
});
