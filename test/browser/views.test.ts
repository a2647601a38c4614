import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { adminEnv } from "../helpers/management.js";
import { ensureConsoleBuilt, go, launchBrowser, openPage, type PageWatch, signInWithToken } from "./harness.js";

/**
 * Every view opens without a console error or a failing API call, in light and dark mode; each is screenshotted.
 * `npm run console:screenshots` runs this file with FERRY_SCREENSHOTS_DIR=docs/console (the pictures in
 * docs/console.md); otherwise they go to a temporary folder.
 */
const shots = process.env.FERRY_SCREENSHOTS_DIR ?? join(tmpdir(), "ferry-console-shots");

const VIEWS: [string, string][] = [
  ["Overview", "overview"],
  ["Messages", "messages"],
  ["Dead letter queue", "dlq"],
  ["Schedules", "schedules"],
  ["Queues", "queues"],
  ["URL groups", "url-groups"],
  ["Flow control", "flow-control"],
  ["Publish", "publish"],
  ["Settings", "settings"],
];

const DARK_SHOTS = new Set(["overview", "messages", "dlq"]);

let server: TestServer;
let receiver: Receiver;
let browser: Browser;
let watch: PageWatch | undefined;

beforeAll(async () => {
  ensureConsoleBuilt();
  mkdirSync(shots, { recursive: true });
  [server, receiver, browser] = await Promise.all([
    startTestServer({ env: adminEnv }),
    Receiver.start(),
    launchBrowser(),
  ]);
  // Something to look at: delivered, failed (DLQ), scheduled, queued, grouped and flow-controlled messages.
  receiver.setDefault((url) => (url.includes("fail") ? { status: 500, body: '{"error":"database down"}' } : { status: 200, body: "ok" }));
  const h = { "Content-Type": "application/json" };
  await server.call("POST", "/v2/queues", { body: JSON.stringify({ queueName: "emails", parallelism: 2 }), headers: h });
  await server.call("POST", `/v2/topics/orders/endpoints`, {
    body: JSON.stringify({ endpoints: [{ name: "billing", url: receiver.url("/billing") }, { url: receiver.url("/audit") }] }),
    headers: h,
  });
  for (let i = 0; i < 6; i++) {
    await server.call("POST", `/v2/publish/${receiver.url(`/ok/${i}`)}`, {
      body: JSON.stringify({ order: i }),
      headers: { ...h, "Svc-Label": i % 2 ? "billing" : "signup", "Svc-Flow-Control-Key": "tenant-42", "Svc-Flow-Control-Value": "parallelism=2, rate=50, period=1m" },
    });
  }
  await server.call("POST", `/v2/publish/${receiver.url("/fail")}`, { body: '{"id":7}', headers: { ...h, "Svc-Retries": "0" } });
  await server.call("POST", `/v2/publish/${receiver.url("/later")}`, { body: "{}", headers: { ...h, "Svc-Delay": "1h" } });
  await server.call("POST", "/v2/publish/orders", { body: '{"total": 12}', headers: h });
  await server.call("POST", `/v2/schedules/${receiver.url("/nightly")}`, { body: "{}", headers: { ...h, "Svc-Cron": "0 3 * * *" } });
  await receiver.waitForCount(9);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await receiver?.close();
});

afterEach(async () => {
  await watch?.context.close();
  watch = undefined;
});

describe("every view", () => {
  for (const scheme of ["light", "dark"] as const) {
    it(`opens without errors (${scheme})`, async () => {
      watch = await openPage(browser, { colorScheme: scheme });
      const { page } = watch;
      await page.goto(`${server.url}/console/`);
      if (scheme === "light") await page.screenshot({ path: join(shots, "sign-in.png") });
      await signInWithToken(page, server.url, server.token);
      for (const [label, slug] of VIEWS) {
        await go(page, label);
        await page.getByRole("heading", { level: 1, name: label === "Dead letter queue" ? "Dead letter queue" : label }).waitFor();
        await page.waitForLoadState("networkidle");
        await page.locator(".loading").first().waitFor({ state: "detached" }).catch(() => undefined);
        // Dark mode: three views are enough to show it (the pictures live in the repository).
        if (scheme === "light" || DARK_SHOTS.has(slug)) {
          await page.screenshot({ path: join(shots, `${slug}${scheme === "dark" ? "-dark" : ""}.png`), fullPage: true });
        }
      }
      if (scheme === "light") {
        // The pages behind the lists: a message with its timeline, a DLQ entry, the schedule form, a laptop width.
        await go(page, "Messages");
        await page.locator("tr", { hasText: "FAILED" }).locator("a.id-link").click();
        await page.getByTestId("timeline").waitFor();
        await page.waitForLoadState("networkidle");
        await page.screenshot({ path: join(shots, "message.png"), fullPage: true });
        await go(page, "Dead letter queue");
        await page.locator(`[data-dlq-id] a[href^="#/dlq/"]`).first().click(); // the entry, not its message
        await page.getByRole("dialog").getByRole("button", { name: "Retry" }).waitFor();
        await page.screenshot({ path: join(shots, "dlq-entry.png") });
        await page.keyboard.press("Escape");
        await go(page, "Schedules");
        await page.getByRole("button", { name: "New schedule" }).click();
        await page.getByLabel("Cron", { exact: true }).fill("30 8 * * 1-5");
        await page.getByTestId("cron-preview").waitFor();
        await page.screenshot({ path: join(shots, "schedule-new.png") });
        await page.keyboard.press("Escape");
        await page.setViewportSize({ width: 1024, height: 700 });
        await go(page, "Overview");
        await page.waitForLoadState("networkidle");
        await page.screenshot({ path: join(shots, "overview-laptop.png") });
      }
      expect(watch.problems).toEqual([]);
      expect(watch.failedCalls).toEqual([]);
    }, 90_000);
  }
});

describe("a list with nothing in it, or that cannot load", () => {
  const EMPTY: [string, string][] = [
    ["Messages", "No messages here yet"],
    ["Dead letter queue", "The dead letter queue is empty"],
    ["Schedules", "No schedules yet"],
    ["Queues", "No queues yet"],
    ["URL groups", "No URL groups yet"],
    ["Flow control", "No flow-control keys"],
    ["Workflow runs", "No workflow runs yet"],
    ["Workflow DLQ", "The workflow DLQ is empty"],
  ];

  it("says what to do on an account with nothing yet, and offers to try again when its API call fails", async () => {
    const fresh = await startTestServer();
    let stopped = false;
    try {
      watch = await openPage(browser);
      const { page } = watch;
      await signInWithToken(page, fresh.url, fresh.token);
      for (const [label, title] of EMPTY) {
        await go(page, label);
        await page.locator(".empty-title", { hasText: title }).waitFor();
        expect(await page.locator(".table-wrap").count(), label).toBe(0);
      }
      await go(page, "Queues");
      await page.locator(".empty-title", { hasText: "No queues yet" }).waitFor();
      await page.locator(".loading").waitFor({ state: "detached" });
      await page.screenshot({ path: join(shots, "queues-empty.png") });

      await fresh.stop(); // every API call fails from now on
      stopped = true;
      await go(page, "URL groups");
      const alert = page.getByRole("alert").filter({ hasText: "Something went wrong." });
      await alert.getByRole("button", { name: "Try again" }).waitFor();
      expect(await page.locator(".empty-title").count()).toBe(0);
      await page.screenshot({ path: join(shots, "url-groups-error.png") });
    } finally {
      if (!stopped) await fresh.stop();
    }
  }, 60_000);
});
