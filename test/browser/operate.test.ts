import { describe, expect, it } from "vitest";
import { go, signInWithToken } from "./harness.js";
import { fresh, json, receiver, server, until, useConsoleSuite, watch } from "./suite.js";

/**
 * Operating Ferry from the console against a real Ferry and real receivers, in Debian's Chromium: every action is
 * checked in the API, and every test ends with no console error and no failing API call.
 */
useConsoleSuite();

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
    await page.getByLabel("Callback URL", { exact: true }).fill(receiver.url("/builder-callback"));
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
    expect(receiver.requests.find((r) => r.url === "/builder")!.text).toBe('{"from":"console"}');

    await row.locator("a.id-link").click();
    await page.getByTestId("timeline").locator('li[data-state="DELIVERED"]').waitFor();
    // Its callback shows up on the message's page, and reaches DELIVERED there too.
    await page.getByTestId("callbacks").getByText("DELIVERED", { exact: true }).waitFor({ timeout: 15_000 });
    expect(receiver.requests.some((r) => r.url === "/builder-callback" && r.text.includes(messageId))).toBe(true);

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
