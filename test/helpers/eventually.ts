import { vi } from "vitest";

/**
 * Re-runs `check` until it stops throwing (bounded by `timeoutMs`), for state that settles just after an event the
 * test already waited for, e.g. the outcome a delivery writes after the receiver saw the request.
 */
export function eventually<T>(check: () => Promise<T> | T, timeoutMs = 5000, everyMs = 20): Promise<T> {
  return vi.waitFor(check, { timeout: timeoutMs, interval: everyMs });
}
