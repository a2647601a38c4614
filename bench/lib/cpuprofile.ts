import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
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
}

/** Self time per function and per area, summed over every sample of a V8 .cpuprofile. */
export function summarizeProfile(path: string, top = 20): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const frame = nodes.get(id)?.callFrame;
    if (!frame) continue;
    total += us;
    const name = `${frame.functionName || "(anonymous)"} ${frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : ""}`;
    byFunction.set(name.trim(), (byFunction.get(name.trim()) ?? 0) + us);
    const a = area(frame.url, frame.functionName);
    byArea.set(a, (byArea.get(a) ?? 0) + us);
  }
  const rank = <K extends string>(m: Map<string, number>, key: K) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([k, us]) =>
          ({ [key]: k, ms: us / 1000, share: us / total }) as Record<K, string> & { ms: number; share: number },
      );
  return { totalMs: total / 1000, byFunction: rank(byFunction, "name"), byArea: rank(byArea, "area") };
}

/**
 * The main thread's .cpuprofile in a directory. node --cpu-prof writes one per thread, and `--import tsx` runs its
 * loader in a worker thread; the main thread's file is named `CPU.<date>.<time>.<pid>.0.<seq>.cpuprofile`.
 */
export function findProfile(dir: string): string | undefined {
  const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
  const main = files.find((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  const chosen =
    main ?? files.map((f) => ({ f, size: statSync(join(dir, f)).size })).sort((a, b) => b.size - a.size)[0]?.f;
  return chosen ? join(dir, chosen) : undefined;
}

export function profileMarkdown(s: ProfileSummary): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  return [
    `Sampled ${(s.totalMs / 1000).toFixed(1)} s of the Ferry process (idle included).`,
    "",
    "Self time by area:",
    "",
    "| Area | ms | share |",
    "|---|---:|---:|",
    ...s.byArea.map((a) => `| ${a.area} | ${a.ms.toFixed(0)} | ${pct(a.share)} |`),
    "",
    "Top functions by self time:",
    "",
    "| Function | ms | share |",
    "|---|---:|---:|",
    ...s.byFunction.map((f) => `| \`${f.name.replace(/\|/g, "\\|")}\` | ${f.ms.toFixed(0)} | ${pct(f.share)} |`),
  ].join("\n");
}
