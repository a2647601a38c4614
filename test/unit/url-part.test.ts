import { describe, expect, it } from "vitest";
import { urlPart } from "../../src/store/rows-shared.js";

describe("urlPart", () => {
  it("gives a URL's host and path, and null for text that is not a URL", () => {
    expect(urlPart("https://example.com:8443/hooks/a?x=1", "host")).toBe("example.com");
    expect(urlPart("https://example.com:8443/hooks/a?x=1", "path")).toBe("/hooks/a");
    expect(urlPart("not a url", "host")).toBeNull();
    expect(urlPart("not a url", "path")).toBeNull();
  });

  it("answers the same for a URL seen before, also after more URLs than it keeps", () => {
    const first = "http://127.0.0.1:9/first";
    expect(urlPart(first, "path")).toBe("/first");
    for (let i = 0; i < 2_500; i++) expect(urlPart(`http://h${i}.test/p${i}`, "host")).toBe(`h${i}.test`);
    expect(urlPart(first, "path")).toBe("/first");
    expect(urlPart(first, "host")).toBe("127.0.0.1");
  });
});
