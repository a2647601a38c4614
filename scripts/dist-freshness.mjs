// Whether dist/ must be (re)built: missing, or older than a file under src/ or the build configuration.
// Shared by bin/ferry.mjs (builds before running) and scripts/build-server.mjs --if-stale (the test suite's setup).
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Newest modification time under `dir`; directories count too (they change when a file is removed). */
function newest(dir) {
  let latest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

export function distIsStale(root) {
  const stamp = join(root, "dist", ".build-stamp");
  if (!existsSync(stamp)) return true;
  const src = join(root, "src");
  // An installed package may ship dist/ without src/: nothing to compare with.
  if (!existsSync(src)) return false;
  const built = statSync(stamp).mtimeMs;
  // The build script counts as configuration: it decides what dist/ holds (e.g. its bundled modules).
  const config = ["tsconfig.build.json", "scripts/build-server.mjs"].map((file) => join(root, file)).filter(existsSync);
  return newest(src) > built || config.some((file) => statSync(file).mtimeMs > built);
}
