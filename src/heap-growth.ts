import { setFlagsFromString } from "node:v8";

/**
 * How far V8 lets the old generation grow past what the last full collection left alive before it collects again,
 * in percent (V8's `--heap-growing-percent`: a factor of 1 + p/100).
 *
 * Left to itself, V8 picks the factor from the heap's limit, and on a machine with more than about 8 GiB of memory
 * (a heap limit of 2 GiB or more) that is up to 4×: under publish load the server's old generation fills with
 * requests that outlived two scavenges while they waited for their commit, and was let grow from ~30 MiB alive to
 * ~100–120 MiB before a full collection. 2× collects the same garbage sooner. Measured with the compiled server, 3×5 s
 * of P4's publishes (docs/threading.md "Memory"): peak RSS (VmHWM) 283 MiB with V8's choice, 215 with 100, 200 with
 * 50; the main thread's full collections took 54, 131 and 253 ms of those ~15 s (its scavenges ~1 s in each), so 100
 * halves 50's cost for 15 MiB.
 */
export const HEAP_GROWING_PERCENT = 100;

/**
 * The flag to set, or undefined when the operator chose the growth on the command line (`node
 * --heap-growing-percent=… bin/ferry.mjs serve`; Node refuses it in NODE_OPTIONS): theirs wins. A heap size of their
 * own (`--max-old-space-size`) keeps this growth, which applies below any limit.
 */
export function heapGrowthFlag(execArgv: readonly string[]): string | undefined {
  const chosen = execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg));
  return chosen ? undefined : `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

/**
 * Sets the growth for this process: V8 reads the flag at each full collection, so it applies from the next one on,
 * on every thread (flags are per process; the egress and store threads start later). Called by the serve commands
 * (src/main.ts) before the server starts.
 */
export function limitHeapGrowth(): void {
  const flag = heapGrowthFlag(process.execArgv);
  if (flag) setFlagsFromString(flag);
}
