import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import semver from "semver";
import { describe, expect, it } from "vitest";

/**
 * `npm ci` must not warn EBADENGINE on the Node Ferry runs on (README.md, "What you need"): every package the lock
 * file installs declares engines that include this Node. content-disposition@3 and cookie@2 (Node >= 22) came in
 * through Fastify's plugins; package.json's "overrides" pin 2.0.1 and 1.1.1, whose engines include Node 20.
 */
const lock = JSON.parse(readFileSync(fileURLToPath(new URL("../../package-lock.json", import.meta.url)), "utf8")) as {
  packages: Record<string, { version?: string; engines?: Record<string, string> | string[] }>;
};

describe("package-lock.json", () => {
  it(`installs nothing whose engines exclude this Node (${process.version})`, () => {
    const refused = Object.entries(lock.packages)
      .filter(([path]) => path !== "")
      .flatMap(([path, pkg]) => {
        const node = pkg.engines && !Array.isArray(pkg.engines) ? pkg.engines.node : undefined;
        return node && !semver.satisfies(process.version, node) ? [`${path}@${pkg.version}: node ${node}`] : [];
      });
    expect(refused).toEqual([]);
  });
});
