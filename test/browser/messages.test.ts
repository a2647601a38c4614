import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { signInWithToken } from "./harness.js";
import { fresh, json, receiver, server, until, useConsoleSuite, watch } from "./suite.js";

/**
 * The Messages view (docs/console.md): one row per message from `GET /v2/messages`, its filters in the URL's
 * fragment, paging by the API's cursor, bulk cancel and retry with a confirm that counts, the read-only token, 1024 px,
 * and a live refresh that never pulls a body. Real Ferry, real receiver, real Chromium; every action checked in the API.
 * `FERRY_SCREENSHOTS_DIR=docs/console` writes the pictures of docs/console.md.
 */
useConsoleSuite();
const shots = process.env.FERRY_SCREENSHOTS_DIR ?? join(tmpdir(), "ferry-console-shots");
mkdirSync(shots, { recursive: true });

async function publish(path: string, headers: Record<string, string> = {}, body = "{}"): Promise<string> {
  const r = await server.call("POST", `/v2/publish/${receiver.url(path)}`, { body, headers: { ...json, ...headers } });
  expect(r.status, r.text).toBe(200);
  return r.json.messageId as string;
}

async function stateOf(id: string): Promise<string | undefined> {
  const r = await server.call("GET", `/v2/messages?messageId=${id}`);
  return r.json.messages[0]?.state as string | undefined;
}

/** The ids of the rows on screen, top to bottom. */
async function rowIds(page: Page): Promise<string[]> {
  return page.locator("tr[data-message-id]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-message-id")!));
}

async function openMessages(page: Page, fragment = "#/messages", token = server.token): Promise<void> {
  await signInWithToken(page, server.url, token);
  await page.goto(`${server.url}/console/${fragment}`);
  await page.getByRole("heading", { level: 1, name: "Messages" }).waitFor();
}

describe("the Messages view", () => {
  it("shows one row per message with its state, attempts, last status and destination; filters live in the URL", async () => {
    receiver.setDefault((url) => (url.startsWith("/m-fail") ? { status: 503, body: "down" } : { status: 200, body: "ok" }));
    await server.call("POST", "/v2/queues", { body: '{"queueName":"orders","parallelism":1}', headers: json });
    const enqueue = async (path: string, headers: Record<string, string>) =>
      (await server.call("POST", `/v2/enqueue/orders/${receiver.url(path)}`, { body: "{}", headers: { ...json, ...headers } })).json
        .messageId as string;
    const delivered = await publish("/m-ok", { "Svc-Label": "view" });
    const retrying = await publish("/m-fail/retry", { "Svc-Label": "view", "Svc-Retries": "3", "Svc-Retry-Delay": "3600000" });
    const head = await enqueue("/m-queued/1", { "Svc-Delay": "1h", "Svc-Label": "view" });
    const queued = await enqueue("/m-queued/2", { "Svc-Label": "view" });
    await until(async () => (await stateOf(retrying)) === "RETRY" && (await stateOf(delivered)) === "DELIVERED", "RETRY and DELIVERED");

    const page = await fresh();
    await openMessages(page, "#/messages?label=view");
    await until(async () => (await rowIds(page)).length === 4, "four rows");
    expect(await rowIds(page)).toEqual([queued, head, retrying, delivered]);
    const row = (id: string) => page.locator(`tr[data-message-id="${id}"]`);
    await row(retrying).getByText("RETRY", { exact: true }).waitFor();
    await expect(row(retrying).textContent()).resolves.toMatch(/next try in (59 min|60 min|1 h)/); // a one-hour backoff, read within its first minute
    await expect(row(retrying).locator("td").nth(5).textContent()).resolves.toBe("503");
    await expect(row(retrying).locator("td").nth(4).textContent()).resolves.toBe("1");
    await row(queued).getByText("QUEUED", { exact: true }).waitFor();
    await expect(row(queued).textContent()).resolves.toContain("queue orders");
    await row(head).getByText("DELAYED", { exact: true }).waitFor();
    await row(delivered).getByText("DELIVERED", { exact: true }).waitFor();
    await expect(row(delivered).locator("td").nth(5).textContent()).resolves.toBe("200");
    await expect(page.getByLabel("Label", { exact: true }).inputValue()).resolves.toBe("view");
    await page.screenshot({ path: join(shots, "messages-filtered.png"), fullPage: true });

    // Filters applied in the form go into the fragment; the link reproduces the view in a new tab.
    await page.locator(`select[name="state"]`).selectOption("RETRY");
    await page.locator(`input[name="queue"]`).fill("");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/#\/messages\?state=RETRY&label=view$/);
    await until(async () => JSON.stringify(await rowIds(page)) === JSON.stringify([retrying]), "the RETRY row");
    const link = page.url();
    // A new tab has its own session storage: it signs in on the link, and the link's view opens.
    const other = await watch!.context.newPage();
    await other.goto(link);
    await other.getByRole("tab", { name: "Messaging token" }).click();
    await other.getByLabel("Token").fill(server.token);
    await other.getByRole("button", { name: "Sign in" }).click();
    await other.getByRole("heading", { level: 1, name: "Messages" }).waitFor();
    await until(async () => JSON.stringify(await rowIds(other)) === JSON.stringify([retrying]), "the same view");
    await expect(other.locator(`select[name="state"]`).inputValue()).resolves.toBe("RETRY");
    await other.close();

    // The keys other views link with: queue, schedule, url, group; and state, label, id.
    await page.goto(`${server.url}/console/#/messages?queue=orders&state=QUEUED`);
    await until(async () => JSON.stringify(await rowIds(page)) === JSON.stringify([queued]), "the queue's waiting message");
    await expect(page.locator(`input[name="queue"]`).inputValue()).resolves.toBe("orders");
    await page.goto(`${server.url}/console/#/messages?url=${encodeURIComponent(receiver.url("/m-ok"))}`);
    await until(async () => JSON.stringify(await rowIds(page)) === JSON.stringify([delivered]), "the URL's message");
    await page.goto(`${server.url}/console/#/messages?schedule=scd_nothing`);
    await page.locator(".empty-title", { hasText: "No messages match these filters" }).waitFor();
    await page.goto(`${server.url}/console/#/messages?group=nogroup&label=view`);
    await page.locator(".empty-title", { hasText: "No messages match these filters" }).waitFor();

    // Search by id.
    await page.goto(`${server.url}/console/#/messages`);
    await page.getByLabel("Message id").fill(head);
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(new RegExp(`#/messages\\?id=${head}$`));
    await until(async () => JSON.stringify(await rowIds(page)) === JSON.stringify([head]), "the searched message");
    // A row opens the message's page.
    await row(head).locator("a.id-link").click();
    await page.waitForURL(new RegExp(`#/messages/${head}$`));
    expect(watch!.failedCalls).toEqual([]);
  });

  it("pages by message with the cursor, 50 a page", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 53; i++) ids.push(await publish(`/m-page/${i}`, { "Svc-Label": "paged", "Svc-Delay": "1h" }));
    const newestFirst = [...ids].reverse();
    const page = await fresh();
    await openMessages(page, "#/messages?label=paged");
    await until(async () => (await rowIds(page)).length === 50, "the first page");
    expect(await rowIds(page)).toEqual(newestFirst.slice(0, 50));
    await page.locator(".live").waitFor();
    await page.getByRole("button", { name: "Older →" }).click();
    await until(async () => (await rowIds(page)).length === 3, "the second page");
    expect(await rowIds(page)).toEqual(newestFirst.slice(50));
    await page.getByText("Page 2").waitFor();
    expect(await page.locator(".live").count()).toBe(0);
    await expect(page.getByRole("button", { name: "Older →" }).isDisabled()).resolves.toBe(true);
    await page.getByRole("button", { name: "← Newer" }).click();
    await until(async () => (await rowIds(page))[0] === newestFirst[0], "the first page again");
    expect(watch!.failedCalls).toEqual([]);
  });

  it("cancels a selection, saying how many it cancels and how many it leaves", async () => {
    const waiting: string[] = [];
    for (let i = 0; i < 3; i++) waiting.push(await publish(`/m-sel/${i}`, { "Svc-Label": "bulk-sel", "Svc-Delay": "1h" }));
    const done = await publish("/m-sel/done", { "Svc-Label": "bulk-sel" });
    const untouched = await publish("/m-sel/keep", { "Svc-Label": "bulk-sel", "Svc-Delay": "1h" });
    await until(async () => (await stateOf(done)) === "DELIVERED", "the delivered one");
    const page = await fresh();
    await openMessages(page, "#/messages?label=bulk-sel");
    await until(async () => (await rowIds(page)).length === 5, "five rows");
    for (const id of [...waiting, done]) await page.getByLabel(`Select ${id}`).check();
    await page.getByText("4 selected").waitFor();
    await page.getByRole("button", { name: "Cancel selected" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("Cancel 3 messages? They will not be delivered. 1 selected message has ended and stays as it is.").waitFor();
    await page.screenshot({ path: join(shots, "messages-bulk-confirm.png") });
    await dialog.getByRole("button", { name: "Cancel 3 messages" }).click();
    await page.getByText("Cancelled 3 messages").waitFor();
    for (const id of waiting) expect(await stateOf(id)).toBe("CANCELED");
    expect(await stateOf(done)).toBe("DELIVERED");
    expect(await stateOf(untouched)).toBe("DELAYED");
    await page.locator(`tr[data-message-id="${waiting[0]}"]`).getByText("CANCELED", { exact: true }).waitFor();
    expect(watch!.failedCalls).toEqual([]);
  });

  it("cancels everything the filter matches, with the API's count in the confirm", async () => {
    const matching: string[] = [];
    for (let i = 0; i < 4; i++) matching.push(await publish(`/m-filter/${i}`, { "Svc-Label": "bulk-filter", "Svc-Delay": "1h" }));
    const outside = await publish("/m-filter/outside", { "Svc-Label": "bulk-other", "Svc-Delay": "1h" });
    const page = await fresh();
    await openMessages(page, "#/messages?label=bulk-filter&state=DELAYED");
    await until(async () => (await rowIds(page)).length === 4, "four rows");
    await page.getByRole("button", { name: "Cancel matching" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("Cancel 4 messages matching the filter? They will not be delivered.").waitFor();
    await dialog.getByRole("button", { name: "Cancel 4 messages" }).click();
    await page.getByText("Cancelled 4 messages").waitFor();
    for (const id of matching) expect(await stateOf(id)).toBe("CANCELED");
    expect(await stateOf(outside)).toBe("DELAYED");
    // A filter on ended messages cancels nothing, and says why.
    await page.goto(`${server.url}/console/#/messages?label=bulk-filter&state=CANCELED`);
    await until(async () => (await rowIds(page)).length === 4, "the cancelled rows");
    await page.getByRole("button", { name: "Cancel matching" }).click();
    await page.getByText("No message matches the filter: only a message that has not ended can be cancelled.").waitFor();
    expect(await page.getByRole("dialog").isVisible()).toBe(false);
    expect(watch!.failedCalls).toEqual([]);
  });

  it("retries failed messages through their DLQ entries, from the filter and from a selection", async () => {
    let failing = true;
    receiver.setDefault((url) => (url.startsWith("/m-retry") && failing ? { status: 500, body: "no" } : { status: 200, body: "ok" }));
    const failed: string[] = [];
    for (let i = 0; i < 2; i++) failed.push(await publish(`/m-retry/${i}`, { "Svc-Label": "bulk-retry", "Svc-Retries": "0" }));
    const waiting = await publish("/m-retry/later", { "Svc-Label": "bulk-retry", "Svc-Delay": "1h" });
    await until(async () => (await stateOf(failed[0]!)) === "FAILED" && (await stateOf(failed[1]!)) === "FAILED", "two FAILED");
    failing = false;
    const arrived = () => receiver.requests.filter((r) => r.url.startsWith("/m-retry/") && r.url !== "/m-retry/later").length;
    const before = arrived();

    const page = await fresh();
    await openMessages(page, "#/messages?label=bulk-retry");
    await until(async () => (await rowIds(page)).length === 3, "three rows");
    // A selection of one failed and one waiting message retries the failed one only.
    await page.getByLabel(`Select ${failed[0]}`).check();
    await page.getByLabel(`Select ${waiting}`).check();
    await page.getByRole("button", { name: "Retry selected" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText(/^Retry 1 failed message from the dead letter queue\?.* 1 selected message is not failed and is left alone\.$/).waitFor();
    await dialog.getByRole("button", { name: "Retry 1 message" }).click();
    await page.getByText("Retried 1 message", { exact: true }).waitFor();
    await until(async () => arrived() === before + 1, "the retried delivery");

    // From the filter: the other failed message (the first one's DLQ entry is gone once retried).
    await page.getByRole("button", { name: "Retry matching" }).click();
    await dialog.getByText(/^Retry 2 failed messages matching the filter/).waitFor();
    await dialog.getByRole("button", { name: "Retry 2 messages" }).click();
    await page.getByText("Retried 1 message (1 had no DLQ entry left)").waitFor();
    await until(async () => arrived() === before + 2, "the second retried delivery");
    const dlq = await server.call("GET", `/v2/dlq?messageIds=${failed.join(",")}`);
    expect(dlq.json.messages).toEqual([]);
    expect(await stateOf(waiting)).toBe("DELAYED");
    expect(watch!.failedCalls).toEqual([]);
  });

  it("disables bulk actions for the read-only token, with the reason on hover", async () => {
    const id = await publish("/m-ro", { "Svc-Label": "read-only", "Svc-Delay": "1h" });
    const page = await fresh();
    await openMessages(page, "#/messages?label=read-only", server.ferry.bootstrap.account.readOnlyToken!);
    await page.locator(`tr[data-message-id="${id}"]`).waitFor();
    for (const name of ["Retry matching", "Cancel matching"]) {
      const button = page.getByRole("button", { name });
      await expect(button.isDisabled()).resolves.toBe(true);
      await expect(button.getAttribute("title")).resolves.toBe("Read-only token: this action is not allowed");
    }
    await page.getByLabel(`Select ${id}`).check();
    for (const name of ["Retry selected", "Cancel selected"]) {
      await expect(page.getByRole("button", { name }).isDisabled()).resolves.toBe(true);
    }
    expect(await stateOf(id)).toBe("DELAYED");
    expect(watch!.failedCalls).toEqual([]);
  });

  it("fits 1024 px without scrolling sideways", async () => {
    await publish("/m-wide/" + "a-long-path-segment/".repeat(6), { "Svc-Label": "wide,another-label,third", "Svc-Delay": "1h" });
    const page = await fresh();
    await page.setViewportSize({ width: 1024, height: 700 });
    await openMessages(page);
    await page.locator("tr[data-message-id]").first().waitFor();
    const overflow = (selector: string) =>
      page.evaluate<number>(`(() => { const e = document.querySelector(${JSON.stringify(selector)}); return e.scrollWidth - e.clientWidth; })()`);
    expect(await overflow("html")).toBe(0);
    expect(await overflow(".table-wrap")).toBe(0);
    await page.screenshot({ path: join(shots, "messages-laptop.png") });
    expect(watch!.failedCalls).toEqual([]);
  });

  it("never pulls a body in the list's live refresh, even with a 9 MiB message recent", async () => {
    const big = await publish("/m-big", { "Svc-Delay": "1h", "Content-Type": "text/plain" }, "x".repeat(9 * 1024 * 1024));
    const page = await fresh();
    await openMessages(page);
    await page.locator(`tr[data-message-id="${big}"]`).waitFor();
    // Count what the view pulls over three refreshes (one every 2 s) once it shows the big message.
    const pulled: { path: string; bytes: number }[] = [];
    page.on("response", (r) => {
      const path = new URL(r.url()).pathname;
      if (path.startsWith("/v2/")) void r.body().then((b) => pulled.push({ path, bytes: b.length }), () => undefined);
    });
    await until(async () => pulled.filter((p) => p.path === "/v2/messages").length >= 3, "three refreshes");
    const total = pulled.reduce((n, p) => n + p.bytes, 0);
    expect(pulled.every((p) => p.path === "/v2/messages"), JSON.stringify(pulled)).toBe(true);
    expect(total, JSON.stringify(pulled)).toBeLessThan(150 * 1024);
    expect(watch!.failedCalls).toEqual([]);
  });
});
