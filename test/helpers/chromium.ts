import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * The Chromium the browser tests drive (docs/testing.md, "What the suite needs"). FERRY_CHROMIUM names a binary on
 * the machine (e.g. Debian's /usr/bin/chromium) when you want one; otherwise the headless Chromium that ships inside
 * the npm package @sparticuz/chromium (a dev dependency) is unpacked once per version and used, so `npm ci && npm
 * test` needs no browser on the machine.
 */
export async function chromiumExecutable(): Promise<string> {
  const configured = process.env.FERRY_CHROMIUM;
  if (configured) {
    if (!existsSync(configured)) throw new Error(`FERRY_CHROMIUM=${configured} does not exist`);
    return configured;
  }
  return npmChromium();
}

const require = createRequire(import.meta.url);

/** Version of the installed @sparticuz/chromium, so an upgrade unpacks afresh instead of reusing an old binary. */
function packageVersion(): string {
  // Its "exports" hide package.json: walk up from the entry point to the package's root.
  for (let dir = dirname(require.resolve("@sparticuz/chromium")); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
    if (pkg.name === "@sparticuz/chromium" && pkg.version) return pkg.version;
  }
  throw new Error("@sparticuz/chromium is not installed (npm ci installs it as a dev dependency)");
}

/**
 * Unpacks @sparticuz/chromium's brotli archives into <tmp>/ferry-chromium-<version>/ (never the package's default
 * <tmp>/chromium, which any other project on the machine may have filled with another version). Two test files can
 * ask at once: each unpacks into its own directory and renames it into place; the loser drops its copy.
 */
async function npmChromium(): Promise<string> {
  const version = packageVersion();
  const target = join(tmpdir(), `ferry-chromium-${version}`);
  const binary = join(target, "chromium");
  if (existsSync(binary)) return binary;
  const staging = `${target}.partial-${process.pid}-${Date.now()}`;
  mkdirSync(staging, { recursive: true });
  const { default: Chromium } = await import("@sparticuz/chromium");
  // The package unpacks into os.tmpdir(), read from TMPDIR at each call: point it at the staging directory for the
  // duration of the unpacking only.
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = staging;
  try {
    const unpacked = await Chromium.executablePath();
    if (dirname(unpacked) !== staging) throw new Error(`@sparticuz/chromium unpacked to ${unpacked}, not ${staging}`);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
  try {
    renameSync(staging, target);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(binary)) throw error;
  }
  return binary;
}
