import { describe, expect, it } from "vitest";
import { correctedQuery, corrections, editBudget, editDistance, vocabularyOf } from "../../src/search/typos.js";

describe("search typo correction", () => {
  it("counts edits, a transposition as one, and stops past the budget", () => {
    expect(editDistance("saxaphone", "saxophone", 2)).toBe(1);
    expect(editDistance("saxohpone", "saxophone", 2)).toBe(1);
    expect(editDistance("saxophne", "saxophone", 2)).toBe(1);
    expect(editDistance("kitten", "sitting", 3)).toBe(3);
    expect(editDistance("kitten", "sitting", 1)).toBe(2);
    expect(editDistance("a", "abcdef", 2)).toBe(3);
  });

  it("allows no edit up to 4 letters, one up to 8, two beyond", () => {
    expect([editBudget("drum"), editBudget("lesson"), editBudget("saxaphone")]).toEqual([0, 1, 2]);
  });

  it("corrects only words the vocabulary lacks, to the nearest and then the most common word", () => {
    const vocabulary = vocabularyOf([
      JSON.stringify({ t: "Saxophone lessons", n: { deep: ["for beginners"] } }),
      JSON.stringify({ t: "Sousaphone lessons" }),
      "not json",
    ]);
    expect(vocabulary.get("lessons")).toBe(2);
    const fixes = corrections(["saxaphone", "lessons", "drun", "zzzzzzzz"], vocabulary);
    expect([...fixes]).toEqual([["saxaphone", "saxophone"]]);
    expect(correctedQuery("Saxaphone lessons", fixes)).toBe("saxophone lessons");
  });
});
