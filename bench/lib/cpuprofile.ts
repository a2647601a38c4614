import { readdirSync, readFileSync, statSync } from "node:fs";
import { SourceMap, type SourceMapPayload } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a frame's code lives: a package, one of Ferry's files, Node's internals, or V8's pseudo-frames. */
function area(url: string, name: string): string {
  if (url === "") return name.startsWith("(") ? name : "(native)";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const src = /\/(src\/.+)$/.exec(url);
  if (src) return src[1]!;
  if (url.startsWith("node:")) return "node internals";
  return url;
}

/**
 * tsx runs Ferry from minified transpiled code (a whole module on one or two lines), so a profile's positions say
 * little. tsx caches each transpiled module with its source map under <tmpdir>/tsx-<uid>/; this maps a frame back
 * to its .ts line (the newest cache entry of a file wins). Returns undefined when no map is found.
 */
class TsxSources {
  private maps: Map<string, SourceMap> | undefined;
  private readonly lines = new Map<string, string[]>();

  private load(): Map<string, SourceMap> {
    const maps = new Map<string, { map: SourceMap; mtime: number }>();
    const dir = join(tmpdir(), `tsx-${process.getuid?.() ?? 0}`);
    let files: string[] = [];
    try {
      files = readdirSync(dir);
    } catch {
      return new Map();
    }
    for (const f of files) {
      try {
        const path = join(dir, f);
        const entry = JSON.parse(readFileSync(path, "utf8")) as { map?: { sources?: string[] } };
        const source = entry.map?.sources?.[0];
        if (!source?.includes("/src/")) continue;
        const mtime = statSync(path).mtimeMs;
        const known = maps.get(source);
        if (!known || known.mtime < mtime) {
          maps.set(source, { map: new SourceMap(entry.map as unknown as SourceMapPayload), mtime });
        }
      } catch {
        // not a module entry
      }
    }
    return new Map([...maps].map(([k, v]) => [k, v.map]));
  }

  resolve(url: string, line: number, column: number): { line: number; text: string } | undefined {
    this.maps ??= this.load();
    const path = url.replace(/^file:\/\//, "");
    const entry = this.maps.get(path)?.findEntry(line, column);
    if (!entry || !("originalLine" in entry)) return undefined;
    let source = this.lines.get(path);
    if (!source) {
      try {
        source = readFileSync(path, "utf8").split("\n");
      } catch {
        source = [];
      }
      this.lines.set(path, source);
    }
    const text = (source[entry.originalLine] ?? "").trim();
    return { line: entry.originalLine + 1, text: text.length > 70 ? `${text.slice(0, 67)}...` : text };
  }
}

function shortUrl(url: string): string {
  return url
    .replace(/^file:\/\//, "")
    .replace(/^.*node_modules\//, "")
    .replace(/^.*\/(src\/)/, "$1");
}

export interface ProfileSummary {
  totalMs: number;
  byFunction: { name: string; ms: number; share: number }[];
  byArea: { area: string; ms: number; share: number }[];
  /** Ferry's own functions (src/) by inclusive time: each with everything it called. */
  ferryInclusive: { name: string; ms: number; share: number }[];
}

/** Self time per function and per area, summed over every sample of a V8 .cpuprofile. */
export function summarizeProfile(path: string, top = 20): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  // Modules tsx loads inside a worker (tsImport) carry a `?tsx-namespace=…` query: the file is the same.
  for (const n of profile.nodes) n.callFrame.url = n.callFrame.url.replace(/\?tsx-namespace=[^#]*$/, "");
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const sources = new TsxSources();
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const frame = nodes.get(id)?.callFrame;
    if (!frame) continue;
    total += us;
    const original = frame.url.includes("/src/")
      ? sources.resolve(frame.url, frame.lineNumber, frame.columnNumber)
      : undefined;
    const where = original
      ? `${shortUrl(frame.url)}:${original.line} \`${original.text}\``
      : frame.url
        ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}`
        : "";
    const name = `${frame.functionName || "(anonymous)"} ${where}`;
    byFunction.set(name.trim(), (byFunction.get(name.trim()) ?? 0) + us);
    const a = area(frame.url, frame.functionName);
    byArea.set(a, (byArea.get(a) ?? 0) + us);
  }
  // Inclusive time of Ferry's functions: every sample counts once for each distinct src/ function on its stack.
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = nodes.get(at)?.callFrame;
      if (!frame || !/\/src\//.test(frame.url) || frame.functionName === "") continue;
      seen.add(`${frame.functionName} ${shortUrl(frame.url)}`);
    }
    for (const key of seen) inclusive.set(key, (inclusive.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const rank = <K extends string>(m: Map<string, number>, key: K) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([k, us]) =>
          ({ [key]: k, ms: us / 1000, share: us / total }) as Record<K, string> & { ms: number; share: number },
      );
  return {
    totalMs: total / 1000,
    byFunction: rank(byFunction, "name"),
    byArea: rank(byArea, "area"),
    ferryInclusive: rank(inclusive, "name"),
  };
}

/**
 * The main thread's .cpuprofile in a directory. node --cpu-prof writes one per thread, and `--import tsx` runs its
 * loader in a worker thread; the main thread's file is named `CPU.<date>.<time>.<pid>.0.<seq>.cpuprofile`.
 */
/** Every thread's profile in `dir` but the main thread's (thread 0). */
export function otherThreadProfiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile") && !/\.\d+\.0\.\d+\.cpuprofile$/.test(f))
    .map((f) => join(dir, f));
}

/** Share of a profile's sampled time that was not idle. */
export function busyShare(s: ProfileSummary): number {
  const idle = s.byArea.find((a) => a.area === "(idle)")?.ms ?? 0;
  return s.totalMs > 0 ? 1 - idle / s.totalMs : 0;
}

/**
 * The profile of one thread of the profiled process: `node --cpu-prof` writes one file per thread,
 * `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`; thread 0 is the main thread, 1 the first worker (Ferry's
 * egress thread). Falls back to the largest file for the main thread.
 */
export function findProfile(dir: string, thread = 0): string | undefined {
  const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
  const exact = files.find((f) => new RegExp(`\\.\\d+\\.${thread}\\.\\d+\\.cpuprofile$`).test(f));
  if (exact || thread !== 0) return exact ? join(dir, exact) : undefined;
  const chosen = files.map((f) => ({ f, size: statSync(join(dir, f)).size })).sort((a, b) => b.size - a.size)[0]?.f;
  return chosen ? join(dir, chosen) : undefined;
}

export function profileMarkdown(s: ProfileSummary): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  return [
    `Sampled ${(s.totalMs / 1000).toFixed(1)} s of the profiled thread (idle included).`,
    "",
    "Self time by area:",
    "",
    "| Area | ms | share |",
    "|---|---:|---:|",
    ...s.byArea.map((a) => `| ${a.area} | ${a.ms.toFixed(0)} | ${pct(a.share)} |`),
    "",
    "Ferry's named functions by inclusive time (the function and everything it calls; anonymous functions " +
      "are not listed):",
    "",
    "| Function | ms | share |",
    "|---|---:|---:|",
    ...s.ferryInclusive.map((f) => `| \`${f.name.replace(/\|/g, "\\|")}\` | ${f.ms.toFixed(0)} | ${pct(f.share)} |`),
    "",
    "Top functions by self time (Ferry's frames mapped back to their .ts line through tsx's source maps):",
    "",
    "| Function | ms | share |",
    "|---|---:|---:|",
    ...s.byFunction.map((f) => `| ${f.name.replace(/\|/g, "\\|")} | ${f.ms.toFixed(0)} | ${pct(f.share)} |`),
  ].join("\n");
}
