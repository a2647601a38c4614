import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

let receiver: Receiver;
beforeAll(async () => {
  receiver = await Receiver.start();
});
afterAll(async () => {
  await receiver.close();
});

async function errorsOf(server: TestServer, messageId: string): Promise<string[]> {
  for (let i = 0; i < 200; i++) {
    const res = await server.call("GET", `/v2/events?messageId=${messageId}&state=FAILED`);
    if (res.json.events.length > 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const res = await server.call("GET", `/v2/events?messageId=${messageId}&state=ERROR`);
  return res.json.events.map((e: { error: string }) => e.error);
}

describe("FERRY_DESTINATION_ALLOW", () => {
  it("with a loopback-only policy, delivers to loopback and refuses other hosts without a DNS lookup", async () => {
    const server = await startTestServer({ env: { FERRY_DESTINATION_ALLOW: "127.0.0.0/8,::1" } });
    try {
      await server.call("POST", `/v2/publish/${receiver.url("/ok")}`, { body: "x" });
      expect((await receiver.next()).url).toBe("/ok");
      // localhost resolves to loopback without asking DNS.
      await server.call("POST", `/v2/publish/http://localhost:${receiver.port}/local`, { body: "x" });
      expect((await receiver.next()).url).toBe("/local");

      const res = await server.call("POST", "/v2/publish/https://hooks.example.invalid/x", {
        headers: { "svc-retries": "0" },
        body: "x",
      });
      const errors = await errorsOf(server, res.json.messageId);
      expect(errors[0]).toMatch(/not allowed by FERRY_DESTINATION_ALLOW/);
      expect(errors[0]).not.toMatch(/ENOTFOUND|EAI_AGAIN/);
    } finally {
      await server.stop();
    }
  });

  it("refuses a destination outside the list like a connection error: retries, then FAILED", async () => {
    const server = await startTestServer({ env: { FERRY_DESTINATION_ALLOW: "10.0.0.0/8" } });
    try {
      const before = receiver.requests.length;
      const res = await server.call("POST", `/v2/publish/${receiver.url("/blocked")}`, {
        headers: { "svc-retries": "1", "svc-retry-delay": "0" },
        body: "x",
      });
      const errors = await errorsOf(server, res.json.messageId);
      expect(errors).toHaveLength(2);
      expect(receiver.requests.length).toBe(before);
    } finally {
      await server.stop();
    }
  });

  it("blocks the cloud-metadata range by default", async () => {
    const server = await startTestServer();
    try {
      const res = await server.call("POST", "/v2/publish/http://169.254.169.254/latest/meta-data", {
        headers: { "svc-retries": "0" },
        body: "x",
      });
      expect((await errorsOf(server, res.json.messageId))[0]).toMatch(/not allowed/);
    } finally {
      await server.stop();
    }
  });
});
