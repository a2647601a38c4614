/** Polls `check` until it returns a value other than undefined/false (bounded; tests wait for events, not time). */
export async function waitUntil<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  opts: { timeoutMs?: number; everyMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${opts.what ?? "a condition"}`);
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 20));
  }
}
