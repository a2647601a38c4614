import { describe, expect, it } from "vitest";
import { newAccount } from "../../src/services/accounts.js";
import { ADMIN_EMAIL, ADMIN_KEY, addCustomer, adminEnv } from "../helpers/management.js";
import { startTestServer } from "../helpers/server.js";
import { go, signInWithEmail, signInWithToken } from "./harness.js";
import { forgive, fresh, json, receiver, server, until, useConsoleSuite, watch } from "./suite.js";

/**
 * Getting into the console against a real Ferry, in Debian's Chromium: the headers it is served with, both ways of
 * signing in, the settings of an e-mail session, the read-only token, and the upstash dialect.
 */
useConsoleSuite();

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
      // The page polls while open: close it first, so the server's stop does not wait on its requests.
      await watch?.context.close();
      await upstash.stop();
    }
  });
});
