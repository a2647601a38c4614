import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { configDefaults, loadConfig } from "../../src/config.js";
import { errorCatalog } from "../../src/errors.js";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

describe("docs stay true", () => {
  it("documents every configuration variable with its default", () => {
    const doc = read("docs/configuration.md");
    for (const [name, fallback] of Object.entries(configDefaults)) {
      expect(doc, name).toContain(`| \`${name}\` | ${fallback.startsWith("(") ? fallback : `\`${fallback}\``} |`);
    }
    const source = read("src/config.ts");
    const readVariables = [...source.matchAll(/env, "([A-Z_0-9]+)"/g)].map((m) => m[1]);
    // FERRY_PLAN_<PLAN>_<FIELD> is a family read by prefix, not one variable.
    const documented = Object.keys(configDefaults).filter((k) => !k.includes("<"));
    expect(new Set(readVariables)).toEqual(new Set(documented));
  });

  it("the documented defaults are the ones loadConfig applies", () => {
    const c = loadConfig({});
    expect(String(c.port)).toBe(configDefaults.FERRY_PORT);
    expect(c.databaseUrl).toBe(configDefaults.DATABASE_URL);
    expect(String(c.leaseMs)).toBe(configDefaults.FERRY_LEASE_MS);
    expect(String(c.logRetentionMs)).toBe(configDefaults.FERRY_LOG_RETENTION_MS);
    expect(String(c.dedupWindowMs)).toBe(configDefaults.FERRY_DEDUP_WINDOW_MS);
  });

  it("documents every error code with its status", () => {
    const doc = read("docs/errors.md");
    for (const [code, status] of Object.entries(errorCatalog))
      expect(doc, code).toContain(`| \`${code}\` | ${status} |`);
  });
});
