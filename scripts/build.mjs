#!/usr/bin/env node
// `npm run build` (and `prepare`, so `npm ci` builds): runs whichever of the build steps this checkout defines, in
// order: build:server (src/ → dist/), then build:console (the console app) when it exists.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const { scripts = {} } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
for (const step of ["build:server", "build:console"]) {
  if (!(step in scripts)) continue;
  const result = spawnSync(npm, ["run", "--silent", step], { cwd: root, stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
