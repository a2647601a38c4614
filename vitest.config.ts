import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // test/soak runs alone, last (vitest.soak.config.ts).
    exclude: ["**/node_modules/**", "test/soak/**"],
    // dist/ built once (spawned processes run the compiled code); one throwaway PostgreSQL cluster per run (a fresh
    // database per test), unless FERRY_TEST_PG_URL names one.
    globalSetup: [
      "test/helpers/build-global-setup.ts",
      ...(process.env.FERRY_TEST_PG_URL ? [] : ["test/helpers/postgres-global-setup.ts"]),
    ],
    // A file fails when it leaves a server, a receiver, a process or a loop running (test/helpers/leaks.ts).
    setupFiles: ["test/helpers/leak-check.ts"],
    // Every e2e file starts real servers and receivers; two cores run two files at a time at most.
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
