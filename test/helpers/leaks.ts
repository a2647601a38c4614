import { expect } from "vitest";

/**
 * What tests start and must stop: in-process servers, receivers, destinations, child processes and loops. The
 * helpers that start them call `track`; test/helpers/leak-check.ts (a setup file of every vitest config) fails
 * the file when one of them still runs after its last hook. A leak otherwise shows up later as a port, a timer or a
 * process that slows or breaks an unrelated file.
 */
interface Tracked {
  what: string;
  isRunning: () => boolean;
}

const tracked = new Set<Tracked>();

/** Registers something started now; `isRunning` tells whether it still runs (checked once the file is over). */
export function track(what: string, isRunning: () => boolean): void {
  const test = expect.getState().currentTestName;
  tracked.add({ what: `${what}, started ${test ? `in "${test}"` : "in a hook"}`, isRunning });
}

/** What still runs of everything tracked so far; forgets them all (the next file starts clean). */
export function leftRunning(): string[] {
  const left = [...tracked].filter((t) => t.isRunning()).map((t) => t.what);
  tracked.clear();
  return left;
}
