import { createRequire } from "node:module";
import { join } from "node:path";
import { repoRoot, run } from "./proc.js";

/**
 * Resolves a package a peer needs, installing it (pinned, `--no-save`) under .tmp/bench-deps when the checkout's
 * node_modules lacks it (e.g. a worktree whose node_modules predates the package.json entry). Returns the path
 * to `require` in the peer's process.
 */
export async function resolvePeerPackage(name: string, version: string, log: (m: string) => void): Promise<string> {
  try {
    return createRequire(join(repoRoot, "package.json")).resolve(name);
  } catch {
    const prefix = join(repoRoot, ".tmp", "bench-deps");
    try {
      return createRequire(join(prefix, "package.json")).resolve(name);
    } catch {
      log(`${name} is not installed; npm install ${name}@${version} into ${prefix} …`);
      const r = await run(
        "npm",
        ["install", "--no-save", "--no-package-lock", "--prefix", prefix, `${name}@${version}`],
        {
          timeoutMs: 300_000,
        },
      );
      if (r.code !== 0) throw new Error(`npm install ${name}@${version} failed:\n${r.output.slice(-800)}`);
      return createRequire(join(prefix, "package.json")).resolve(name);
    }
  }
}
