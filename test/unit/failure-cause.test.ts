import { describe, expect, it } from "vitest";
import { CAUSE_BODY_CHARS, failureCause } from "../../src/domain/failure-cause.js";
import { messageIdTime, newMessageId } from "../../src/domain/ids.js";

/** The DLQ's cause of a failure (docs/dlq.md "Cause"), from what the attempt recorded (src/delivery/http-client.ts). */
describe("failureCause", () => {
  it("names the network errors undici and the egress policy report", () => {
    const kind = (error: string) => failureCause({ error }).kind;
    expect(kind("ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9")).toBe("refused");
    expect(kind("timeout after 1000 ms")).toBe("timeout");
    expect(kind("UND_ERR_HEADERS_TIMEOUT: Headers Timeout Error")).toBe("timeout");
    expect(kind("UND_ERR_CONNECT_TIMEOUT: Connect Timeout Error")).toBe("timeout");
    expect(kind("DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate")).toBe("tls");
    expect(kind("ERR_SSL_WRONG_VERSION_NUMBER: wrong version number")).toBe("tls");
    expect(kind("ENOTFOUND: getaddrinfo ENOTFOUND nowhere.invalid")).toBe("dns");
    expect(kind("ECONNRESET: read ECONNRESET")).toBe("reset");
    expect(kind("UND_ERR_SOCKET: other side closed")).toBe("reset");
    expect(kind("EGRESS_DENIED: destination 10.0.0.1 is not allowed by FERRY_DESTINATION_ALLOW")).toBe("egress");
    expect(failureCause({ error: "something else" })).toEqual({ kind: "network", summary: "something else" });
    expect(failureCause({})).toEqual({ kind: "network", summary: "No answer" });
    expect(failureCause({ status: 0, error: "ECONNREFUSED" })).toEqual({ kind: "refused", summary: "Connection refused" });
  });

  it("gives the HTTP status and the start of a text body on one line; a binary body is left out", () => {
    expect(failureCause({ status: 500, body: Buffer.from('{"error":\n  "database down"}') })).toEqual({
      kind: "http",
      summary: 'HTTP 500: {"error": "database down"}',
    });
    expect(failureCause({ status: 404 }).summary).toBe("HTTP 404");
    expect(failureCause({ status: 502, body: Buffer.from([0xff, 0x00, 0x01, 0x02]) }).summary).toBe("HTTP 502");
    const long = failureCause({ status: 503, body: Buffer.from("x".repeat(10_000)) }).summary;
    expect(long).toBe(`HTTP 503: ${"x".repeat(CAUSE_BODY_CHARS)}…`);
  });
});

describe("messageIdTime", () => {
  it("reads the creation time a message id carries, and nothing from other ids", () => {
    const now = Date.UTC(2026, 10, 26, 12, 0, 0, 123);
    expect(messageIdTime(newMessageId(now))).toBe(now);
    expect(messageIdTime("msg_01ARZ3NDEKTSV4RRFFQ69G5FAV")).toBe(1469922850259) // 2016-07-30;
    expect(messageIdTime("msg_nope")).toBeUndefined();
    expect(messageIdTime("scd_01ARZ3NDEKTSV4RRFFQ69G5FAV")).toBeUndefined();
  });
});
