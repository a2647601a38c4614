import { afterAll } from "vitest";
import { leftRunning } from "./leaks.js";

/**
 * Setup file of every vitest config: after a file's last hook, nothing it started may still run (servers,
 * receivers, destinations, child processes, loops: test/helpers/leaks.ts). Registered before the file's own hooks,
 * so it runs after them (vitest runs after-hooks in reverse order).
 */
afterAll(() => {
  const left = leftRunning();
  if (left.length > 0) throw new Error(`left running after the file's tests:\n  ${left.join("\n  ")}`);
});
