import { existsSync } from "node:fs";
import { relative, resolve } from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

/**
 * Memory at start (issue 29, bench P4's peak RSS): every ES module a thread loads stays in its isolate as a module
 * record with its source and compiled code, and a worker thread loads its own copy of each. So the static module
 * graphs of the compiled server and of the worker threads are checked here, as esbuild resolves them (dynamic
 * `import()`s of literal paths included): own files by path, packages by the name they are imported as.
 */
const ROOT = resolve(import.meta.dirname, "../..");

interface Graph {
  /** Own files reached, relative to the repository (src/… or dist/…). */
  files: string[];
  /** Packages imported (bare specifiers, e.g. `typebox`, `node:fs`), from any file reached. */
  packages: Set<string>;
}

async function graphOf(entry: string): Promise<Graph> {
  const result = await build({
    entryPoints: [resolve(ROOT, entry)],
    bundle: true,
    write: false,
    metafile: true,
    platform: "node",
    format: "esm",
    packages: "external",
    logLevel: "silent",
  });
  const inputs = Object.entries(result.metafile.inputs);
  const packages = new Set(inputs.flatMap(([, input]) => input.imports.filter((i) => i.external).map((i) => i.path)));
  return { files: inputs.map(([path]) => relative(ROOT, resolve(ROOT, path))), packages };
}

const typeboxImports = (graph: Graph) => [...graph.packages].filter((name) => name === "typebox" || name.startsWith("typebox/"));

describe("module graphs", () => {
  // The build bundles src/http/schemas/typebox.ts with the package (scripts/build-server.mjs, BUNDLED): the compiled
  // server must not load TypeBox's ~370 modules one by one.
  it("the compiled server loads TypeBox as one bundled module, not the package's module graph", async () => {
    expect(existsSync(resolve(ROOT, "dist/main.js")), "dist/ is built by the test suite's global setup").toBe(true);
    const server = await graphOf("dist/main.js");
    expect(server.files).toContain("dist/http/schemas/typebox.js");
    expect(typeboxImports(server)).toEqual([]);
    // …while the source does import the package (so the check above is about the build, not an unused library).
    expect(typeboxImports(await graphOf("src/main.ts"))).toEqual(["typebox"]);
  });

  // A worker imports what its own work needs: an import chain from a worker into the HTTP layer (a shared module
  // that imports a schema, Fastify or the OpenAPI docs) would load all of that a second time per thread.
  it.each(["src/delivery/egress-thread/worker.ts", "src/store/thread/worker.ts"])(
    "the worker entry %s loads neither the HTTP layer nor TypeBox nor Fastify",
    async (entry) => {
      const worker = await graphOf(entry);
      expect(worker.files.filter((file) => file.startsWith("src/http/"))).toEqual([]);
      expect(typeboxImports(worker)).toEqual([]);
      expect([...worker.packages].filter((name) => name === "fastify" || name.startsWith("@fastify/"))).toEqual([]);
    },
  );
});
