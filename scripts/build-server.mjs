#!/usr/bin/env node
// `npm run build:server`: compiles src/ to dist/ with tsc (tsconfig.build.json) and copies the files the code reads
// at run time (the SQL migrations, JSON files) next to the compiled modules, replaces the BUNDLED modules with esbuild
// bundles, then stamps the build. bin/ferry.mjs runs it when dist/ is missing or older than src/ (docs/operations.md).
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { distIsStale } from "./dist-freshness.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const src = join(root, "src");
const dist = join(root, "dist");
/** Files that are not TypeScript but are read at run time, by extension. */
const ASSETS = new Set([".sql", ".json"]);
/**
 * Modules whose compiled output is replaced by one bundle of the module with the packages it imports (esbuild):
 * for a dependency that ships as hundreds of small ES modules, each of which the server would otherwise keep in
 * memory as its own module record (src/http/schemas/typebox.ts says what it saves). Source paths under src/.
 */
const BUNDLED = ["http/schemas/typebox.ts"];

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else yield path;
  }
}

// --if-stale: build only when dist/ is missing or older than src/ (the test suite's global setup).
if (process.argv.includes("--if-stale") && !distIsStale(root)) process.exit(0);

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
} catch {
  // An install without development dependencies (npm ci --omit=dev) cannot build: it runs the dist/ it was given.
  process.stderr.write(`ferry build: typescript is not installed; ${existsSync(dist) ? "keeping" : "no"} dist/\n`);
  process.exit(existsSync(dist) ? 0 : 1);
}
// Built beside dist/ and swapped in at the end, so a process starting meanwhile never sees half a build.
const staging = join(root, `.dist-build-${process.pid}`);
rmSync(staging, { recursive: true, force: true });
const result = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), "--outDir", staging], {
  cwd: root,
  stdio: ["ignore", "inherit", "inherit"],
});
if (result.status !== 0) {
  rmSync(staging, { recursive: true, force: true });
  process.stderr.write("ferry build: tsc failed\n");
  process.exit(result.status ?? 1);
}
for (const file of files(src)) {
  const dot = file.lastIndexOf(".");
  if (dot < 0 || !ASSETS.has(file.slice(dot))) continue;
  const target = join(staging, relative(src, file));
  mkdirSync(dirname(target), { recursive: true });
  cpSync(file, target);
}
try {
  await bundle(staging);
} catch (error) {
  rmSync(staging, { recursive: true, force: true });
  process.stderr.write(`ferry build: bundling failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
// The stamp's mtime is the build's time: bin/ferry.mjs rebuilds when any file under src/ is newer.
writeFileSync(join(staging, ".build-stamp"), `${new Date().toISOString()}\n`);
rmSync(dist, { recursive: true, force: true });
renameSync(staging, dist);

/** Replaces the compiled output of each BUNDLED module (and its source map) with a bundle of it. */
async function bundle(outDir) {
  let esbuild;
  try {
    esbuild = await import(pathToFileURL(createRequire(import.meta.url).resolve("esbuild")).href);
  } catch {
    // Without esbuild (a development dependency, as typescript) the modules stay as tsc wrote them: correct, larger.
    process.stderr.write("ferry build: esbuild is not installed; modules left unbundled\n");
    return;
  }
  for (const file of BUNDLED) {
    await esbuild.build({
      entryPoints: [join(src, file)],
      outfile: join(outDir, file.replace(/\.ts$/, ".js")),
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      sourcemap: true,
      logLevel: "warning",
    });
  }
}
