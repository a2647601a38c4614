import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

/** scripts/test-all.mjs, the runner behind `npm test`, run for real on a throwaway package's scripts. */
const root = fileURLToPath(new URL("../..", import.meta.url));
const runner = join(root, "scripts", "test-all.mjs");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function packageWith(scripts: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "ferry-test-all-"));
  dirs.push(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "t", version: "1.0.0", private: true, scripts }));
  return dir;
}

const run = (dir: string, parts: string[]) =>
  spawnSync(process.execPath, [runner, ...parts], { cwd: dir, encoding: "utf8", timeout: 60_000 });

describe("npm test (scripts/test-all.mjs)", () => {
  it("runs every part even when an earlier one fails, names the failure and exits non-zero", () => {
    const dir = packageWith({
      first: 'node -e "process.exit(3)"',
      second: "node -e \"require('fs').writeFileSync('second-ran', '')\"",
    });
    const result = run(dir, ["first", "second"]);
    expect(existsSync(join(dir, "second-ran")), "the part after the failed one ran").toBe(true);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain("1 of 2 parts passed");
    expect(result.stdout).toMatch(/FAILED first \(exit 3\)/);
    expect(result.stdout).toMatch(/ok +second/);
  });

  it("exits 0 when every part passed", () => {
    const dir = packageWith({ a: 'node -e ""', b: 'node -e ""' });
    const result = run(dir, ["a", "b"]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("2 of 2 parts passed");
  });

  it("is what `npm test` runs, with every part of the suite: types, lint, unit/e2e/browser, PostgreSQL, soak", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.test).toBe("node scripts/test-all.mjs typecheck lint test:unit test:pg test:soak");
  });
});
