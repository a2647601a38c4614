import { describe, expect, it } from "vitest";
import { plans } from "../../src/domain/plans.js";
import { ACCOUNT_FIELDS, type Credentials, addCustomer, admin, ADMIN_EMAIL, basic, manage } from "../helpers/management.js";
import { TEST_TOKEN } from "../helpers/server.js";
import { accountId, other, receiver, routes, server } from "./management-fixture.js";

describe("management authentication", () => {
  it("answers 401 on every route without credentials or with wrong ones, and changes nothing", async () => {
    const index = await manage(server, "POST", "/v2/search", {
      body: { name: "a", region: "eu-west-1", type: "payg" },
    });
    expect(index.status).toBe(200);
    const before = (await manage(server, "GET", "/v2/msgsvc/user")).json;

    const wrong: (string | Credentials | null)[] = [
      null,
      { email: ADMIN_EMAIL, key: "wrong-key-0123456789" },
      { email: "nobody@test.local", key: admin.key },
      { email: ADMIN_EMAIL, key: "" },
      { email: ADMIN_EMAIL, key: other.credentials.key },
      "Basic not-base64!",
      `Basic ${Buffer.from(ADMIN_EMAIL).toString("base64")}`,
      `Bearer ${TEST_TOKEN}`,
      basic(admin).replace("Basic", "Digest"),
    ];
    for (const [method, path, body] of routes(index.json.id)) {
      for (const auth of wrong) {
        const res = await manage(server, method, path, { auth, body });
        expect(res.status, `${method} ${path} with ${JSON.stringify(auth)}`).toBe(401);
        expect(res.json.error).toMatch(/credentials/);
        expect(res.headers["www-authenticate"]).toMatch(/^Basic/);
      }
    }
    // Nothing was rotated, re-planned or deleted by the refused calls.
    expect((await manage(server, "GET", "/v2/msgsvc/user")).json).toEqual(before);
    expect((await manage(server, "GET", `/v2/search/${index.json.id}`)).json.name).toBe("a");
    expect((await server.call("GET", "/v2/keys")).status).toBe(200);
  });

  it("keeps the messaging API on Bearer tokens: Basic credentials are refused there", async () => {
    const res = await server.call("GET", "/v2/keys", { token: null, headers: { authorization: basic(admin) } });
    expect(res.status).toBe(401);
  });
});

describe("messaging account records", () => {
  it("GET user returns every seed 2.2 field of the caller's account, limits from its plan", async () => {
    const res = await manage(server, "GET", "/v2/msgsvc/user");
    expect(res.status).toBe(200);
    const record = res.json;
    expect(Object.keys(record)).toEqual(ACCOUNT_FIELDS);
    expect(record).toMatchObject({
      customer_id: ADMIN_EMAIL,
      id: accountId,
      token: TEST_TOKEN,
      active: true,
      state: "active",
      type: "paid",
      reserved_type: "",
      reserved_price: 0,
      prod_pack_enabled: false,
      prometheus_enabled: "false",
      region: "eu-central-1",
      budget: 0,
      created_by: ADMIN_EMAIL,
      ...plans.paid,
    });
    expect(typeof record.password).toBe("string");
    expect(record.creation_time).toBe(Math.floor(server.ferry.bootstrap.account.createdAt / 1000));
    expect(record.modifying_state).toBeUndefined();
    expect(record.enterprise).toBeUndefined();
  });

  it("GET users and user/{id} show only the caller's own accounts; another's id is a 404", async () => {
    const mine = await manage(server, "GET", "/v2/msgsvc/users");
    expect(mine.json.map((a: { id: string }) => a.id)).toEqual([accountId]);
    const theirs = await manage(server, "GET", "/v2/msgsvc/users", { auth: other.credentials });
    expect(theirs.json.map((a: { id: string }) => a.id)).toEqual([other.accountId]);
    expect(theirs.json[0].customer_id).toBe("other@test.local");

    expect((await manage(server, "GET", `/v2/msgsvc/user/${accountId}`)).json.id).toBe(accountId);
    const cross: [string, string, unknown?][] = [
      ["GET", `/v2/msgsvc/user/${other.accountId}`],
      ["POST", `/v2/msgsvc/rotate-token/${other.accountId}`],
      ["POST", `/v2/msgsvc/set-plan/${other.accountId}`, { plan_name: "free" }],
      ["PATCH", `/v2/msgsvc/update-budget/${other.accountId}`, { budget: 50 }],
      ["POST", `/v2/msgsvc/enable-prodpack/${other.accountId}`],
      ["GET", `/v2/msgsvc/stats/${other.accountId}`],
      ["GET", "/v2/msgsvc/user/00000000-0000-0000-0000-000000000000"],
    ];
    for (const [method, path, body] of cross) {
      const res = await manage(server, method, path, { body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json.error).toMatch(/messaging account .* not found/);
    }
    // The other customer's account is untouched and its token still works.
    const after = await manage(server, "GET", `/v2/msgsvc/user/${other.accountId}`, { auth: other.credentials });
    expect(after.json).toMatchObject({ token: other.token, type: "paid", budget: 0, prod_pack_enabled: false });
  });
});

describe("set-plan, budget and production pack", () => {
  it("switches plans: limits, type, reserved_type and last_plan_upgrade_time follow", async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await manage(server, "POST", `/v2/msgsvc/set-plan/${other.accountId}`, {
      auth: other.credentials,
      body: { plan_name: "msgsvc_fixed_1m" },
    });
    expect(res.status).toBe(200);
    expect(res.json).toBe("OK");
    const record = (await manage(server, "GET", "/v2/msgsvc/user", { auth: other.credentials })).json;
    expect(record).toMatchObject({ type: "paid", reserved_type: "msgsvc_fixed_1m", ...plans.msgsvc_fixed_1m });
    expect(record.last_plan_upgrade_time).toBeGreaterThanOrEqual(before);

    await manage(server, "POST", `/v2/msgsvc/set-plan/${other.accountId}`, {
      auth: other.credentials,
      body: { plan_name: "free" },
    });
    const free = (await manage(server, "GET", "/v2/msgsvc/user", { auth: other.credentials })).json;
    expect(free).toMatchObject({ type: "free", reserved_type: "", ...plans.free });
  });

  it("refuses a missing or unknown plan_name with 400 naming it", async () => {
    for (const body of [{}, { plan_name: "gold" }, { plan_name: 3 }, { plan_name: "qstash_fixed_1m" }]) {
      const res = await manage(server, "POST", `/v2/msgsvc/set-plan/${other.accountId}`, {
        auth: other.credentials,
        body,
      });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error).toMatch(/^invalid plan_name: /);
    }
    const bad = await manage(server, "POST", `/v2/msgsvc/set-plan/${other.accountId}`, {
      auth: other.credentials,
      body: "{not json",
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/^invalid body/);
  });

  it("sets the budget (0 or 20..10000) and the production pack", async () => {
    const path = `/v2/msgsvc/update-budget/${other.accountId}`;
    expect((await manage(server, "PATCH", path, { auth: other.credentials, body: { budget: 120 } })).json).toBe("OK");
    for (const budget of [10, 20_000, "100", 1.5, undefined]) {
      const res = await manage(server, "PATCH", path, { auth: other.credentials, body: { budget } });
      expect(res.status, String(budget)).toBe(400);
      expect(res.json.error).toMatch(/^invalid budget: /);
    }
    await manage(server, "POST", `/v2/msgsvc/enable-prodpack/${other.accountId}`, { auth: other.credentials });
    const record = (await manage(server, "GET", "/v2/msgsvc/user", { auth: other.credentials })).json;
    expect(record).toMatchObject({ budget: 120, prod_pack_enabled: true });
  });
});

describe("rotate-token", () => {
  it("refuses the old token at once, accepts the new one, and still delivers what was accepted before", async () => {
    const rotating = await addCustomer(server, "rotate@test.local");
    const oldToken = rotating.token;
    const target = receiver.url("/rotate");
    const accepted = await server.call("POST", `/v2/publish/${target}`, {
      token: oldToken,
      headers: { "svc-delay": "1s" },
      body: "before rotation",
    });
    expect(accepted.status).toBe(200);

    const res = await manage(server, "POST", `/v2/msgsvc/rotate-token/${rotating.accountId}`, {
      auth: rotating.credentials,
    });
    expect(res.status).toBe(200);
    expect(Object.keys(res.json)).toEqual(ACCOUNT_FIELDS);
    const { token, password } = res.json;
    expect(token).not.toBe(oldToken);
    expect(JSON.parse(Buffer.from(token, "base64").toString("utf8"))).toEqual({
      UserID: rotating.accountId,
      Password: password,
    });

    // The very next request with the old token fails, on every messaging route.
    for (const [method, path] of [
      ["POST", `/v2/publish/${target}`],
      ["GET", `/v2/messages/${accepted.json.messageId}`],
      ["DELETE", `/v2/messages/${accepted.json.messageId}`],
      ["DELETE", "/v2/messages"],
      ["GET", "/v2/logs"],
      ["GET", "/v2/events"],
      ["GET", "/v2/keys"],
      ["POST", "/v2/keys/rotate"],
    ] as const) {
      const refused = await server.call(method, path, { token: oldToken, body: "x" });
      expect(refused.status, `${method} ${path}`).toBe(401);
    }
    expect(
      (await server.call("GET", `/v2/logs?svc_token=${encodeURIComponent(oldToken)}`, { token: null })).status,
    ).toBe(401);

    // The new one works, and the message accepted before the rotation is delivered.
    const pending = await server.call("GET", `/v2/messages/${accepted.json.messageId}`, { token });
    expect(pending.status).toBe(200);
    const delivered = await receiver.next();
    expect(delivered.text).toBe("before rotation");
    expect(delivered.headers["svc-message-id"]).toBe(accepted.json.messageId);
    const after = await server.call("POST", `/v2/publish/${target}`, { token, body: "after rotation" });
    expect(after.status).toBe(200);
    expect((await receiver.next()).text).toBe("after rotation");

    // The record shows the new credentials from now on.
    const record = (await manage(server, "GET", "/v2/msgsvc/user", { auth: rotating.credentials })).json;
    expect(record).toMatchObject({ token, password });
  });

  it("legacy POST user/rotatetoken rotates the caller's first account", async () => {
    const legacy = await addCustomer(server, "legacy@test.local");
    const res = await manage(server, "POST", "/v2/msgsvc/user/rotatetoken", { auth: legacy.credentials });
    expect(res.status).toBe(200);
    expect(res.json.id).toBe(legacy.accountId);
    expect(res.json.token).not.toBe(legacy.token);
    expect((await server.call("GET", "/v2/keys", { token: legacy.token })).status).toBe(401);
    expect((await server.call("GET", "/v2/keys", { token: res.json.token })).status).toBe(200);
  });
});
