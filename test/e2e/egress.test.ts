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

  it("refuses a host name outside the list at connect time like a connection error: retries, then FAILED", async () => {
    const server = await startTestServer({ env: { FERRY_DESTINATION_ALLOW: "10.0.0.0/8" } });
    try {
      const before = receiver.requests.length;
      // A name is accepted at publish and checked on the address it resolves to (127.0.0.1: not in the list).
      const res = await server.call("POST", `/v2/publish/http://localhost:${receiver.port}/blocked`, {
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

  it("refuses a literal metadata address at publish time with a 400 naming it, in every written form", async () => {
    const server = await startTestServer();
    try {
      const forms = [
        "http://169.254.169.254/latest/meta-data",
        "http://100.100.100.200/latest/meta-data", // Alibaba
        "http://[fd00:ec2::254]/latest/meta-data", // AWS IPv6
        "http://[::a9fe:a9fe]/", // IPv4-compatible
        "http://[::ffff:169.254.169.254]/", // IPv4-mapped
        "http://[64:ff9b::a9fe:a9fe]/", // NAT64
        "http://2852039166/", // decimal
        "http://0251.0376.0251.0376/", // octal
        "http://0xa9fea9fe/", // hex
        "http://169.254.169.254./", // trailing dot
      ];
      for (const url of forms) {
        // Delayed a day: were the refusal missing, the test still would not connect off loopback.
        const res = await server.call("POST", `/v2/publish/${url}`, { headers: { "svc-delay": "1d" }, body: "x" });
        expect(res.status, `${url}: ${res.text}`).toBe(400);
        expect(res.json.error, url).toMatch(/^invalid destination: ".*" goes to .*FERRY_DESTINATION_ALLOW does not allow/);
      }
      const callback = await server.call("POST", `/v2/publish/${receiver.url("/never")}`, {
        headers: { "svc-callback": "http://[::ffff:a9fe:a9fe]/cb" },
        body: "x",
      });
      expect(callback.status).toBe(400);
      expect(callback.json.error).toMatch(/^invalid Svc-Callback: /);
      const failure = await server.call("POST", `/v2/publish/${receiver.url("/never")}`, {
        headers: { "svc-failure-callback": "http://100.100.100.200/f" },
        body: "x",
      });
      expect(failure.json.error).toMatch(/^invalid Svc-Failure-Callback: /);
      const schedule = await server.call("POST", "/v2/schedules/http://100.100.100.200/s", {
        headers: { "svc-cron": "0 0 1 1 *" },
      });
      expect(schedule.status).toBe(400);
      expect(schedule.json.error).toMatch(/^invalid destination: /);
      const batch = await server.call("POST", "/v2/batch", {
        headers: { "content-type": "application/json" },
        body: JSON.stringify([
          { destination: "http://[64:ff9b::6464:64c8]/b", headers: { "Svc-Delay": "1d" } },
          { destination: receiver.url("/batch-ok") },
        ]),
      });
      expect(batch.json[0].error).toMatch(/^invalid destination: /);
      expect(batch.json[1].messageId).toMatch(/^msg_/);
      expect((await receiver.waitForPath("/batch-ok")).text).toBe("");
      expect(receiver.requests.filter((r) => r.url === "/never")).toHaveLength(0);
    } finally {
      await server.stop();
    }
  });

  it("an explicit entry allows a metadata address again at publish time", async () => {
    const server = await startTestServer({ env: { FERRY_DESTINATION_ALLOW: "169.254.169.254/32,127.0.0.0/8" } });
    try {
      // Delayed a day, so the test never connects off loopback; connect time is test/unit/egress-policy.test.ts.
      const res = await server.call("POST", "/v2/publish/http://[::ffff:169.254.169.254]/x", {
        headers: { "svc-delay": "1d" },
        body: "x",
      });
      expect(res.status, res.text).toBe(200);
      const other = await server.call("POST", "/v2/publish/http://100.100.100.200/x", {
        headers: { "svc-delay": "1d" },
        body: "x",
      });
      expect(other.status).toBe(400);
    } finally {
      await server.stop();
    }
  });
});
