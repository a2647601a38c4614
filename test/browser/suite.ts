import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect, vi } from "vitest";
import { adminEnv } from "../helpers/management.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { ensureConsoleBuilt, launchBrowser, openPage, type PageWatch } from "./harness.js";

/**
 * The shared setup of a console browser test file: a real Ferry (with the admin customer) and a real receiver, one
 * Debian Chromium for the file, a fresh context (own session storage) per test. Every test ends with no console
 * error; tests also check `watch.failedCalls`. The bindings below are live: a test file reads them after its hooks ran.
 */
export let server: TestServer;
export let receiver: Receiver;
export let browser: Browser;
export let watch: PageWatch | undefined;
export const json = { "Content-Type": "application/json" };

export function useConsoleSuite(): void {
  // A shared machine: a browser step waits on events, and a slow one must not fail on the default 30 s.
  vi.setConfig({ testTimeout: 60_000 });

  beforeAll(async () => {
    ensureConsoleBuilt();
    [server, receiver, browser] = await Promise.all([startTestServer({ env: adminEnv }), Receiver.start(), launchBrowser()]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await receiver?.close();
  });

  afterEach(async () => {
    const w = watch;
    watch = undefined;
    await w?.context.close();
    expect(w?.problems ?? []).toEqual([]);
  });
}

/** A page in a fresh browser context (laptop-sized unless told), watched for console errors and failed calls. */
export async function fresh(opts: Parameters<typeof openPage>[1] = {}): Promise<Page> {
  watch = await openPage(browser, opts);
  return watch.page;
}

/** Forgets the failed calls (and the browser's console line about each) that a test made on purpose. */
export function forgive(): void {
  watch!.failedCalls.length = 0;
  watch!.problems = watch!.problems.filter((p) => !p.includes("Failed to load resource"));
}

/** Waits until `check` holds, polling the API (bounded). */
export async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}
