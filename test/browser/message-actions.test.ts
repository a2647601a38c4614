import { execFile } from "node:child_process";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { signInWithToken } from "./harness.js";
import { fresh, json, receiver, server, until, useConsoleSuite, watch } from "./suite.js";

/**
 * Operating from a message's page and reading the DLQ (docs/console.md "Message", "Dead letter queue"), in a real
 * Chromium against a real Ferry and real receivers: retry, replay (linked both ways), copy as curl (the copied
 * command is run and publishes the same request), the timeline's colours and attempt durations, the DLQ's causes,
 * labels and total at 1440 and 1024 px, and the read-only token. Screenshots go to FERRY_SCREENSHOTS_DIR.
 */
useConsoleSuite();

const shots = process.env.FERRY_SCREENSHOTS_DIR ?? join(tmpdir(), "ferry-console-shots");
const WIDE = { width: 1440, height: 900 };
const LAPTOP = { width: 1024, height: 768 };

async function publish(path: string, headers: Record<string, string>, body = '{"order":7}'): Promise<string> {
  const res = await server.call("POST", `/v2/publish/${receiver.url(path)}`, { headers: { ...json, ...headers }, body });
  expect(res.status).toBe(200);
  return res.json.messageId as string;
}

async function states(id: string): Promise<string[]> {
  const logs = await server.call("GET", `/v2/logs?messageId=${id}&order=earliestFirst`);
  return logs.json.logs.map((l: { state: string }) => l.state);
}

const reached = (id: string, state: string) => until(async () => (await states(id)).includes(state), `${id} ${state}`);

/** A page of the given size, signed in with `token` (the account's token by default). */
async function signedIn(size: { width: number; height: number }, token = server.token): Promise<Page> {
  const page = await fresh(size);
  await signInWithToken(page, server.url, token);
  return page;
}

// Evaluated in the page as strings: this file is type-checked without the DOM's types.
/** The colour of a timeline dot (its ::before), as computed. */
const dotColour = (page: Page, state: string) =>
  page.evaluate<string>(
    `getComputedStyle(document.querySelector('[data-testid="timeline"] li[data-state="${state}"]'), "::before").borderTopColor`,
  );
/** A colour variable of the stylesheet, as computed. */
const cssVar = (page: Page, name: string) =>
  page.evaluate<string>(`(() => {
    const probe = document.createElement("span");
    probe.style.color = "var(${name})";
    document.body.appendChild(probe);
    const colour = getComputedStyle(probe).color;
    probe.remove();
    return colour;
  })()`);
const overflow = (page: Page) =>
  page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");

describe("a message's page", () => {
  it("colours the timeline by state, times each attempt, copies the request as curl, and replays it linked both ways", async () => {
    receiver.respondWith({ status: 500, body: "first fails", delayMs: 300 }, { status: 200, body: "ok", delayMs: 150 });
    const id = await publish("/timeline", {
      "Svc-Retries": "2",
      "Svc-Retry-Delay": "200",
      "Svc-Label": "checkout",
      "Svc-Forward-X-Tenant": "acme",
    });
    await reached(id, "DELIVERED");

    const page = await signedIn(WIDE);
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await page.goto(`${server.url}/console/#/messages/${id}`);
    const timeline = page.getByTestId("timeline");
    await timeline.locator('li[data-state="DELIVERED"]').waitFor();
    expect(await dotColour(page, "DELIVERED")).toBe(await cssVar(page, "--ok"));
    expect(await dotColour(page, "ERROR")).toBe(await cssVar(page, "--warn"));
    expect(await dotColour(page, "RETRY")).toBe(await cssVar(page, "--warn"));
    expect(await dotColour(page, "CREATED")).toBe(await cssVar(page, "--info"));
    // Two attempts: the first took at least the receiver's 300 ms, the second at least 150 ms.
    const durations = await page.getByTestId("attempt-duration").allTextContents();
    expect(durations).toHaveLength(2);
    const ms = durations.map((d) => {
      const m = /^attempt (\d) · ([\d.]+) (ms|s)$/.exec(d.trim())!;
      return Number(m[2]) * (m[3] === "s" ? 1000 : 1);
    });
    expect(durations[0]).toMatch(/^attempt 1 · /);
    expect(ms[0]).toBeGreaterThanOrEqual(300);
    expect(ms[1]).toBeGreaterThanOrEqual(150);
    // A delivered message is not retried: the button says why, and points to Replay.
    const retry = page.getByRole("button", { name: "Retry", exact: true });
    expect(await retry.isDisabled()).toBe(true);
    expect(await retry.getAttribute("title")).toBe("Cannot retry: it was delivered; replay it to send it again");
    await page.screenshot({ path: join(shots, "message-actions.png"), fullPage: true });

    // Copy as curl: the clipboard holds the command, and the command, run, publishes the same request.
    await page.getByRole("button", { name: "Copy as curl" }).click();
    await page.getByText("Copied the request as a curl command").waitFor();
    const command = await page.evaluate<string>("navigator.clipboard.readText()");
    expect(command).toContain(`/v2/publish/${receiver.url("/timeline")}`);
    expect(command).toContain("$FERRY_TOKEN");
    expect(command).not.toContain(server.token);
    expect(command).toContain("'Svc-Forward-X-Tenant: acme'");
    await page.locator("details.as-curl summary").click();
    expect((await page.getByTestId("message-curl").textContent())!.trim()).toBe(command.trim());
    const before = receiver.requests.filter((r) => r.url === "/timeline").length;
    const run = await promisify(execFile)("bash", ["-c", `${command} --silent --max-time 10`], {
      env: { ...process.env, FERRY_TOKEN: server.token },
      timeout: 15_000,
    });
    const copied = JSON.parse(run.stdout) as { messageId: string };
    await reached(copied.messageId, "DELIVERED");
    const sent = receiver.requests.filter((r) => r.url === "/timeline");
    expect(sent.length).toBe(before + 1);
    expect(sent.at(-1)!.text).toBe('{"order":7}');
    expect(sent.at(-1)!.headers["x-tenant"]).toBe("acme");
    const copiedCreated = (await server.call("GET", `/v2/logs?messageId=${copied.messageId}&state=CREATED`)).json.logs[0];
    expect(copiedCreated).toMatchObject({ labels: ["checkout"], maxRetries: 2, retryDelayExpr: "200" });

    // Replay: the new message is listed on this page, and its own page links back.
    await page.getByRole("button", { name: "Replay" }).click();
    const replay = page.getByTestId("replay-links").getByTestId("replay");
    await replay.waitFor();
    const replayId = (await replay.textContent())!.trim();
    expect(replayId).not.toBe(id);
    await reached(replayId, "DELIVERED");
    // The toasts leave after 3.5 s: the picture shows the page, not them.
    await page.locator(".toast").first().waitFor({ state: "detached", timeout: 10_000 });
    await page.screenshot({ path: join(shots, "message-replayed.png") });
    await replay.click();
    await page.getByTestId("replay-of").waitFor();
    expect((await page.getByTestId("replay-of").textContent())!.trim()).toBe(id);
    await page.getByTestId("timeline").locator('li[data-state="DELIVERED"]').waitFor();
    await page.screenshot({ path: join(shots, "message-replay.png") });
    await page.getByTestId("replay-of").click();
    await page.getByTestId("replay-links").getByTestId("replay").waitFor();
    expect(watch!.failedCalls).toEqual([]);
  });

  it("retries a failed message through its DLQ entry, and brings a retry waiting out its backoff forward", async () => {
    let failing = true;
    receiver.setDefault((url) =>
      url.startsWith("/page-fails") && failing ? { status: 503, body: "down for maintenance" } : { status: 200, body: "ok" },
    );
    const failed = await publish("/page-fails", { "Svc-Retries": "0" });
    await reached(failed, "FAILED");
    const page = await signedIn(WIDE);
    await page.goto(`${server.url}/console/#/messages/${failed}`);
    const retry = page.getByRole("button", { name: "Retry", exact: true });
    await retry.waitFor();
    expect(await retry.isEnabled()).toBe(true);
    expect(await retry.getAttribute("title")).toMatch(/^Retries its DLQ entry \S+: a new message with the same request$/);
    failing = false;
    const count = receiver.requests.filter((r) => r.url === "/page-fails").length;
    await retry.click();
    await page.getByText("Retried: a new message is on its way").waitFor();
    await until(async () => receiver.requests.filter((r) => r.url === "/page-fails").length === count + 1, "the retried delivery");
    expect((await server.call("GET", `/v2/dlq?messageId=${failed}`)).json.messages).toEqual([]);
    // The entry is gone: the button now says so.
    await until(async () => (await retry.getAttribute("title"))?.includes("DLQ entry is gone") ?? false, "the disabled Retry");
    expect(await retry.isDisabled()).toBe(true);

    // A message waiting out a one-hour backoff: Retry now attempts it at once.
    let calls = 0;
    receiver.setDefault((url) => (url.startsWith("/page-backoff") && calls++ === 0 ? { status: 500, body: "once" } : { status: 200, body: "ok" }));
    const waiting = await publish("/page-backoff", { "Svc-Retries": "3", "Svc-Retry-Delay": "3600000" });
    await reached(waiting, "RETRY");
    await page.goto(`${server.url}/console/#/messages/${waiting}`);
    const now = page.getByRole("button", { name: "Retry now" });
    await now.waitFor();
    expect(await now.getAttribute("title")).toBe("Makes its next attempt now instead of waiting out the backoff");
    await now.click();
    await page.getByText("Retrying now").waitFor();
    await page.getByTestId("timeline").locator('li[data-state="DELIVERED"]').waitFor({ timeout: 15_000 });
    expect(calls).toBe(2);
    expect(watch!.failedCalls).toEqual([]);
  });
});

/** A port nothing listens on: bound, then closed again. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe("the dead letter queue", () => {
  it("shows each failure's cause, the labels and a total, and fits 1440 and 1024 px with its buttons on screen", async () => {
    await server.call("DELETE", "/v2/dlq");
    receiver.setDefault((url) =>
      url.startsWith("/dlq-slow")
        ? { status: 200, body: "late", delayMs: 2500 }
        : url.startsWith("/dlq-500")
          ? { status: 500, body: '{"error":"database down","retryable":false}' }
          : { status: 200, body: "ok" },
    );
    const port = await closedPort();
    const refused = await server.call("POST", `/v2/publish/http://127.0.0.1:${port}/webhooks/orders`, {
      headers: { ...json, "Svc-Retries": "0", "Svc-Label": "orders" },
      body: "{}",
    });
    const slow = await publish("/dlq-slow", { "Svc-Retries": "0", "Svc-Timeout": "1s", "Svc-Label": "billing" });
    const err = await publish("/dlq-500", { "Svc-Retries": "0", "Svc-Label": "billing" });
    await until(async () => (await server.call("GET", "/v2/dlq/count")).json.count === 3, "three DLQ entries");

    const page = await signedIn(WIDE);
    await page.goto(`${server.url}/console/#/dlq`);
    const row = (id: string) => page.locator(`tr[data-dlq-id]`, { hasText: id });
    await row(err).getByText("HTTP 500").waitFor();
    expect(await row(err).getByTestId("dlq-cause").textContent()).toContain('{"error":"database down","retryable":false}');
    expect(await row(refused.json.messageId as string).getByTestId("dlq-cause").textContent()).toContain("Connection refused");
    expect(await row(refused.json.messageId as string).getByTestId("dlq-cause").textContent()).toContain("ECONNREFUSED");
    expect(await row(slow).getByTestId("dlq-cause").textContent()).toContain("Timed out");
    expect(await row(slow).locator(".cell-labels").textContent()).toBe("billing");
    expect(await row(refused.json.messageId as string).locator(".cell-labels").textContent()).toBe("orders");
    expect((await page.getByTestId("dlq-total").textContent())!.trim()).toBe("3 entries in the dead letter queue");
    expect(await overflow(page)).toBe(0);
    await page.screenshot({ path: join(shots, "dlq-causes.png"), fullPage: true });
    // One entry's dialog: the cause in full, with the failure time and labels.
    await row(refused.json.messageId as string).locator("a.muted-link").click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("ECONNREFUSED", { exact: false }).first().waitFor();
    expect(await dialog.locator(".kv").textContent()).toContain("Connection refused");
    expect(await dialog.locator(".kv").textContent()).toContain("orders");
    await page.screenshot({ path: join(shots, "dlq-entry-cause.png") });
    await page.keyboard.press("Escape");

    // Filtered by label, the total counts the matches.
    await page.getByLabel("Label", { exact: true }).fill("billing");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await until(async () => (await page.getByTestId("dlq-total").textContent())?.trim() === "2 entries match the filters", "the filtered total");

    // At 1024 px: no horizontal scrolling, and the Created column and each row's buttons are on screen.
    await page.getByRole("button", { name: "Clear" }).click();
    await page.setViewportSize(LAPTOP);
    await until(async () => (await page.getByTestId("dlq-total").textContent())?.trim() === "3 entries in the dead letter queue", "the whole list");
    await row(err).getByText("HTTP 500").waitFor();
    expect(await overflow(page)).toBe(0);
    const created = await page.getByRole("columnheader", { name: "Created" }).boundingBox();
    expect(created!.x + created!.width).toBeLessThanOrEqual(LAPTOP.width);
    for (const name of ["Retry", "Delete"]) {
      const box = await row(err).getByRole("button", { name, exact: true }).boundingBox();
      expect(box!.x + box!.width, name).toBeLessThanOrEqual(LAPTOP.width);
    }
    await page.screenshot({ path: join(shots, "dlq-laptop.png") });
    // A message's page at 1024 px fits too.
    await page.goto(`${server.url}/console/#/messages/${err}`);
    await page.getByTestId("timeline").locator('li[data-state="FAILED"]').waitFor();
    expect(await overflow(page)).toBe(0);
    expect(watch!.failedCalls).toEqual([]);
  });
});

describe("the read-only token", () => {
  it("sees the actions disabled with the reason on hover, and may still copy the request as curl", async () => {
    const id = await publish("/read-only", {});
    await reached(id, "DELIVERED");
    const page = await signedIn(WIDE, server.ferry.bootstrap.account.readOnlyToken!);
    await page.goto(`${server.url}/console/#/messages/${id}`);
    await page.getByTestId("timeline").locator('li[data-state="DELIVERED"]').waitFor();
    for (const name of ["Retry", "Replay"]) {
      const button = page.getByRole("button", { name, exact: true });
      expect(await button.isDisabled(), name).toBe(true);
      expect(await button.getAttribute("title"), name).toBe("Read-only token: this action is not allowed");
    }
    expect(await page.getByRole("button", { name: "Copy as curl" }).isEnabled()).toBe(true);
    await page.screenshot({ path: join(shots, "message-read-only.png") });
    await page.goto(`${server.url}/console/#/dlq`);
    await page.locator("tr[data-dlq-id]").first().waitFor();
    for (const button of await page.locator("tr[data-dlq-id]").first().getByRole("button").all()) {
      expect(await button.isDisabled()).toBe(true);
    }
    expect(watch!.failedCalls).toEqual([]);
  });
});
