import { describe, expect, it } from "vitest";
import { cutBody, fitPage, PAGE_BODY_MAX_BYTES, PAGE_MAX_BYTES } from "../../src/domain/page-budget.js";

/** The page budget of logs and DLQ pages (src/domain/page-budget.ts, docs/reliability.md "Page size"). */
describe("cutBody", () => {
  it("leaves a body within the bound alone", () => {
    expect(cutBody("x".repeat(PAGE_BODY_MAX_BYTES), false)).toBeUndefined();
  });

  it("cuts base64 on a 4-character boundary so it still decodes", () => {
    const cut = cutBody("QUJD".repeat(PAGE_BODY_MAX_BYTES), true)!;
    expect(cut.length % 4).toBe(0);
    expect(cut.length).toBeLessThanOrEqual(PAGE_BODY_MAX_BYTES);
    expect(Buffer.from(cut, "base64").toString("utf8")).toBe("ABC".repeat(cut.length / 4));
  });

  it("never splits a UTF-8 character", () => {
    const cut = cutBody("€".repeat(PAGE_BODY_MAX_BYTES), false)!;
    expect(Buffer.byteLength(cut, "utf8")).toBeLessThanOrEqual(PAGE_BODY_MAX_BYTES);
    expect(cut).toBe("€".repeat(cut.length));
  });
});

describe("fitPage", () => {
  /** Two such records and the page's framing fill the page exactly. */
  const half = PAGE_MAX_BYTES / 2 - 1;
  const entries = ["1", "2", "3", "4", "5"].map((seq) => ({ seq }));

  it("keeps every entry and the store's cursor when the page fits", () => {
    const page = fitPage(entries, (e) => e.seq, () => 10, (e) => e.seq, "5");
    expect(page).toEqual({ records: ["1", "2", "3", "4", "5"], cursor: "5" });
  });

  it("cuts a page short at the byte bound, with a cursor at its last entry so nothing is skipped", () => {
    const page = fitPage(entries, (e) => e.seq, () => half, (e) => e.seq, undefined);
    expect(page).toEqual({ records: ["1", "2"], cursor: "2" });
  });

  it("always keeps the first entry, however large", () => {
    const page = fitPage(entries, (e) => e.seq, () => PAGE_MAX_BYTES * 2, (e) => e.seq, undefined);
    expect(page).toEqual({ records: ["1"], cursor: "1" });
  });
});
