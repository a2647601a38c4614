import { defineConfig } from "vitest/config";

/**
 * `npm run test:soak`: the multi-node soak test (test/soak/), alone on the machine after the other suites, since
 * it loads both cores for a minute or two. It starts its own PostgreSQL cluster; the global setup only builds the
 * dist/ its spawned nodes run.
 */
export default defineConfig({
  test: {
    include: ["test/soak/**/*.test.ts"],
    globalSetup: ["test/helpers/build-global-setup.ts"],
    setupFiles: ["test/helpers/leak-check.ts"],
    pool: "forks",
    maxWorkers: 1,
    testTimeout: 420_000,
    hookTimeout: 120_000,
  },
});
