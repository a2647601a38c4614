import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Layers point one way (docs/architecture.md): no import cycle anywhere in src/, between files or between folders
 * at any depth (issue 30: folder A imports folder B and B imports A is a circle too). Type-only imports count: a
 * type that two files both need belongs to the lower one (src/domain/records.ts, src/store/store-params.ts).
 */
const SRC = resolve(import.meta.dirname, "../../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** `delivery` for src/delivery/x.ts, `server.ts` for src/server.ts. */
function partOf(file: string): string {
  const [first, ...rest] = relative(SRC, file).split("/");
  return rest.length === 0 ? first!.replace(/\.js$/, ".ts") : first!;
}

/** Every relative `import … from` / `export … from` / `import("…")` of the file, resolved to a path. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*"(\.[^"]+)"/g),
    ...text.matchAll(/import\(\s*"(\.[^"]+)"\s*\)/g),
  ];
  return specifiers.map((m) => resolve(dirname(file), m[1]!).replace(/\.js$/, ".ts"));
}

/** Edges between parts, each with one import that makes it (for the failure message). */
function partGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of sourceFiles(SRC)) {
    const from = partOf(file);
    for (const target of importsOf(file)) {
      const to = partOf(target);
      if (to === from) continue;
      const edges = graph.get(from) ?? new Map<string, string>();
      if (!edges.has(to)) edges.set(to, `${relative(SRC, file)} imports ${relative(SRC, target)}`);
      graph.set(from, edges);
    }
  }
  return graph;
}

/** Edges between files of src/ (relative paths), each with its import (for the failure message). */
function fileGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of sourceFiles(SRC)) {
    const from = relative(SRC, file);
    const edges = new Map<string, string>();
    for (const target of importsOf(file)) edges.set(relative(SRC, target), `${from} imports ${relative(SRC, target)}`);
    graph.set(from, edges);
  }
  return graph;
}

/**
 * Edges between siblings at every depth: an import from a/b/x.ts to a/c/y.ts is an edge between the folders a/b and
 * a/c (their first differing entries under the common folder a/), so two folders that import each other form a
 * cycle even when no two files do.
 */
function folderGraph(files = fileGraph()): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const [from, edges] of files) {
    for (const [to, example] of edges) {
      const a = from.split("/");
      const b = to.split("/");
      let common = 0;
      while (common < a.length - 1 && common < b.length - 1 && a[common] === b[common]) common++;
      const fromEntry = a.slice(0, common + 1).join("/");
      const toEntry = b.slice(0, common + 1).join("/");
      if (fromEntry === toEntry) continue;
      const out = graph.get(fromEntry) ?? new Map<string, string>();
      if (!out.has(toEntry)) out.set(toEntry, example);
      graph.set(fromEntry, out);
    }
  }
  return graph;
}

/** Each cycle of the graph, told by the imports that make it. */
function describedCycles(graph: Map<string, Map<string, string>>): string[] {
  return cycles(graph).map((component) =>
    component
      .flatMap((from) =>
        [...(graph.get(from) ?? new Map<string, string>())]
          .filter(([to]) => component.includes(to))
          .map(([, example]) => example),
      )
      .join("; "),
  );
}

/** Strongly connected components of more than one part (Tarjan): each is at least one cycle. */
function cycles(graph: Map<string, Map<string, string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/**
 * The layers of docs/architecture.md, lowest first: a part may import only parts of a lower layer. A new top-level
 * folder or file of src/ must be placed here (the test fails until it is).
 */
const LAYERS: readonly (readonly string[])[] = [
  ["errors.ts", "logger.ts", "heap-growth.ts"],
  ["threads"],
  ["domain"],
  ["config"],
  ["config.ts"],
  ["metrics", "search"],
  ["store"],
  ["delivery"],
  ["services"],
  ["maintenance"],
  ["http"],
  ["app.ts"],
  ["server.ts"],
  ["cli"],
  ["main.ts"],
];
const layerOf = (part: string): number => LAYERS.findIndex((layer) => layer.includes(part));

describe("src/ layering", () => {
  it("places every top-level part of src/ in a layer", () => {
    const parts = new Set(sourceFiles(SRC).map(partOf));
    expect([...parts].filter((part) => layerOf(part) < 0)).toEqual([]);
  });

  it("imports only downwards, in the layer order of docs/architecture.md", () => {
    const upwards = [...partGraph()].flatMap(([from, edges]) =>
      [...edges].filter(([to]) => layerOf(to) >= layerOf(from)).map(([, example]) => example),
    );
    expect(upwards).toEqual([]);
  });

  it("has no import cycle between its top-level parts", () => {
    expect(describedCycles(partGraph())).toEqual([]);
  });

  it("has no import cycle between any two files of src/", () => {
    expect(describedCycles(fileGraph())).toEqual([]);
  });

  it("has no import cycle between folders at any depth (folder A imports B and B imports A)", () => {
    expect(describedCycles(folderGraph())).toEqual([]);
  });

  it("finds a cycle when there is one (the check itself works)", () => {
    const graph = new Map([
      ["a", new Map([["b", "a imports b"]])],
      ["b", new Map([["c", "b imports c"]])],
      ["c", new Map([["a", "c imports a"]])],
      ["d", new Map([["a", "d imports a"]])],
    ]);
    expect(cycles(graph)).toEqual([["a", "b", "c"]]);
  });

  it("finds a circle between two folders whose files form none", () => {
    const files = new Map([
      ["a/b/x.ts", new Map([["a/c/y.ts", "a/b/x.ts imports a/c/y.ts"]])],
      ["a/c/z.ts", new Map([["a/b/w.ts", "a/c/z.ts imports a/b/w.ts"]])],
      ["a/d.ts", new Map([["a/b/x.ts", "a/d.ts imports a/b/x.ts"]])],
    ]);
    expect(cycles(files)).toEqual([]);
    expect(cycles(folderGraph(files))).toEqual([["a/b", "a/c"]]);
  });
});

/**
 * Route files import no other route file (issue 30): a helper two routes share (an answer, a parser, a view) goes to a
 * shared module of src/http/ (src/http/replies.ts, src/http/bodies/, src/http/views/ …), so a route can be read,
 * moved or dropped alone. Paths are relative to src/.
 */
function routeToRouteImports(files: Map<string, Map<string, string>>): string[] {
  const isRoute = (path: string) => path.startsWith("http/routes/");
  return [...files]
    .filter(([from]) => isRoute(from))
    .flatMap(([, edges]) => [...edges].filter(([to]) => isRoute(to)).map(([, example]) => example));
}

describe("src/http/routes", () => {
  it("has no route file importing another route file", () => {
    expect(routeToRouteImports(fileGraph())).toEqual([]);
  });

  it("finds a route importing another route (the check itself works)", () => {
    const files = new Map([
      ["http/routes/search.ts", new Map([["http/routes/management-accounts.ts", "search imports management-accounts"]])],
      ["http/routes/logs.ts", new Map([["http/replies.ts", "logs imports replies"]])],
      ["app.ts", new Map([["http/routes/logs.ts", "app imports logs"]])],
    ]);
    expect(routeToRouteImports(files)).toEqual(["search imports management-accounts"]);
  });
});
