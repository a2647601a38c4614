#!/usr/bin/env node
// The `ferry` command and `npm start`: runs the compiled JavaScript in dist/, no TypeScript transpiler at run time.
// A checkout whose dist/ is missing or older than src/ is built first (scripts/build-server.mjs, a few seconds);
// docs/operations.md.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { distIsStale } from "../scripts/dist-freshness.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

if (distIsStale(root)) {
  process.stderr.write("ferry: dist/ is missing or older than src/; building it (npm run build:server)\n");
  // Build output goes to stderr: stdout carries the service's log lines and printed credentials.
  const built = spawnSync(process.execPath, [join(root, "scripts", "build-server.mjs")], {
    cwd: root,
    stdio: ["ignore", 2, 2],
  });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
await import(pathToFileURL(join(root, "dist", "main.js")).href);
