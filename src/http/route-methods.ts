/**
 * Which methods the app serves on a path, for 405 answers (docs/errors.md `method_not_allowed`): every registered
 * route pattern, matched like the router does (case-insensitive, trailing slash ignored, `:param` is one segment,
 * `*` the rest of the path).
 */
export class RouteMethods {
  private readonly routes: { pattern: RegExp; method: string }[] = [];

  add(methods: string | string[], url: string): void {
    const source = url
      .replace(/\/+$/, "")
      .split(/(:[A-Za-z0-9_]+|\*)/)
      .map((part) => {
        if (part === "*") return ".*";
        if (part.startsWith(":")) return "[^/]+";
        return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      })
      .join("");
    const pattern = new RegExp(`^${source}/?$`, "i");
    for (const method of [methods].flat()) this.routes.push({ pattern, method });
  }

  /** The methods served on `path` (no query string), sorted; empty when no route matches it at all. */
  allowed(path: string): string[] {
    const methods = new Set(this.routes.filter((r) => r.pattern.test(path)).map((r) => r.method));
    return [...methods].sort();
  }
}
