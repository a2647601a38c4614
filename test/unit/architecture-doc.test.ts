import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * docs/architecture.md and docs/glossary.md send a newcomer to files in one hop, so every path they name must exist:
 * a move or rename that forgets them fails here. `*` stands for one folder level (`src/store/*` = each adapter).
 */
const ROOT = resolve(import.meta.dirname, "../..");

function exists(path: string): boolean {
  const [head, ...rest] = path.split("/*");
  if (rest.length === 0) return existsSync(join(ROOT, path));
  const dir = join(ROOT, head!);
  if (!existsSync(dir)) return false;
  const tail = rest.join("/*");
  return readdirSync(dir, { withFileTypes: true }).some((e) => e.isDirectory() && exists(`${head}/${e.name}${tail}`));
}

describe.each(["docs/architecture.md", "docs/glossary.md"])("%s", (doc) => {
  it("names only paths that exist", () => {
    const text = readFileSync(join(ROOT, doc), "utf8");
    const paths = [...text.matchAll(/`((?:src|test|docs|bench|console)\/[\w./*-]*)`/g)].map((m) => m[1]!);
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.filter((p) => !exists(p.replace(/\/$/, "")))).toEqual([]);
  });
});
