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

/**
 * The adapters name a file by its role (docs/architecture.md "Adapter files"): a file of one adapter has a namesake
 * in the other, or is one dialect's only and the table there says why. A new file that is neither fails here.
 */
describe("adapter file names", () => {
  const adapters = ["sqlite", "postgres"] as const;
  const filesOf = (adapter: string) =>
    readdirSync(join(ROOT, "src/store", adapter)).filter((name) => name.endsWith(".ts"));

  it("gives each file of one adapter a namesake in the other, or a row in the dialect-only table", () => {
    const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
    const section = doc.slice(doc.indexOf("### Adapter files"), doc.indexOf("## Where to find"));
    expect(section.length).toBeGreaterThan(0);
    const unexplained = adapters.flatMap((adapter) => {
      const other = new Set(filesOf(adapters.find((a) => a !== adapter)!));
      return filesOf(adapter)
        .filter((name) => !other.has(name) && !section.includes(`\`src/store/${adapter}/${name}\``))
        .map((name) => `src/store/${adapter}/${name}`);
    });
    expect(unexplained).toEqual([]);
  });

  it("lists as dialect-only no file that both adapters have", () => {
    const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
    const section = doc.slice(doc.indexOf("### Adapter files"), doc.indexOf("## Where to find"));
    const listed = [...section.matchAll(/`src\/store\/(sqlite|postgres)\/([\w.-]+\.ts)`/g)];
    expect(listed.length).toBeGreaterThan(0);
    const both = listed.filter(([, , name]) => adapters.every((a) => filesOf(a).includes(name!)));
    expect(both.map(([path]) => path)).toEqual([]);
  });
});
