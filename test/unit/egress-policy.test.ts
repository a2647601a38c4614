import { describe, expect, it } from "vitest";
import { parseEgressPolicy } from "../../src/domain/egress-policy.js";

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
});
