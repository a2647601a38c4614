import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { errorCatalog } from "../../src/errors.js";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

/** Every .ts file under `dir` (repository-relative paths). */
function sourceFiles(dir: string): string[] {
  const entries = readdirSync(new URL(`../../${dir}`, import.meta.url), { withFileTypes: true });
  return entries.flatMap((e) =>
    e.isDirectory() ? sourceFiles(`${dir}/${e.name}`) : e.name.endsWith(".ts") ? [`${dir}/${e.name}`] : [],
  );
}

describe("docs stay true", () => {
  // Configuration: test/unit/config-table.test.ts (its docs table is written from src/config/options.ts).

  it("documents every error code with its status, and documents no other", () => {
    const doc = read("docs/errors.md");
    const documented = [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => `${m[1]} ${m[2]}`);
    const catalog = Object.entries(errorCatalog).map(([code, status]) => `${code} ${status}`);
    expect(documented.sort()).toEqual(catalog.sort());
  });

  it("every documented code is produced by some code path, and every produced code is documented", () => {
    const sources = sourceFiles("src").map((path) => ({ path, text: read(path) }));
    const produced = new Set<string>();
    const undocumented: string[] = [];
    const note = (code: string, where: string) => {
      if (code in errorCatalog) produced.add(code);
      else undocumented.push(`${code} (${where})`);
    };
    // Helpers of src/errors.ts that build an AppError, e.g. invalidField → invalid_input.
    const helperSource = /export function (\w+)\([^)]*\): AppError \{\s*return new AppError\("(\w+)"/g;
    const helpers = new Map([...read("src/errors.ts").matchAll(helperSource)].map((m) => [m[1]!, m[2]!]));
    expect(helpers.size).toBeGreaterThan(0);
    for (const { path, text } of sources) {
      if (path === "src/errors.ts") continue;
      for (const m of text.matchAll(/new AppError\(\s*"(\w+)"/g)) note(m[1]!, path);
      for (const m of text.matchAll(/errorCatalog\.(\w+)/g)) note(m[1]!, path);
      for (const [helper, code] of helpers) if (new RegExp(`\\b${helper}\\(`).test(text)) note(code, path);
      // A literal error status must be a catalog status. It proves its code produced only when no other code shares
      // it: a 503 may be `unavailable` or `storage_full`, so those codes must be produced by name.
      for (const m of text.matchAll(/\.status\((\d{3})\)/g)) {
        const status = Number(m[1]);
        if (status < 400) continue;
        const codes = Object.entries(errorCatalog).filter(([, s]) => s === status);
        if (codes.length === 1) note(codes[0]![0], path);
        else if (codes.length === 0) undocumented.push(`status ${status} (${path})`);
      }
    }
    expect(undocumented, "produced but not in the catalog").toEqual([]);
    const neverProduced = Object.keys(errorCatalog).filter((code) => !produced.has(code));
    expect(neverProduced, "documented but never produced").toEqual([]);
  });
});
