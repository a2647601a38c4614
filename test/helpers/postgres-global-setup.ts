import type { TestProject } from "vitest/node";
import { findPgBin, PG_MISSING, type PgCluster, startCluster } from "./postgres.js";

/**
 * vitest globalSetup (vitest.config.ts adds it unless FERRY_TEST_PG_URL names a cluster): one throwaway PostgreSQL
 * cluster for the whole run; tests create a fresh database on it each. Without binaries the PostgreSQL tests are
 * skipped with a warning, except under CI=true, where this fails the run.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (!findPgBin()) {
    if (process.env.CI === "true") throw new Error(`${PG_MISSING}: CI requires them`);
    console.warn(`${PG_MISSING}: PostgreSQL tests will be skipped`);
    project.provide("ferryPgAdminUrl", "");
    return async () => {};
  }
  const cluster: PgCluster = await startCluster();
  project.provide("ferryPgAdminUrl", cluster.adminUrl);
  // An interrupted run must not leave a postgres server behind.
  const cleanUp = () => cluster.destroySync();
  process.once("exit", cleanUp);
  return async () => {
    process.removeListener("exit", cleanUp);
    await cluster.destroy();
  };
}
