import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, TEST_CURRENT_KEY, type TestServer } from "../helpers/server.js";
import { verifySignature } from "../helpers/signature.js";

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  server = await startTestServer();
  receiver = await Receiver.start();
});
afterAll(async () => {
  await server.stop();
  await receiver.close();
});

describe("publish to a URL", () => {
  it("delivers the body, forwarded headers and a valid signature", async () => {
    const target = receiver.url("/hook?keep=1");
    const res = await server.call("POST", `/v2/publish/${target}&svc-retries=1`, {
      headers: { "content-type": "application/json", "svc-forward-x-custom": "abc", "x-not-forwarded": "no" },
      body: '{"hello":"world"}',
    });
    expect(res.status).toBe(200);
    expect(res.json.messageId).toMatch(/^msg_/);

    const got = await receiver.next();
    expect(got.method).toBe("POST");
    expect(got.url).toBe("/hook?keep=1");
    expect(got.text).toBe('{"hello":"world"}');
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.headers["x-custom"]).toBe("abc");
    expect(got.headers["x-not-forwarded"]).toBeUndefined();
    expect(got.headers["svc-message-id"]).toBe(res.json.messageId);
    expect(got.headers["svc-retried"]).toBe("0");
    expect(got.headers["user-agent"]).toMatch(/^Ferry\//);
    const claims = await verifySignature({
      signature: got.headers["svc-signature"],
      key: TEST_CURRENT_KEY,
      url: target,
      body: got.body,
    });
    expect(claims.nbf).toBe(0);
    expect(Number(claims.exp) - Number(claims.iat)).toBe(300);
    expect(String(claims.jti)).toMatch(/^jwt_/);
  });

  it("answers 202 with the existing id for a duplicate deduplication id", async () => {
    const path = `/v2/publish/${receiver.url("/dedup")}`;
    const headers = { "svc-deduplication-id": "abc-1" };
    const first = await server.call("POST", path, { headers, body: "x" });
    const second = await server.call("POST", path, { headers, body: "x" });
    expect(first.status).toBe(200);
    expect(second.status).toBe(202);
    expect(second.json).toEqual({ messageId: first.json.messageId, url: receiver.url("/dedup"), deduplicated: true });
  });

  it("refuses a missing or wrong token with 401", async () => {
    const path = `/v2/publish/${receiver.url("/x")}`;
    expect((await server.call("POST", path, { token: null, body: "x" })).status).toBe(401);
    expect((await server.call("POST", path, { token: "wrong", body: "x" })).status).toBe(401);
  });
});
