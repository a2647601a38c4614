import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseRedactFields, redactHeaders, redactedValue } from "../../src/domain/redact.js";

const F = "Svc-Redact-Fields";
const parse = (value: string) => parseRedactFields(value, F);
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

describe("parseRedactFields", () => {
  it("parses the SDK form", () => {
    expect(parse("body,header[Authorization]")).toEqual({ body: true, allHeaders: false, headers: ["authorization"] });
  });

  it("accepts both spellings, spaces, any case and de-duplicates names", () => {
    expect(parse(" Body , headers[X-Api-Key], HEADER[x-api-key] ,header[ Cookie ]")).toEqual({
      body: true,
      allHeaders: false,
      headers: ["x-api-key", "cookie"],
    });
    expect(parse("header")).toEqual({ body: false, allHeaders: true, headers: [] });
    expect(parse("headers")).toEqual({ body: false, allHeaders: true, headers: [] });
    expect(parse("")).toEqual({ body: false, allHeaders: false, headers: [] });
  });

  it.each(["url", "header[]", "header[Bad Name]", "headers[a", "bodies", "header[a],foo"])(
    "rejects %j naming the field",
    (value) => {
      expect(() => parse(value)).toThrow(`invalid ${F}: unknown field`);
    },
  );
});

describe("redactedValue", () => {
  it("is REDACTED: plus the lowercase hex SHA-256 of the original bytes", () => {
    expect(redactedValue("secret")).toBe(`REDACTED:${sha("secret")}`);
    expect(redactedValue(Buffer.from("secret"))).toBe(redactedValue("secret"));
    expect(redactedValue("")).toBe("REDACTED:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(redactedValue("héllo")).toBe(`REDACTED:${sha("héllo")}`);
  });
});

describe("redactHeaders", () => {
  const headers = { Authorization: ["Bearer a", "Bearer b"], "Content-Type": ["application/json"] };

  it("redacts only the named headers, case-insensitively, each value separately", () => {
    const out = redactHeaders(headers, parse("header[authorization]"));
    expect(out).toEqual({
      Authorization: [redactedValue("Bearer a"), redactedValue("Bearer b")],
      "Content-Type": ["application/json"],
    });
  });

  it("redacts every header when asked", () => {
    const out = redactHeaders(headers, parse("headers"));
    expect(out["Content-Type"]).toEqual([redactedValue("application/json")]);
    expect(out.Authorization).toHaveLength(2);
  });

  it("returns a new map and leaves the input alone", () => {
    const out = redactHeaders(headers, parse("body"));
    expect(out).toEqual(headers);
    expect(out).not.toBe(headers);
    expect(out.Authorization).not.toBe(headers.Authorization);
    expect(headers.Authorization).toEqual(["Bearer a", "Bearer b"]);
  });
});
