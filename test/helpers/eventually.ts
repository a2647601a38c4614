/**
 * Re-runs `check` until it stops throwing (or `timeoutMs` passes), for state that settles just after an event the
 * test already waited for, e.g. the outcome a delivery writes after the receiver saw the request. Bounded.
 */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 5000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }
}
