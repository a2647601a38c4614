import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runFerry } from "../helpers/process.js";

/**
 * `ferry` help and version, run as the real compiled CLI (src/cli/help.ts): exit 0 and the usage on stdout for every
 * command, a bare `ferry` prints the usage instead of starting a server. DATABASE_URL points at a directory that is
 * removed afterwards, so a command that wrongly started would not touch ./data.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
const dir = mkdtempSync(join(tmpdir(), "ferry-cli-help-"));
// A command that wrongly started a server would listen on a free port and never exit: runFerry kills it at the
// time-out and its exit code is null, not 0.
const env = { DATABASE_URL: `sqlite:${join(dir, "ferry.db")}`, FERRY_PORT: "0", FERRY_HOST: "127.0.0.1" };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const help = (args: string[]) => runFerry(args, env, 15_000);

describe("ferry help and version", () => {
  it.each([[[]], [["--help"]], [["-h"]], [["help"]]])("ferry %j prints the overview on stdout and exits 0", async (args) => {
    const res = await help(args);
    expect(res.code).toBe(0);
    expect(res.stderr).toBe("");
    expect(res.stdout).toMatch(/^Usage: ferry <command> \[options\]$/m);
    for (const command of ["serve", "dev", "customers create", "help", "version"]) {
      expect(res.stdout).toMatch(new RegExp(`^  ${command} `, "m"));
    }
  });

  it.each([
    [["serve", "--help"], "Usage: ferry serve"],
    [["serve", "-h"], "Usage: ferry serve"],
    [["help", "serve"], "Usage: ferry serve"],
    [["dev", "--help"], "Usage: ferry dev [--port <port>]"],
    [["dev", "--port", "9000", "--help"], "Usage: ferry dev [--port <port>]"],
    [["help", "dev"], "Usage: ferry dev [--port <port>]"],
    [["customers", "--help"], "Usage: ferry customers create --email <e-mail>"],
    [["customers", "create", "--help"], "Usage: ferry customers create --email <e-mail>"],
    [["help", "customers"], "Usage: ferry customers create --email <e-mail>"],
    [["version", "--help"], "Usage: ferry version"],
  ])("ferry %j prints that command's usage on stdout and exits 0", async (args, first) => {
    const res = await help(args);
    expect(res.code).toBe(0);
    expect(res.stderr).toBe("");
    expect(res.stdout.split("\n")[0]).toContain(first);
  });

  it.each([[["--version"]], [["-v"]], [["version"]]])("ferry %j prints the version and exits 0", async (args) => {
    const res = await help(args);
    expect(res).toEqual({ code: 0, stdout: `ferry ${version}\n`, stderr: "" });
  });

  it("an unknown command exits 2 with the usage on stderr", async () => {
    const res = await help(["frobnicate"]);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe("");
    expect(res.stderr).toContain('ferry: unknown command "frobnicate"');
    expect(res.stderr).toContain("Usage: ferry <command> [options]");
  });
});
