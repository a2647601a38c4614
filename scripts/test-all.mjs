#!/usr/bin/env node
// `npm test`: runs each npm script named on the command line, in order, every one of them even when an earlier one
// failed (a chain of `&&` stops at the first failure and hides whether the rest pass), then prints what passed and
// exits 1 if any part failed (README.md, "Tests").
import { spawnSync } from "node:child_process";

const parts = process.argv.slice(2);
if (parts.length === 0) {
  process.stderr.write("usage: node scripts/test-all.mjs <npm script> [<npm script> ...]\n");
  process.exit(2);
}

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const results = [];
for (const part of parts) {
  const started = Date.now();
  process.stdout.write(`\n=== npm test: ${part} ===\n`);
  const run = spawnSync(npm, ["run", part], { stdio: "inherit" });
  const ok = run.status === 0;
  const why = ok ? "" : run.error ? ` (${run.error.message})` : run.signal ? ` (${run.signal})` : ` (exit ${run.status})`;
  results.push({ part, ok, line: `${ok ? "ok    " : "FAILED"} ${part}${why} in ${Math.round((Date.now() - started) / 1000)} s` });
}

const failed = results.filter((r) => !r.ok);
process.stdout.write(`\n=== npm test: ${parts.length - failed.length} of ${parts.length} parts passed ===\n`);
for (const r of results) process.stdout.write(`${r.line}\n`);
process.exit(failed.length === 0 ? 0 : 1);
