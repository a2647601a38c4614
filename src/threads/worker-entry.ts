/**
 * Where a worker thread starts, for the `worker.ts` next to `caller` (the `import.meta.url` of the module that
 * starts it: the store thread's proxy, the egress thread's client). Compiled (dist/, what `npm start` and `ferry`
 * run), that is `worker.js` beside the caller. From source (tsx, vitest), a worker does not inherit its parent's
 * loader, and `--import tsx` in a worker's `execArgv` does not register it on Node 20, so the thread starts in
 * worker-source-entry.mjs, which loads `worker.ts` (passed as `workerData.entry`) through tsx's API.
 */
export function workerEntry(caller: string): { url: URL; data: { entry?: string } } {
  if (!caller.endsWith(".ts")) return { url: new URL("./worker.js", caller), data: {} };
  return {
    url: new URL("./worker-source-entry.mjs", import.meta.url),
    data: { entry: new URL("./worker.ts", caller).href },
  };
}
