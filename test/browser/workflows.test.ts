import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@upstash/workflow";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { WorkflowApp } from "../helpers/workflow-app.js";
import { ensureConsoleBuilt, go, launchBrowser, openPage, type PageWatch, signInWithToken } from "./harness.js";

/**
 * The console's Workflow runs, run page and workflow DLQ (docs/console.md) in real Chromium, against a real Ferry in
 * the upstash dialect, with runs made by the official `@upstash/workflow` SDK's own `serve` in a real app on
 * 127.0.0.1 (test/helpers/workflow-app.ts). Every test ends with no console error and no failed API call. With
 * FERRY_SCREENSHOTS_DIR=docs/console (`npm run console:screenshots`) it takes the pictures in docs/console.md.
 */
const shots = process.env.FERRY_SCREENSHOTS_DIR ?? join(tmpdir(), "ferry-console-shots");
const WIDE = { width: 1440, height: 900 };
const LAPTOP = { width: 1024, height: 768 };

let server: TestServer;
let app: WorkflowApp;
let client: Client;
let browser: Browser;
let watch: PageWatch | undefined;

let failing = true;
/** How often the failing workflow's first step ran: a resume must not run it again, a restart must. */
let customerLoads = 0;
let fullRun = "";
const failedRuns: string[] = [];
const waitingRuns: string[] = [];
let waitUrl = "";
let failUrl = "";

/** The run as the API (not the console) sees it. */
async function runState(id: string): Promise<string | undefined> {
  const { runs } = await client.logs({ workflowRunId: id });
  return runs[0]?.workflowState;
}

async function runEnds(id: string, state: string): Promise<void> {
  await eventually(async () => expect(await runState(id)).toBe(state), 30_000, 100);
}

async function signedIn(
  size: { width: number; height: number; colorScheme?: "light" | "dark" },
  token = server.token,
): Promise<Page> {
  watch = await openPage(browser, size);
  await signInWithToken(watch.page, server.url, token);
  return watch.page;
}

/** Rows of the runs table once the list settled on `n` rows. */
async function rows(page: Page, n: number) {
  const locator = page.locator("[data-run-id]");
  await expect.poll(() => locator.count(), { timeout: 15_000 }).toBe(n);
  return locator;
}

async function applyFilters(page: Page, f: { state?: string; url?: string; label?: string; from?: string; to?: string }) {
  if (f.state !== undefined) await page.getByLabel("State").selectOption(f.state);
  if (f.url !== undefined) await page.getByLabel("Workflow URL").fill(f.url);
  if (f.label !== undefined) await page.getByLabel("Label").fill(f.label);
  if (f.from !== undefined) await page.getByLabel("From").fill(f.from);
  if (f.to !== undefined) await page.getByLabel("To").fill(f.to);
  await page.getByRole("button", { name: "Apply filters" }).click();
}

beforeAll(async () => {
  vi.setConfig({ testTimeout: 90_000 });
  ensureConsoleBuilt();
  mkdirSync(shots, { recursive: true });
  [server, browser] = await Promise.all([
    startTestServer({ env: { FERRY_DIALECT: "upstash", FERRY_DESTINATION_ALLOW: "127.0.0.0/8,::1" } }),
    launchBrowser(),
  ]);
  app = await WorkflowApp.start(server.url, server.token);
  client = new Client({ baseUrl: server.url, token: server.token });

  // A run with every kind of step: run, sleep, a parallel group, context.call and a wait that a notify ends.
  const third = app.plain("/inventory", async (request) =>
    Response.json({ reserved: JSON.parse(await request.text()) as unknown, warehouse: "berlin-2" }),
  );
  const fullUrl = app.workflow("/wf/order", async (context) => {
    const order = context.requestPayload as { id: number; items: number };
    const total = await context.run("price order", () => order.items * 25);
    await context.sleep("cool down", 1);
    const [invoice, receipt] = await Promise.all([
      context.run("make invoice", () => `inv-${order.id}`),
      context.run("make receipt", () => ({ total, currency: "EUR" })),
    ]);
    const reservation = await context.call<{ warehouse: string }>("reserve stock", {
      url: third,
      method: "POST",
      body: JSON.stringify({ items: order.items }),
      headers: { "content-type": "application/json" },
    });
    const payment = await context.waitForEvent("wait for payment", `paid-${order.id}`, { timeout: "1h" });
    return { invoice, receipt, warehouse: reservation.body.warehouse, paid: payment.eventData };
  });
  fullRun = (await client.trigger({ url: fullUrl, body: { id: 7, items: 4 }, label: "orders" })).workflowRunId;
  await eventually(async () => expect(await client.getWaiters({ eventId: "paid-7" })).toHaveLength(1), 30_000, 100);
  await client.notify({ eventId: "paid-7", eventData: { paid: true, amount: 100 } });
  await runEnds(fullRun, "RUN_SUCCESS");

  // Runs whose second step fails (no retries): RUN_FAILED, each in the workflow DLQ; fixed later by flipping `failing`.
  failUrl = app.workflow("/wf/charge", async (context) => {
    await context.run("load customer", () => {
      customerLoads++;
      return "cus_1";
    });
    return context.run("charge card", () => {
      if (failing) throw new Error("card processor down");
      return "charged";
    });
  });
  for (const body of ["a", "b"]) failedRuns.push((await client.trigger({ url: failUrl, body, retries: 0, label: "billing" })).workflowRunId);
  for (const id of failedRuns) await runEnds(id, "RUN_FAILED");

  // Runs that wait for an event that never comes: RUN_STARTED until cancelled.
  waitUrl = app.workflow("/wf/waits", async (context) => {
    await context.run("prepare", () => "ready");
    await context.waitForEvent("wait for approval", `approve-${String(context.requestPayload)}`, { timeout: "1h" });
  });
  for (let i = 0; i < 6; i++) {
    waitingRuns.push((await client.trigger({ url: waitUrl, body: String(i), label: i < 3 ? "batch" : "nightly" })).workflowRunId);
  }
  for (let i = 0; i < 6; i++) {
    await eventually(async () => expect(await client.getWaiters({ eventId: `approve-${i}` })).toHaveLength(1), 30_000, 100);
  }
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await server?.stop();
});

afterEach(async () => {
  const w = watch;
  watch = undefined;
  await w?.context.close();
  expect(w?.problems ?? []).toEqual([]);
  expect(w?.failedCalls ?? []).toEqual([]);
});

describe("Workflow runs", () => {
  it("lists runs filtered by state, URL, label and date, with the filters kept in the URL", async () => {
    const page = await signedIn(WIDE);
    await go(page, "Workflow runs");
    await page.getByRole("heading", { level: 1, name: "Workflow runs" }).waitFor();
    await rows(page, 9);
    await page.locator(".loading").first().waitFor({ state: "detached" }).catch(() => undefined);
    await page.screenshot({ path: join(shots, "workflow-runs.png"), fullPage: true });

    await applyFilters(page, { state: "RUN_FAILED" });
    const failed = await rows(page, 2);
    expect(await failed.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-run-id")).sort())).toEqual([...failedRuns].sort());
    expect(new URL(page.url()).hash).toBe("#/workflows?state=RUN_FAILED");
    // A reload keeps the filter: it lives in the URL.
    await page.reload();
    await rows(page, 2);
    expect(await page.getByLabel("State").inputValue()).toBe("RUN_FAILED");

    await applyFilters(page, { state: "", label: "orders" });
    const orders = await rows(page, 1);
    expect(await orders.getAttribute("data-run-id")).toBe(fullRun);
    await expect.poll(() => orders.locator(".badge").textContent()).toBe("RUN_SUCCESS");

    await applyFilters(page, { label: "", url: `${app.base}/wf/wai` });
    await rows(page, 6);
    expect(decodeURIComponent(new URL(page.url()).hash)).toBe(`#/workflows?url=${app.base}/wf/wai`);

    await applyFilters(page, { url: "", from: "2099-01-01T00:00" });
    await page.locator(".empty-title", { hasText: "No run matches the filters" }).waitFor();
    await applyFilters(page, { from: "", to: "2000-01-01T00:00" });
    await page.locator(".empty-title", { hasText: "No run matches the filters" }).waitFor();
    await applyFilters(page, { from: "2000-01-01T00:00", to: "2099-01-01T00:00" });
    await rows(page, 9);
    await page.getByRole("button", { name: "Clear" }).click();
    await expect.poll(() => new URL(page.url()).hash).toBe("#/workflows");
  });

  it("shows a run's steps: input, sequential and parallel groups, outputs, timing, the call and the wait", async () => {
    const page = await signedIn(WIDE);
    await page.goto(`${server.url}/console/#/workflows/${fullRun}`);
    const steps = page.getByTestId("steps");
    await steps.waitFor();
    await page.getByRole("heading", { level: 1, name: "Workflow run" }).waitFor();
    // Input, then 1 run step, the sleep, the parallel group, the call and the wait.
    await expect.poll(() => steps.locator(":scope > li").count()).toBe(6);
    expect(await steps.locator(":scope > li").evaluateAll((lis) => lis.map((li) => li.getAttribute("data-group")))).toEqual([
      "input",
      "sequential",
      "sequential",
      "parallel",
      "sequential",
      "sequential",
    ]);
    const input = steps.locator('[data-group="input"]');
    expect(await input.locator("pre").textContent()).toContain('"items": 4');
    expect(await steps.locator('[data-step-name="price order"] pre').textContent()).toBe("100");
    expect(await steps.locator('[data-step-name="cool down"]').textContent()).toContain("Slept for 1.00 s");

    const parallel = steps.locator('[data-group="parallel"]');
    expect(await parallel.locator(".step-group-head").textContent()).toContain("Parallel · 2 steps");
    expect(await parallel.locator("[data-step-name]").evaluateAll((s) => s.map((x) => x.getAttribute("data-step-name")).sort())).toEqual([
      "make invoice",
      "make receipt",
    ]);
    expect(await parallel.locator('[data-step-name="make receipt"] pre').textContent()).toContain('"currency": "EUR"');

    const call = steps.locator('[data-step-name="reserve stock"]');
    expect(await call.getAttribute("data-step-type")).toBe("Call");
    expect(await call.getByTestId("call-step").textContent()).toContain("HTTP 200");
    expect(await call.locator("pre").first().textContent()).toContain('"warehouse": "berlin-2"');

    const wait = steps.locator('[data-step-name="wait for payment"]');
    const waitText = await wait.getByTestId("wait-step").textContent();
    expect(waitText).toContain("paid-7");
    expect(waitText).toContain("timeout 1h");
    expect(waitText).toContain("notified");
    expect(await wait.locator("pre").textContent()).toContain('"amount": 100');

    // Timing: every step shows its time and how long it took (the sleep took at least its second).
    const sleepTook = await steps.locator('[data-step-name="cool down"] .step-time .muted').textContent();
    expect(sleepTook).toMatch(/^\d+(\.\d+)? s$/);
    expect(await steps.locator("[data-step-name] time").count()).toBe(7);
    const result = await page.getByTestId("run-result").locator("pre").textContent();
    expect(JSON.parse(result!)).toEqual({
      invoice: "inv-7",
      receipt: { total: 100, currency: "EUR" },
      warehouse: "berlin-2",
      paid: { paid: true, amount: 100 },
    });
    await page.screenshot({ path: join(shots, "workflow-run.png"), fullPage: true });

    // A failed run names its failed step and error, from its workflow DLQ entry.
    await page.goto(`${server.url}/console/#/workflows/${failedRuns[0]}`);
    const failure = page.getByTestId("run-failure");
    await failure.waitFor();
    expect(await failure.textContent()).toContain("Failed at step “charge card”");
    expect(await failure.textContent()).toContain("card processor down");
    await page.screenshot({ path: join(shots, "workflow-run-failed.png") });
  });

  it("at 1024 px the list and a run's page fit the width", async () => {
    const page = await signedIn(LAPTOP);
    await go(page, "Workflow runs");
    await rows(page, 9);
    // A string, evaluated in the page: this file is type-checked without the DOM's types.
    const overflow = () => page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
    expect(await overflow()).toBe(0);
    await page.goto(`${server.url}/console/#/workflows/${fullRun}`);
    await page.getByTestId("steps").locator('[data-group="parallel"]').waitFor();
    expect(await overflow()).toBe(0);
    await page.screenshot({ path: join(shots, "workflow-run-laptop.png") });
  });

  it("reads well in dark mode", async () => {
    const page = await signedIn({ ...WIDE, colorScheme: "dark" });
    await page.goto(`${server.url}/console/#/workflows/${fullRun}`);
    await page.getByTestId("steps").locator('[data-group="parallel"]').waitFor();
    await page.screenshot({ path: join(shots, "workflow-run-dark.png") });
  });
});

describe("cancelling runs", () => {
  it("cancels one run from its page, a selection, and every running run matching the filters, each after a confirm that counts them", async () => {
    const page = await signedIn(WIDE);
    const [single, ...rest] = waitingRuns;
    await page.goto(`${server.url}/console/#/workflows/${single}`);
    await page.getByRole("button", { name: "Cancel run" }).click();
    const dialog = page.getByRole("dialog", { name: "Are you sure?" });
    expect(await dialog.locator("p").textContent()).toContain("Cancel 1 run");
    await dialog.getByRole("button", { name: "Cancel run" }).click();
    await page.locator(".page-head .badge", { hasText: "RUN_CANCELED" }).waitFor();
    expect(await runState(single!)).toBe("RUN_CANCELED");

    // The selection: two of the "batch" runs still running.
    await page.goto(`${server.url}/console/#/workflows?state=RUN_STARTED&label=batch`);
    const batch = await rows(page, 2);
    const picked = (await batch.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-run-id")!))).sort();
    expect(picked).toEqual([rest[0]!, rest[1]!].sort());
    for (const id of picked) await page.getByLabel(`Select ${id}`).check();
    await page.getByRole("button", { name: "Cancel selected" }).click();
    expect(await dialog.locator("p").textContent()).toBe("Cancel 2 runs? Their pending steps will not run.");
    await page.screenshot({ path: join(shots, "workflow-cancel-confirm.png") });
    await dialog.getByRole("button", { name: "Cancel 2 runs" }).click();
    await page.locator(".empty-title", { hasText: "No run matches the filters" }).waitFor();
    for (const id of picked) expect(await runState(id)).toBe("RUN_CANCELED");

    // A state filter that shows only ended runs matches no running run: nothing to confirm, nothing cancelled.
    await page.goto(`${server.url}/console/#/workflows?state=RUN_FAILED`);
    await rows(page, 2);
    await page.getByRole("button", { name: "Cancel matching" }).click();
    await page.getByText("No running run matches the filters").waitFor();
    expect(await dialog.isVisible()).toBe(false);
    expect(await runState(rest[2]!)).toBe("RUN_STARTED");

    // Every running run matching a filter: the three "nightly" runs, and no other.
    await page.goto(`${server.url}/console/#/workflows?label=nightly`);
    await rows(page, 3);
    await page.getByRole("button", { name: "Cancel matching" }).click();
    expect(await dialog.locator("p").textContent()).toBe("Cancel 3 running runs matching the filters? Their pending steps will not run.");
    await dialog.getByRole("button", { name: "Cancel 3 runs" }).click();
    await page.getByText("Cancelled 3 runs").waitFor();
    for (const id of rest.slice(2)) expect(await runState(id)).toBe("RUN_CANCELED");
    // The runs outside the filter were not touched.
    expect(await runState(fullRun)).toBe("RUN_SUCCESS");
    expect(await runState(failedRuns[0]!)).toBe("RUN_FAILED");
    await expect.poll(() => page.locator("[data-run-id] .badge", { hasText: "RUN_CANCELED" }).count()).toBe(3);
  });
});

describe("the workflow DLQ", () => {
  it("read-only token: sees runs, steps and the DLQ with every action disabled", async () => {
    const page = await signedIn(WIDE, server.ferry.bootstrap.account.readOnlyToken!);
    await page.getByText("read-only", { exact: true }).waitFor();
    await go(page, "Workflow runs");
    await rows(page, 9);
    expect(await page.getByRole("button", { name: "Cancel all running" }).isDisabled()).toBe(true);
    await page.goto(`${server.url}/console/#/workflows/${failedRuns[0]}`);
    await page.getByTestId("run-failure").waitFor();
    await go(page, "Workflow DLQ");
    const entries = page.locator("[data-dlq-id]");
    await expect.poll(() => entries.count()).toBe(2);
    for (const name of ["Resume", "Restart", "Delete"]) {
      expect(await entries.first().getByRole("button", { name }).isDisabled()).toBe(true);
    }
    await page.getByLabel("Select all on this page").check();
    for (const name of ["Resume selected", "Restart selected", "Delete selected"]) {
      expect(await page.getByRole("button", { name }).isDisabled()).toBe(true);
    }
  });

  it("lists failed runs with the failed step; Resume keeps the successful steps, Restart starts over", async () => {
    const page = await signedIn(WIDE);
    await go(page, "Workflow DLQ");
    await page.getByRole("heading", { level: 1, name: "Workflow DLQ" }).waitFor();
    const entries = page.locator("[data-dlq-id]");
    await expect.poll(() => entries.count()).toBe(2);
    const first = entries.filter({ hasText: failedRuns[0]! });
    expect(await first.textContent()).toContain("charge card");
    expect(await first.textContent()).toContain("card processor down");
    expect(await first.textContent()).toContain("HTTP 500");
    await page.screenshot({ path: join(shots, "workflow-dlq.png"), fullPage: true });

    // The filter by run id lives in the URL too.
    await page.getByLabel("Run id").fill(failedRuns[1]!);
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(() => entries.count()).toBe(1);
    expect(new URL(page.url()).hash).toBe(`#/workflow-dlq?runId=${failedRuns[1]}`);
    await page.getByRole("button", { name: "Clear" }).click();
    await expect.poll(() => entries.count()).toBe(2);

    failing = false;
    expect(customerLoads).toBe(2);
    const before = (await client.logs({ workflowUrl: failUrl })).runs.length;
    await first.getByRole("button", { name: "Resume" }).click();
    await page.getByText("Resumed: a new run is on its way").waitFor();
    await expect.poll(() => entries.count()).toBe(1);

    const second = entries.filter({ hasText: failedRuns[1]! });
    await second.getByLabel(`Select ${await second.getAttribute("data-dlq-id")}`).check();
    await page.getByRole("button", { name: "Restart selected" }).click();
    const dialog = page.getByRole("dialog", { name: "Are you sure?" });
    expect(await dialog.locator("p").textContent()).toBe(
      "Restart 1 failed run, from the first step, with the same payload? Each continues as a new run.",
    );
    await dialog.getByRole("button", { name: "Restart 1 run" }).click();
    await page.locator(".empty-title", { hasText: "The workflow DLQ is empty" }).waitFor();

    // Two new runs, both successful: the resumed one kept "load customer", the restarted one ran it again.
    const fresh = await eventually(async () => {
      const { runs } = await client.logs({ workflowUrl: failUrl });
      expect(runs.length).toBe(before + 2);
      const done = runs.filter((r) => !failedRuns.includes(r.workflowRunId));
      expect(done.map((r) => r.workflowState)).toEqual(["RUN_SUCCESS", "RUN_SUCCESS"]);
      return done;
    }, 30_000, 100);
    expect(fresh.map((r) => r.workflowRunResponse)).toEqual([JSON.stringify("charged"), JSON.stringify("charged")]);
    expect(customerLoads).toBe(3);
    await go(page, "Workflow runs");
    await page.locator(`[data-run-id="${fresh[0]!.workflowRunId}"]`).waitFor();
  });
});
