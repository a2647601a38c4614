import { describe, expect, it } from "vitest";
import { seqCursor, seqPage } from "../../src/store/pages.js";

/** Cursor pages of every store list (src/store/pages.ts): rows read with one more than `count`. */
describe("seqPage", () => {
  const rows = [{ seq: 3 }, { seq: 5 }, { seq: 8 }];

  it("keeps `count` rows and sets the cursor at the last one when a row more was read", () => {
    expect(seqPage(rows, 2)).toEqual({ page: [{ seq: 3 }, { seq: 5 }], cursor: "5" });
  });

  it("sets no cursor on the last page, full or not", () => {
    expect(seqPage(rows, 3)).toEqual({ page: rows });
    expect(seqPage(rows, 10)).toEqual({ page: rows });
    expect(seqPage([], 10)).toEqual({ page: [] });
  });

  it("never gives an empty page a cursor", () => {
    expect(seqCursor([], true)).toBeUndefined();
    expect(seqCursor([{ seq: "12" }], true)).toBe("12");
    expect(seqCursor([{ seq: "12" }], false)).toBeUndefined();
  });
});
