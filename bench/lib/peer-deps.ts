import { createRequire } from "node:module";
import { join } from "node:path";
import { repoRoot, run } from "./proc.js";

function resolveFrom(dir: string, name: string): string | undefined {
  try {
    return createRequire(join(dir, "package.json")).resolve(name);
  } catch {
    return undefined;
  }
}

/**
 * Resolves the packages a peer needs (name → pinned version), to `require` by path in the peer's process. Those
 * the checkout's node_modules lacks (bullmq and ioredis are not project dependencies: bullmq's optional platform
 * binaries upset `npm ci`) are installed once, pinned, with `npm install --no-save` under .tmp/bench-deps.
 */
export async function resolvePeerPackages(
  packages: Record<string, string>,
  log: (m: string) => void,
): Promise<Record<string, string>> {
  const prefix = join(repoRoot, ".tmp", "bench-deps");
  const found: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of Object.keys(packages)) {
    const path = resolveFrom(repoRoot, name);
    if (path) found[name] = path;
    else missing.push(name);
  }
  // Already installed under the prefix by an earlier run?
  const cached = missing.map((name) => resolveFrom(prefix, name));
  if (cached.every((path) => path !== undefined)) {
    missing.forEach((name, i) => {
      found[name] = cached[i]!;
    });
    return found;
  }
  // All of them in one call: a later --no-save install would prune what an earlier one added.
  const specs = missing.map((name) => `${name}@${packages[name]}`);
  log(`installing ${specs.join(" ")} under ${prefix} (npm install --no-save) …`);
  const r = await run("npm", ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--prefix", prefix, ...specs], {
    timeoutMs: 300_000,
  });
  if (r.code !== 0) throw new Error(`npm install ${specs.join(" ")} failed:\n${r.output.slice(-800)}`);
  for (const name of missing) {
    // In a fresh process: this one has cached the failed lookups of a moment ago.
    const resolved = await run(process.execPath, ["-p", `require.resolve(${JSON.stringify(name)})`], {
      timeoutMs: 30_000,
      cwd: prefix,
    });
    if (resolved.code !== 0) throw new Error(`${name} cannot be resolved after installing it under ${prefix}`);
    found[name] = resolved.output.trim();
  }
  return found;
}
