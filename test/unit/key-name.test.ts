import { describe, expect, it } from "vitest";
import { keyName } from "../../src/http/query.js";

describe("keyName", () => {
  it("keeps a plain key and quotes one that is empty or has blanks, a colon or a quote in it", () => {
    expect(keyName("messageIds", "query parameter")).toBe("messageIds");
    expect(keyName("__proto__", "body field")).toBe("__proto__");
    expect(keyName("", "query parameter")).toBe('query parameter ""');
    expect(keyName(" ", "body field")).toBe('body field " "');
    expect(keyName("a:b", "body field")).toBe('body field "a:b"');
    expect(keyName('say"hi', "body field")).toBe('body field "say\\"hi"');
    expect(keyName("tab\there", "query parameter")).toBe('query parameter "tab\\there"');
  });
});
