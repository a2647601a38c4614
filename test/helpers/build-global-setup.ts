import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * vitest globalSetup: builds dist/ once before the run when it is missing or stale, so the tests that spawn
 * `ferry` as a process (process.ts) run the compiled code, as `npm start` does, without each building it.
 */
export default function setup(): void {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const result = spawnSync(process.execPath, ["scripts/build-server.mjs", "--if-stale"], {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (result.status !== 0) throw new Error("building dist/ failed (npm run build:server)");
}
