import { describe, expect, it } from "vitest";
import { type FilterNode, globToRegex, parseFilter } from "../../src/search/filter.js";

/** The filter grammar of docs/search.md: every operator, precedence, and errors that name the position. */

const content = (...keys: string[]) => ({ source: "content", steps: keys.map((key) => ({ key })) });
const meta = (...keys: string[]) => ({ source: "metadata", steps: keys.map((key) => ({ key })) });

describe("filter grammar", () => {
  it("parses each comparison operator with string, number and boolean values", () => {
    for (const op of ["=", "!=", "<", "<=", ">", ">="] as const) {
      expect(parseFilter(`price ${op} 5`)).toEqual({ kind: "compare", op, field: content("price"), value: 5 });
    }
    expect(parseFilter("name = 'Ada'")).toMatchObject({ value: "Ada" });
    expect(parseFilter('name = "Ada"')).toMatchObject({ value: "Ada" });
    expect(parseFilter("name = 'it''s'")).toMatchObject({ value: "it's" });
    expect(parseFilter("x <> -2.5")).toMatchObject({ op: "!=", value: -2.5 });
    expect(parseFilter("ok = true")).toMatchObject({ value: true });
    expect(parseFilter("ok = FALSE")).toMatchObject({ value: false });
    expect(parseFilter("ok = 1")).toMatchObject({ value: 1 });
  });

  it("parses GLOB, NOT GLOB, IN, NOT IN, CONTAINS, NOT CONTAINS, HAS FIELD and HAS NOT FIELD", () => {
    expect(parseFilter("city GLOB 'Ist*'")).toEqual({ kind: "glob", negate: false, field: content("city"), pattern: "Ist*" });
    expect(parseFilter("city not glob '[^A]?'")).toEqual({ kind: "glob", negate: true, field: content("city"), pattern: "[^A]?" });
    expect(parseFilter("id IN ('a', 2, true)")).toEqual({ kind: "in", negate: false, field: content("id"), values: ["a", 2, true] });
    expect(parseFilter("id NOT IN (1)")).toEqual({ kind: "in", negate: true, field: content("id"), values: [1] });
    expect(parseFilter("tags CONTAINS 'x'")).toEqual({ kind: "contains", negate: false, field: content("tags"), value: "x" });
    expect(parseFilter("tags NOT CONTAINS 3")).toEqual({ kind: "contains", negate: true, field: content("tags"), value: 3 });
    expect(parseFilter("HAS FIELD a.b")).toEqual({ kind: "hasField", negate: false, field: content("a", "b") });
    expect(parseFilter("has not field @metadata.x")).toEqual({ kind: "hasField", negate: true, field: meta("x") });
  });

  it("reads paths: nested keys, array indexes, indexes from the end, metadata", () => {
    expect(parseFilter("a.b[0].c[#-1] = 1")).toMatchObject({
      field: { source: "content", steps: [{ key: "a" }, { key: "b" }, { index: 0 }, { key: "c" }, { fromEnd: 1 }] },
    });
    expect(parseFilter("@metadata.geo.lat > 3")).toMatchObject({ field: meta("geo", "lat") });
    expect(parseFilter("some-key = 1")).toMatchObject({ field: content("some-key") });
  });

  it("binds AND tighter than OR, and parentheses group", () => {
    const a = { kind: "compare", op: "=", field: content("a"), value: 1 };
    const b = { kind: "compare", op: "=", field: content("b"), value: 2 };
    const c = { kind: "compare", op: "=", field: content("c"), value: 3 };
    expect(parseFilter("a = 1 OR b = 2 AND c = 3")).toEqual({ kind: "or", children: [a, { kind: "and", children: [b, c] }] });
    expect(parseFilter("a = 1 AND b = 2 OR c = 3")).toEqual({ kind: "or", children: [{ kind: "and", children: [a, b] }, c] });
    expect(parseFilter("a = 1 and (b = 2 or c = 3)")).toEqual({ kind: "and", children: [a, { kind: "or", children: [b, c] }] });
    expect(parseFilter("((a = 1))")).toEqual(a);
  });

  it("treats an empty filter as none", () => {
    expect(parseFilter("")).toBeUndefined();
    expect(parseFilter("   ")).toBeUndefined();
  });

  it("names the position of what is wrong", () => {
    const cases: [string, RegExp][] = [
      ["price <", /expected a value but found the end of the filter at position 7/],
      ["price 5", /expected an operator but found number 5 at position 6/],
      ["(a = 1", /expected "\)" but found the end of the filter at position 6/],
      ["a = 1 b = 2", /unexpected "b" at position 6/],
      ["a = 'open", /unterminated string at position 4/],
      ["a IN 1", /expected "\(" after IN but found number 1 at position 5/],
      ["a GLOB 3", /GLOB needs a quoted pattern but found number 3 at position 7/],
      ["a = 1 AND", /expected a field but found the end of the filter at position 9/],
      ["HAS a", /expected FIELD but found "a" at position 4/],
      ["a ~ 1", /unexpected character "~" at position 2/],
      ["@meta.x = 1", /unknown field "@meta.x" .* at position 0/],
      ["a..b = 1", /malformed field "a..b" at position 0/],
    ];
    for (const [input, message] of cases) {
      expect(() => parseFilter(input), input).toThrow(message);
      expect(() => parseFilter(input)).toThrow(/^invalid filter: /);
    }
  });

  it("turns globs into anchored regular expressions", () => {
    const matches = (glob: string, s: string) => new RegExp(globToRegex(glob)).test(s);
    expect(matches("Ist*", "Istanbul")).toBe(true);
    expect(matches("Ist*", "istanbul")).toBe(false);
    expect(matches("a?c", "abc")).toBe(true);
    expect(matches("a?c", "abbc")).toBe(false);
    expect(matches("[AB]x", "Bx")).toBe(true);
    expect(matches("[^AB]x", "Bx")).toBe(false);
    expect(matches("[!AB]x", "Cx")).toBe(true);
    expect(matches("a.b", "axb")).toBe(false);
  });
});

// Type-level check that the tree stays plain data (it crosses the store's thread boundary).
const tree: FilterNode | undefined = parseFilter("a = 1");
expect(structuredClone(tree)).toEqual(tree);
