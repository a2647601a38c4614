import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // A Ferry server cannot boot on PostgreSQL until the capability store methods are ported there (issue 9,
    // phase 2: src/store/postgres/index.ts lists what is missing); these e2e files come back with that port.
    exclude: ["**/node_modules/**", "test/e2e/postgres-*.test.ts"],
    // One throwaway PostgreSQL cluster per run (a fresh database per test), unless FERRY_TEST_PG_URL names one.
    globalSetup: process.env.FERRY_TEST_PG_URL ? [] : ["test/helpers/postgres-global-setup.ts"],
    // Every e2e file starts real servers and receivers; two cores run two files at a time at most.
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
