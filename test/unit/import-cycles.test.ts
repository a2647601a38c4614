import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Layers point one way (docs/architecture.md): no import cycle between the top-level parts of src/ (its folders,
 * and each file directly in src/ on its own). Type-only imports count: a type that two layers both need belongs
 * to the lower one (src/domain/records.ts, for instance).
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
  return specifiers.map((m) => resolve(dirname(file), m[1]!));
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
  ["errors.ts", "logger.ts", "worker-entry.ts"],
  ["domain"],
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
    const graph = partGraph();
    const described = cycles(graph).map((component) =>
      component
        .flatMap((from) =>
          [...(graph.get(from) ?? new Map<string, string>())]
            .filter(([to]) => component.includes(to))
            .map(([, example]) => example),
        )
        .join("; "),
    );
    expect(described).toEqual([]);
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
});
