import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { newAccount } from "../../src/services/accounts.js";
import { ADMIN_EMAIL, ADMIN_KEY, addCustomer, adminEnv } from "../helpers/management.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { ensureConsoleBuilt, go, launchBrowser, openPage, type PageWatch, signInWithEmail, signInWithToken } from "./harness.js";

/**
 * The console against a real Ferry and real receivers, in Debian's Chromium: one browser for the file, a fresh
 * context (own session storage) per test. Every test ends with no console error and no failing API call.
 */
// A shared machine: a browser step waits on events, and a slow one must not fail on the default 30 s.
vi.setConfig({ testTimeout: 60_000 });

let server: TestServer;
let receiver: Receiver;
let browser: Browser;
let watch: PageWatch | undefined;
const json = { "Content-Type": "application/json" };

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

async function fresh(): Promise<Page> {
  watch = await openPage(browser);
  return watch.page;
}

/** Forgets the failed calls (and the browser's console line about each) that a test made on purpose. */
function forgive(): void {
  watch!.failedCalls.length = 0;
  watch!.problems = watch!.problems.filter((p) => !p.includes("Failed to load resource"));
}

/** Waits until `check` holds, polling the API (bounded). */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("serving", () => {
  it("sends the console with a strict Content-Security-Policy and security headers; / redirects a browser", async () => {
    const page = await fresh();
    const response = await page.goto(`${server.url}/`);
    expect(new URL(page.url()).pathname).toBe("/console/");
    const headers = response!.headers();
    expect(headers["content-security-policy"]).toContain("script-src 'self'");
    expect(headers["content-security-policy"]).toContain("default-src 'self'");
    expect(headers["content-security-policy"]).not.toContain("unsafe-inline");
    expect(headers["x-content-type-options"]).toBe("nosniff");
    expect(headers["x-frame-options"]).toBe("DENY");
    expect(headers["referrer-policy"]).toBe("no-referrer");
    // An API client asking for / still gets the JSON 404 it always did.
    expect((await server.call("GET", "/", { token: null })).status).toBe(404);
  });
});

describe("signing in", () => {
  it("with a token: a wrong one shows the API's error; sign out clears the session", async () => {
    const page = await fresh();
    await page.goto(`${server.url}/console/`);
    await page.getByLabel("Token").fill("not-a-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "invalid token" }).waitFor();
    forgive(); // that 401 was the point of the step

    await page.getByLabel("Token").fill(server.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    const account = await server.call("GET", "/v2/account");
    await expect(page.getByText(account.json.accountId).first().isVisible()).resolves.toBe(true);
    expect(page.url()).not.toContain(server.token);
    expect(await page.evaluate("document.cookie")).toBe("");

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    expect(watch!.failedCalls).toEqual([]);
  });

  it("with e-mail and API key: one account goes straight in, several are listed by id", async () => {
    const page = await fresh();
    await signInWithEmail(page, server.url, ADMIN_EMAIL, "wrong-key");
    await page.getByRole("alert").waitFor();
    forgive();
    await page.getByLabel("API key").fill(ADMIN_KEY);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await page.getByRole("button", { name: "Sign out" }).click();

    // A second account for the same customer: now the console asks which one.
    const { services } = server.ferry;
    const second = newAccount({ customerId: ADMIN_EMAIL, plan: "paid", region: "eu-central-1", now: Date.now() });
    await services.store.accountInsert({ account: second });
    await signInWithEmail(page, server.url, ADMIN_EMAIL, ADMIN_KEY);
    await page.getByText(second.id).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await page.getByText(`Account ${second.id}`).waitFor();
    expect(watch!.failedCalls).toEqual([]);
  });
});

describe("settings", () => {
  it("after an e-mail sign-in, shows the read-only token and rotates the token; the console keeps working", async () => {
    const customer = await addCustomer(server, "ops@console.test");
    const page = await fresh();
    await signInWithEmail(page, server.url, customer.credentials.email, customer.credentials.key);
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await go(page, "Settings");
    const readOnly = page.getByLabel("Read-only token", { exact: true });
    await readOnly.waitFor();
    await page.getByRole("button", { name: "Reveal" }).nth(1).click();
    const record = await server.call("GET", "/v2/account", { token: customer.token });
    expect(record.json.accountId).toBe(customer.accountId);
    expect((await readOnly.textContent())!.length).toBeGreaterThan(20);

    await page.getByRole("button", { name: "Rotate token" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Rotate token" }).click();
    await page.getByText("Token rotated").waitFor();
    expect((await server.call("GET", "/v2/account", { token: customer.token })).status).toBe(401);
    await go(page, "Overview");
    await page.getByText(`Account ${customer.accountId}`).waitFor();
    expect(watch!.failedCalls).toEqual([]);
  });
});

describe("operating", () => {
  it("publishes from the builder and shows the message reach DELIVERED live in Messages", async () => {
    const page = await fresh();
    await signInWithToken(page, server.url, server.token);
    await go(page, "Publish");
    const destination = receiver.url("/builder");
    await page.getByLabel("Destination").fill(destination);
    await page.getByLabel("Body").fill('{"from":"console"}');
    await page.getByLabel("Labels").fill("console-test");
    await page.getByLabel("Delay", { exact: true }).fill("2s");
    await expect(page.getByTestId("curl").textContent()).resolves.toContain(`/v2/publish/${destination}`);
    await expect(page.getByTestId("curl").textContent()).resolves.toContain("Svc-Delay: 2s");
    const before = receiver.requests.length;
    await page.getByRole("button", { name: "Send" }).click();
    const link = page.getByTestId("publish-result").locator("a.id-link");
    await link.waitFor();
    const messageId = (await link.textContent())!.trim();

    // Open Messages while the message still waits for its delay; DELIVERED arrives without a reload.
    await go(page, "Messages");
    const row = page.locator(`tr[data-message-id="${messageId}"]`);
    await row.waitFor();
    await row.getByText("DELIVERED", { exact: true }).waitFor({ timeout: 15_000 });
    expect(receiver.requests.length).toBeGreaterThan(before);
    expect(receiver.requests.at(-1)!.text).toBe('{"from":"console"}');

    await row.locator("a.id-link").click();
    await page.getByTestId("timeline").locator('li[data-state="DELIVERED"]').waitFor();

    // Filtering by label leaves only this message (the other tests' messages carry no such label).
    await go(page, "Messages");
    await page.getByLabel("Label", { exact: true }).fill("console-test");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.locator(`tr[data-message-id]`).first().waitFor();
    await until(async () => (await page.locator("tr[data-message-id]").count()) === 1, "the filtered list");
    await expect(page.locator("tr[data-message-id]").first().getAttribute("data-message-id")).resolves.toBe(messageId);
    expect(watch!.failedCalls).toEqual([]);
  });

  it("shows a failing destination's message in the DLQ; Retry delivers it once the destination recovers", async () => {
    let failing = true;
    receiver.setDefault((url) => (url.startsWith("/flaky") && failing ? { status: 503, body: "down" } : { status: 200, body: "ok" }));
    const published = await server.call("POST", `/v2/publish/${receiver.url("/flaky")}`, {
      body: '{"n":1}',
      headers: { ...json, "Svc-Retries": "0" },
    });
    const messageId = published.json.messageId as string;
    await until(async () => {
      const dlq = await server.call("GET", `/v2/dlq?messageId=${messageId}`);
      return dlq.json.messages.length === 1;
    }, "the DLQ entry");

    const page = await fresh();
    await signInWithToken(page, server.url, server.token);
    await go(page, "Dead letter queue");
    const row = page.locator("tr", { hasText: messageId });
    await row.getByText("HTTP 503").waitFor();

    failing = false;
    const count = receiver.requests.filter((r) => r.url === "/flaky").length;
    await row.getByRole("button", { name: "Retry" }).click();
    await until(async () => receiver.requests.filter((r) => r.url === "/flaky").length === count + 1, "the retried delivery");
    await row.waitFor({ state: "detached" });
    const dlq = await server.call("GET", `/v2/dlq?messageId=${messageId}`);
    expect(dlq.json.messages).toEqual([]);
    expect(watch!.failedCalls).toEqual([]);
  });

  it("deletes a selection of DLQ entries", async () => {
    receiver.setDefault((url) => (url.startsWith("/doomed") ? { status: 410, body: "gone" } : { status: 200, body: "ok" }));
    const ids: string[] = [];
    for (const n of [1, 2]) {
      const r = await server.call("POST", `/v2/publish/${receiver.url(`/doomed/${n}`)}`, { body: "{}", headers: { ...json, "Svc-Retries": "0" } });
      ids.push(r.json.messageId as string);
    }
    const inDlq = async () => {
      const dlq = await server.call("GET", "/v2/dlq?url=" + encodeURIComponent(receiver.url("/doomed/1")) + "," + encodeURIComponent(receiver.url("/doomed/2")));
      return dlq.json.messages.length as number;
    };
    await until(async () => (await inDlq()) === 2, "two DLQ entries");

    const page = await fresh();
    await signInWithToken(page, server.url, server.token);
    await go(page, "Dead letter queue");
    for (const id of ids) await page.locator("tr", { hasText: id }).getByRole("checkbox").check();
    await page.getByText("2 selected").waitFor();
    await page.getByRole("button", { name: "Delete selected" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    for (const id of ids) await page.locator("tr", { hasText: id }).waitFor({ state: "detached" });
    expect(await inDlq()).toBe(0);
    expect(watch!.failedCalls).toEqual([]);
  });

  it("cancels a waiting message from its page", async () => {
    const published = await server.call("POST", `/v2/publish/${receiver.url("/never")}`, {
      body: "{}",
      headers: { ...json, "Svc-Delay": "1h" },
    });
    const messageId = published.json.messageId as string;
    const page = await fresh();
    await signInWithToken(page, server.url, server.token);
    await go(page, "Messages");
    await page.locator(`tr[data-message-id="${messageId}"] a.id-link`).click();
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Cancel message" }).click();
    await page.getByTestId("timeline").locator('li[data-state="CANCELED"]').waitFor({ timeout: 15_000 });
    await page.getByRole("button", { name: "Cancel", exact: true }).waitFor({ state: "detached" });
    const logs = await server.call("GET", `/v2/logs?messageId=${messageId}`);
    expect(logs.json.logs.map((l: { state: string }) => l.state)).toContain("CANCELED");
    expect(watch!.failedCalls).toEqual([]);
  });

  it("creates, pauses and deletes a schedule, with the next five runs shown while typing", async () => {
    const page = await fresh();
    await signInWithToken(page, server.url, server.token);
    await go(page, "Schedules");
    await page.getByRole("button", { name: "New schedule" }).click();
    const cron = page.getByLabel("Cron");
    await cron.fill("0 9 * * 1-5");
    await expect(page.getByTestId("cron-preview").locator("li").count()).resolves.toBe(5);
    await cron.fill("61 * * * *");
    await page.getByTestId("cron-error").waitFor();
    await cron.fill("*/10 * * * *");
    await page.getByTestId("cron-preview").waitFor();
    await page.getByLabel("Destination").fill(receiver.url("/cron"));
    await page.getByRole("button", { name: "Create schedule" }).click();

    await until(async () => (await server.call("GET", "/v2/schedules")).json.some((s: { cron: string }) => s.cron === "*/10 * * * *"), "the schedule");
    const schedule = (await server.call("GET", "/v2/schedules")).json.find((s: { cron: string }) => s.cron === "*/10 * * * *");
    const row = page.locator(`tr[data-schedule-id="${schedule.scheduleId}"]`);
    await row.getByRole("button", { name: "Pause" }).click();
    await row.getByRole("button", { name: "Resume" }).waitFor();
    expect((await server.call("GET", `/v2/schedules/${schedule.scheduleId}`)).json.isPaused).toBe(true);

    await row.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await row.waitFor({ state: "detached" });
    expect((await server.call("GET", "/v2/schedules")).json.some((s: { scheduleId: string }) => s.scheduleId === schedule.scheduleId)).toBe(false);
    expect(watch!.failedCalls).toEqual([]);
  });

  it("queue actions take effect in the API", async () => {
    const page = await fresh();
    await signInWithToken(page, server.url, server.token);
    await go(page, "Queues");
    await page.getByRole("button", { name: "New queue" }).click();
    await page.getByLabel("Name").fill("invoices");
    await page.getByRole("dialog").getByLabel("Parallelism", { exact: true }).fill("2");
    await page.getByRole("button", { name: "Save" }).click();
    const row = page.locator('tr[data-queue="invoices"]');
    await row.waitFor();
    expect((await server.call("GET", "/v2/queues/invoices")).json.parallelism).toBe(2);

    await row.getByRole("button", { name: "Parallelism" }).click();
    await page.getByRole("dialog").getByLabel("Parallelism", { exact: true }).fill("5");
    await page.getByRole("button", { name: "Save" }).click();
    await row.locator("td", { hasText: /^5$/ }).waitFor();
    expect((await server.call("GET", "/v2/queues/invoices")).json.parallelism).toBe(5);

    await row.getByRole("button", { name: "Pause" }).click();
    await row.getByRole("button", { name: "Resume" }).waitFor();
    expect((await server.call("GET", "/v2/queues/invoices")).json.paused).toBe(true);
    await row.getByRole("button", { name: "Resume" }).click();
    await row.getByRole("button", { name: "Pause" }).waitFor();
    expect((await server.call("GET", "/v2/queues/invoices")).json.paused).toBe(false);

    await row.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await row.waitFor({ state: "detached" });
    expect((await server.call("GET", "/v2/queues")).json.some((q: { name: string }) => q.name === "invoices")).toBe(false);
    expect(watch!.failedCalls).toEqual([]);
  });

  it("URL group actions take effect in the API", async () => {
    const page = await fresh();
    await signInWithToken(page, server.url, server.token);
    await go(page, "URL groups");
    await page.getByRole("button", { name: "New URL group" }).click();
    await page.getByLabel("Group name").fill("shipping");
    await page.getByLabel("Endpoint URL").fill(receiver.url("/ship-a"));
    await page.getByLabel("Endpoint name").fill("a");
    await page.getByRole("button", { name: "Save" }).click();
    const group = page.locator('section[data-group="shipping"]');
    await group.waitFor();

    await group.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByLabel("Endpoint URL").fill(receiver.url("/ship-b"));
    await page.getByRole("button", { name: "Save" }).click();
    await group.locator(`tr[data-endpoint="${receiver.url("/ship-b")}"]`).waitFor();

    await group.locator(`tr[data-endpoint="${receiver.url("/ship-a")}"]`).getByRole("button", { name: "Rename" }).click();
    await page.getByLabel("Endpoint name").fill("primary");
    await page.getByRole("button", { name: "Save" }).click();
    await group.getByText("primary").waitFor();

    await group.getByRole("button", { name: "Default headers" }).click();
    await page.getByRole("dialog").getByLabel("Headers", { exact: true }).fill("X-Team: logistics");
    await page.getByRole("button", { name: "Save" }).click();
    await group.getByText("X-Team: logistics").waitFor();

    await group.locator(`tr[data-endpoint="${receiver.url("/ship-b")}"]`).getByRole("button", { name: "Remove" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Remove" }).click();
    await group.locator(`tr[data-endpoint="${receiver.url("/ship-b")}"]`).waitFor({ state: "detached" });

    const topic = (await server.call("GET", "/v2/topics/shipping")).json;
    expect(topic.endpoints).toEqual([{ name: "primary", url: receiver.url("/ship-a") }]);
    expect(topic.headers).toEqual({ "X-Team": ["logistics"] });
    expect(watch!.failedCalls).toEqual([]);
  });

  it("flow-control actions take effect in the API", async () => {
    await server.call("POST", `/v2/publish/${receiver.url("/flow")}`, {
      body: "{}",
      headers: { ...json, "Svc-Flow-Control-Key": "console-key", "Svc-Flow-Control-Value": "parallelism=3" },
    });
    const page = await fresh();
    await signInWithToken(page, server.url, server.token);
    await go(page, "Flow control");
    const row = page.locator('tr[data-flow-key="console-key"]');
    await row.waitFor();
    const key = async () => (await server.call("GET", "/v2/flowControl/console-key")).json;

    await row.getByRole("button", { name: "Pause" }).click();
    await row.getByRole("button", { name: "Resume" }).waitFor();
    expect((await key()).isPaused).toBe(true);
    await row.getByRole("button", { name: "Resume" }).click();
    await row.getByRole("button", { name: "Pause" }).waitFor();
    expect((await key()).isPaused).toBe(false);

    await row.getByRole("button", { name: "Pin" }).click();
    await page.getByRole("dialog").getByLabel("Parallelism", { exact: true }).fill("7");
    await page.getByRole("dialog").getByRole("button", { name: "Pin" }).click();
    await row.getByRole("button", { name: "Unpin" }).waitFor();
    expect(await key()).toMatchObject({ isPinnedParallelism: true, parallelismMax: 7 });
    await row.getByRole("button", { name: "Unpin" }).click();
    await row.getByRole("button", { name: "Unpin" }).waitFor({ state: "detached" });
    expect((await key()).isPinnedParallelism).toBe(false);

    await row.getByRole("button", { name: "Reset" }).click();
    await page.getByText("Rate window reset").waitFor();
    expect(watch!.failedCalls).toEqual([]);
  });
});

describe("read-only token", () => {
  it("sees the data and cannot press a write button", async () => {
    const h = { ...json, "Svc-Retries": "0" };
    receiver.setDefault((url) => (url.startsWith("/ro-fail") ? { status: 500, body: "no" } : { status: 200, body: "ok" }));
    const published = await server.call("POST", `/v2/publish/${receiver.url("/ro-fail")}`, { body: "{}", headers: h });
    await server.call("POST", "/v2/queues", { body: JSON.stringify({ queueName: "ro-queue", parallelism: 1 }), headers: json });
    await server.call("POST", `/v2/schedules/${receiver.url("/ro-cron")}`, { body: "{}", headers: { ...json, "Svc-Cron": "0 1 * * *" } });
    await until(async () => (await server.call("GET", `/v2/dlq?messageId=${published.json.messageId}`)).json.messages.length === 1, "the DLQ entry");

    const page = await fresh();
    await signInWithToken(page, server.url, server.ferry.bootstrap.account.readOnlyToken!);
    await page.getByText("read-only", { exact: true }).waitFor();

    await go(page, "Messages");
    await page.locator(`tr[data-message-id="${published.json.messageId}"]`).waitFor();

    await go(page, "Dead letter queue");
    const entry = page.locator("tr", { hasText: published.json.messageId });
    await expect(entry.getByRole("button", { name: "Retry" }).isDisabled()).resolves.toBe(true);
    await expect(entry.getByRole("button", { name: "Delete" }).isDisabled()).resolves.toBe(true);
    await expect(page.getByRole("button", { name: "Retry all" }).isDisabled()).resolves.toBe(true);

    await go(page, "Schedules");
    await page.locator("tr", { hasText: "0 1 * * *" }).waitFor();
    await expect(page.getByRole("button", { name: "New schedule" }).isDisabled()).resolves.toBe(true);
    await expect(page.locator("tr", { hasText: "0 1 * * *" }).getByRole("button", { name: "Pause" }).isDisabled()).resolves.toBe(true);

    await go(page, "Queues");
    const queue = page.locator('tr[data-queue="ro-queue"]');
    await queue.waitFor();
    for (const name of ["Parallelism", "Pause", "Delete"]) {
      await expect(queue.getByRole("button", { name }).isDisabled()).resolves.toBe(true);
    }
    await expect(page.getByRole("button", { name: "New queue" }).isDisabled()).resolves.toBe(true);

    await go(page, "URL groups");
    await expect(page.getByRole("button", { name: "New URL group" }).isDisabled()).resolves.toBe(true);

    await go(page, "Publish");
    await page.getByLabel("Destination").fill(receiver.url("/ro"));
    await expect(page.getByRole("button", { name: "Send" }).isDisabled()).resolves.toBe(true);

    await go(page, "Settings");
    await page.getByText("Signing keys are not shown to the read-only token.").waitFor();

    // Every enabled button left on these pages is navigation or display, never a write.
    expect(watch!.failedCalls).toEqual([]);
    expect((await server.call("GET", "/v2/queues/ro-queue")).json.paused).toBe(false);
  });
});

describe("upstash dialect", () => {
  it("signs in through /v2/qstash and publishes with Upstash- headers, as the server says", async () => {
    const upstash = await startTestServer({ env: { ...adminEnv, FERRY_DIALECT: "upstash" } });
    try {
      const page = await fresh();
      await signInWithEmail(page, upstash.url, ADMIN_EMAIL, ADMIN_KEY);
      await page.getByRole("heading", { name: "Overview" }).waitFor();
      await go(page, "Publish");
      await page.getByLabel("Destination").fill(receiver.url("/upstash"));
      await page.getByLabel("Retries", { exact: true }).fill("1");
      await expect(page.getByTestId("curl").textContent()).resolves.toContain("Upstash-Retries: 1");
      const before = receiver.requests.length;
      await page.getByRole("button", { name: "Send" }).click();
      await page.getByTestId("publish-result").waitFor();
      await until(async () => receiver.requests.slice(before).some((r) => r.url === "/upstash"), "the delivery");
      const delivered = receiver.requests.slice(before).find((r) => r.url === "/upstash")!;
      expect(delivered.headers["upstash-message-id"]).toBeDefined();
      expect(watch!.failedCalls).toEqual([]);
    } finally {
      await upstash.stop();
    }
  });
});
