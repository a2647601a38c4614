import { execFileSync } from "node:child_process";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { consoleAssetsBuilt } from "../../src/http/routes/console.js";
import { chromiumExecutable } from "../helpers/chromium.js";

/** The flags this machine needs (docs/console.md): no sandbox as root, and no background calls to Google. */
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Builds the console once if this checkout has not (npm ci does it through `prepare`). */
export function ensureConsoleBuilt(): void {
  if (consoleAssetsBuilt()) return;
  execFileSync("npm", ["run", "build:console"], { stdio: "inherit" });
}

/** Chromium from npm (@sparticuz/chromium), or the binary FERRY_CHROMIUM names (test/helpers/chromium.ts). */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: await chromiumExecutable(), args: FLAGS, headless: true });
}

/** What went wrong on a page: console errors, uncaught exceptions and failed API calls (4xx/5xx). */
export interface PageWatch {
  page: Page;
  context: BrowserContext;
  problems: string[];
  /** API answers that were not 2xx/3xx, e.g. `GET /v2/logs 400`. */
  failedCalls: string[];
}

/** A fresh context per test (its own session storage), laptop-sized unless told otherwise. */
export async function openPage(
  browser: Browser,
  opts: { width?: number; height?: number; colorScheme?: "light" | "dark" } = {},
): Promise<PageWatch> {
  const context = await browser.newContext({
    viewport: { width: opts.width ?? 1366, height: opts.height ?? 800 },
    colorScheme: opts.colorScheme ?? "light",
    timezoneId: "Europe/Berlin",
    locale: "en-GB",
  });
  // A step that cannot happen fails with the locator it waited for, well before the test's own timeout.
  context.setDefaultTimeout(20_000);
  const page = await context.newPage();
  const watch: PageWatch = { page, context, problems: [], failedCalls: [] };
  page.on("console", (m) => {
    if (m.type() === "error") watch.problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => watch.problems.push(`page error: ${e.message}`));
  page.on("response", (r) => {
    const url = new URL(r.url());
    if (r.status() >= 400) watch.failedCalls.push(`${r.request().method()} ${url.pathname} ${r.status()}`);
  });
  return watch;
}

export async function signInWithToken(page: Page, base: string, token: string): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByRole("tab", { name: "Messaging token" }).click();
  await page.getByLabel("Token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Console" }).waitFor();
}

export async function signInWithEmail(page: Page, base: string, email: string, key: string): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByRole("tab", { name: "E-mail and API key" }).click();
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** Clicks a navigation item by its visible name. */
export async function go(page: Page, name: string): Promise<void> {
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name, exact: true }).click();
}
