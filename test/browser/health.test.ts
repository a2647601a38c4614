import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { freePort } from "../helpers/postgres.js";
import { startTestServer } from "../helpers/server.js";
import { go, signInWithToken } from "./harness.js";
import { fresh, json, receiver, server, until, useConsoleSuite, watch } from "./suite.js";

/**
 * Health at a glance, schedules and queues (issue 28, items 4 and 5) in a real Chromium against a real Ferry: the
 * overview's success rate, latency and failing destinations, the getting-started panel of an empty account (its curl
 * run for real), a schedule's words, edit and run now, a queue's throughput and the links to their messages; at
 * 1440 and 1024 px, and with the read-only token. The pictures go to FERRY_SCREENSHOTS_DIR (docs/console).
 */
useConsoleSuite();
const shots = process.env.FERRY_SCREENSHOTS_DIR ?? join(tmpdir(), "ferry-console-shots");
mkdirSync(shots, { recursive: true });
const run = promisify(execFile);

/** The page scrolls sideways when its content is wider than the window: 1024 px is supported (docs/console.md). */
const scrollsSideways = async (page: Page): Promise<boolean> =>
  (await page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth")) === true;

async function settle(page: Page): Promise<void> {
  await page.waitForLoadState("networkidle");
  await page.locator(".loading").first().waitFor({ state: "detached" }).catch(() => undefined);
}

describe("overview", () => {
  it("shows the success rate, publish→delivery latency and the destinations ranked by failures, at 1440 and 1024 px", async () => {
    receiver.setDefault((url) =>
      url.startsWith("/h-fail") ? { status: 503, body: '{"error":"database down","retry":"later"}' } : { status: 200, body: "ok" },
    );
    const refused = `http://127.0.0.1:${await freePort()}/h-refused`;
    for (let i = 0; i < 6; i++) await server.call("POST", `/v2/publish/${receiver.url(`/h-ok/${i}`)}`, { body: "{}", headers: json });
    for (let i = 0; i < 2; i++) await server.call("POST", `/v2/publish/${receiver.url("/h-fail")}`, { body: "{}", headers: { "Svc-Retries": "0" } });
    await server.call("POST", `/v2/publish/${refused}`, { body: "{}", headers: { "Svc-Retries": "0" } });
    await until(async () => (await server.call("GET", "/v2/account/health")).json.failed === 3, "three failures");
    const health = (await server.call("GET", "/v2/account/health")).json;

    const page = await fresh();
    await page.setViewportSize({ width: 1440, height: 900 });
    await signInWithToken(page, server.url, server.token);
    const rows = page.getByTestId("destinations").locator("tbody tr");
    await rows.nth(1).waitFor();
    const rate = `${Math.floor(health.successRate * 1000) / 10}`;
    await expect(page.getByTestId("success-rate").locator(".stat-value").textContent()).resolves.toContain(rate);
    await expect(page.getByTestId("success-rate").textContent()).resolves.toContain(`${health.delivered} delivered · 3 failed`);
    await expect(page.getByTestId("latency").textContent()).resolves.toMatch(/p50.*p99 \d/);
    await expect(rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-destination")))).resolves.toEqual([
      receiver.url("/h-fail"),
      refused,
    ]);
    const first = rows.nth(0);
    await expect(first.textContent()).resolves.toContain("destination answered 503");
    await expect(first.locator(".body-start").textContent()).resolves.toBe('{"error":"database down","retry":"later"}');
    await expect(first.locator(".badge").textContent()).resolves.toBe("503");
    await expect(rows.nth(1).textContent()).resolves.toMatch(/ECONNREFUSED|refused/i);
    // Its message opens from the row.
    const link = await first.getByRole("link", { name: "Its message" }).getAttribute("href");
    expect(link).toBe(`#/messages/${health.destinations[0].lastError.messageId}`);
    // The plan's limits are in Settings only; no getting-started panel on an account with traffic.
    expect(await page.getByRole("heading", { name: "Plan limits" }).count()).toBe(0);
    expect(await page.getByTestId("getting-started").count()).toBe(0);
    await settle(page);
    await page.screenshot({ path: join(shots, "overview-health.png"), fullPage: true });

    // Another period asks the API for that period.
    const asked = page.waitForRequest((r) => r.url().includes("/v2/account/health?period=7d"));
    await page.getByRole("group", { name: "Period" }).getByRole("button", { name: "7d" }).click();
    await asked;
    await page.getByRole("heading", { name: "Destinations by failures · 7d" }).waitFor();

    await page.setViewportSize({ width: 1024, height: 768 });
    await settle(page);
    // The usage chart follows its box through a ResizeObserver, which runs a frame after the resize: wait for it.
    await page
      .waitForFunction("document.documentElement.scrollWidth <= document.documentElement.clientWidth", null, { timeout: 5_000 })
      .catch(() => undefined);
    expect(await scrollsSideways(page)).toBe(false);
    const box = await first.locator("td").last().boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(1024);
    await page.screenshot({ path: join(shots, "overview-health-laptop.png"), fullPage: true });

    await go(page, "Settings");
    await page.getByRole("heading", { name: "Plan limits" }).waitFor();
    expect(watch!.failedCalls).toEqual([]);
  });

  it("gives an empty account a getting-started curl that publishes for real; it goes once the account has traffic", async () => {
    const empty = await startTestServer();
    try {
      const page = await fresh();
      await page.setViewportSize({ width: 1440, height: 900 });
      await signInWithToken(page, empty.url, empty.token);
      const panel = page.getByTestId("getting-started");
      await panel.waitFor();
      await settle(page);
      await page.screenshot({ path: join(shots, "overview-empty.png"), fullPage: true });

      await panel.getByLabel("Your endpoint").fill(receiver.url("/first-message"));
      const command = (await panel.getByTestId("first-curl").textContent())!;
      expect(command).toContain(`${empty.url}/v2/publish/${receiver.url("/first-message")}`);
      expect(command).toContain('"Authorization: Bearer $FERRY_TOKEN"');
      expect(command).not.toContain(empty.token);
      // The command as shown, run by a real shell and a real curl against this Ferry.
      const out = await run("sh", ["-c", `${command} --silent --show-error --fail`], {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", FERRY_TOKEN: empty.token },
        timeout: 15_000,
      });
      expect(JSON.parse(out.stdout).messageId).toMatch(/^msg_/);
      const got = await receiver.waitForPath("/first-message");
      expect(got.text).toBe('{"hello":"world"}');
      expect(got.headers["content-type"]).toBe("application/json");

      await panel.waitFor({ state: "detached", timeout: 15_000 });
      expect(watch!.failedCalls).toEqual([]);
    } finally {
      await empty.stop();
    }
  });
});

describe("schedules", () => {
  it("says the cron in words, in one time format; edits, runs now and links to its messages, at 1440 and 1024 px", async () => {
    const created = await server.call("POST", `/v2/schedules/${receiver.url("/weekly")}`, {
      body: '{"report":"weekly"}',
      headers: { ...json, "Svc-Cron": "0 9 * * 1", "Svc-Forward-X-Report": "weekly", "Svc-Retries": "2", "Svc-Label": "reports" },
    });
    const id = created.json.scheduleId as string;
    const page = await fresh();
    await page.setViewportSize({ width: 1440, height: 900 });
    await signInWithToken(page, server.url, server.token);
    await go(page, "Schedules");
    const row = page.locator(`tr[data-schedule-id="${id}"]`);
    await row.getByTestId("cron-words").waitFor();
    await expect(row.getByTestId("cron-words").textContent()).resolves.toBe("at 09:00 on Monday (UTC)");
    await expect(row.getByRole("link", { name: "Its messages" }).getAttribute("href")).resolves.toBe(`#/messages?schedule=${id}`);
    // Every time of the table in the one format: weekday, day, month and minute, then how far it is.
    const times = await page.locator("[data-testid=schedules-table] time.when").evaluateAll((ts) => ts.map((t) => t.textContent ?? ""));
    expect(times.length).toBeGreaterThan(0);
    for (const t of times) expect(t).toMatch(/^[A-Z][a-z]{2},? \d{1,2} [A-Z][a-z]{2,3},? \d\d:\d\d(in|\d)/);

    // Run now: one message published at once; the schedule's next run stays.
    const before = (await server.call("GET", `/v2/schedules/${id}`)).json;
    await row.getByRole("button", { name: "Run now" }).click();
    const got = await receiver.waitForPath("/weekly");
    expect(got.text).toBe('{"report":"weekly"}');
    expect(got.headers["x-report"]).toBe("weekly");
    await page.getByText(`Published ${id}'s message now`).waitFor();
    expect((await server.call("GET", `/v2/schedules/${id}`)).json.nextScheduleTime).toBe(before.nextScheduleTime);

    // Edit: the form comes filled in; saving overwrites the same schedule.
    await row.getByRole("button", { name: "Edit" }).click();
    const dialog = page.getByRole("dialog");
    await expect(dialog.getByLabel("Destination").inputValue()).resolves.toBe(receiver.url("/weekly"));
    await expect(dialog.getByLabel("Cron").inputValue()).resolves.toBe("0 9 * * 1");
    await expect(dialog.getByLabel("Retries").inputValue()).resolves.toBe("2");
    await dialog.getByLabel("Cron").fill("*/5 * * * *");
    await dialog.getByTestId("cron-words-preview").getByText("Runs every 5 minutes.").waitFor();
    await settle(page);
    await page.screenshot({ path: join(shots, "schedule-edit.png") });
    await dialog.getByRole("button", { name: "Save schedule" }).click();
    await row.getByTestId("cron-words").getByText("every 5 minutes", { exact: true }).waitFor();
    const after = (await server.call("GET", "/v2/schedules")).json.filter((s: { scheduleId: string }) => s.scheduleId === id);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ cron: "*/5 * * * *", retries: 2, labels: ["reports"], body: '{"report":"weekly"}' });
    expect(after[0].header["X-Report"]).toEqual(["weekly"]);
    await settle(page);
    await page.screenshot({ path: join(shots, "schedules-run-edit.png"), fullPage: true });

    await page.setViewportSize({ width: 1024, height: 768 });
    await settle(page);
    expect(await scrollsSideways(page)).toBe(false);
    const deleteBox = await row.getByRole("button", { name: "Delete" }).boundingBox();
    expect(deleteBox!.x + deleteBox!.width).toBeLessThanOrEqual(1024);
    await page.screenshot({ path: join(shots, "schedules-laptop.png"), fullPage: true });
    expect(watch!.failedCalls).toEqual([]);
  });
});

describe("queues", () => {
  it("shows each queue's deliveries per minute and links to its messages, at 1440 and 1024 px", async () => {
    await server.call("POST", "/v2/queues", { body: JSON.stringify({ queueName: "emails", parallelism: 2 }), headers: json });
    const before = receiver.requests.length;
    for (let i = 0; i < 3; i++) await server.call("POST", `/v2/enqueue/emails/${receiver.url(`/mail/${i}`)}`, { body: "{}", headers: json });
    await receiver.waitForCount(before + 3);
    await until(
      async () => (await server.call("GET", "/v2/account/queue-throughput")).json.queues.some((q: { delivered: number }) => q.delivered === 3),
      "three deliveries counted",
    );
    const page = await fresh();
    await page.setViewportSize({ width: 1440, height: 900 });
    await signInWithToken(page, server.url, server.token);
    await go(page, "Queues");
    const row = page.locator('tr[data-queue="emails"]');
    // 3 deliveries over the 5-minute window.
    await row.getByTestId("throughput").getByText("0.60", { exact: true }).waitFor();
    await expect(row.getByRole("link", { name: "Its messages" }).getAttribute("href")).resolves.toBe("#/messages?queue=emails");
    await settle(page);
    await page.screenshot({ path: join(shots, "queues-throughput.png"), fullPage: true });
    await page.setViewportSize({ width: 1024, height: 768 });
    await settle(page);
    expect(await scrollsSideways(page)).toBe(false);
    expect(watch!.failedCalls).toEqual([]);
  });
});

describe("read-only token", () => {
  it("sees health, throughput and schedules; run now and edit are disabled with the reason", async () => {
    await server.call("POST", `/v2/schedules/${receiver.url("/ro-health")}`, { body: "{}", headers: { ...json, "Svc-Cron": "30 8 * * 1-5" } });
    const page = await fresh();
    await page.setViewportSize({ width: 1024, height: 768 });
    await signInWithToken(page, server.url, server.ferry.bootstrap.account.readOnlyToken!);
    await page.getByTestId("destinations").locator("tbody tr").first().waitFor();
    await go(page, "Schedules");
    const row = page.locator("tr", { hasText: "30 8 * * 1-5" });
    await row.getByText("at 08:30 on Monday to Friday (UTC)").waitFor();
    for (const name of ["Run now", "Edit"]) {
      const button = row.getByRole("button", { name });
      await expect(button.isDisabled()).resolves.toBe(true);
      await expect(button.getAttribute("title")).resolves.toBe("Read-only token: this action is not allowed");
    }
    await settle(page);
    await page.screenshot({ path: join(shots, "schedules-read-only.png") });
    await go(page, "Queues");
    await page.locator('tr[data-queue="emails"]').getByTestId("throughput").getByText(/\d/).waitFor();
    expect(watch!.failedCalls).toEqual([]);
  });
});
