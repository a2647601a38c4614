import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plans } from "../../src/domain/plans.js";
import { searchLimits } from "../../src/domain/search.js";
import {
  ACCOUNT_FIELDS,
  type Credentials,
  addCustomer,
  admin,
  ADMIN_EMAIL,
  adminEnv,
  basic,
  manage,
} from "../helpers/management.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, TEST_TOKEN, type TestServer } from "../helpers/server.js";

let server: TestServer;
let receiver: Receiver;
let accountId: string;
let other: Awaited<ReturnType<typeof addCustomer>>;

beforeAll(async () => {
  server = await startTestServer({ env: adminEnv });
  receiver = await Receiver.start();
  accountId = server.ferry.bootstrap.account.id;
  other = await addCustomer(server, "other@test.local");
});
afterAll(async () => {
  await server.stop();
  await receiver.close();
});

/** Every management route, with a real id of the admin's resources where it takes one. */
function routes(searchId: string): [string, string, unknown?][] {
  return [
    ["GET", "/v2/msgsvc/user"],
    ["GET", "/v2/msgsvc/users"],
    ["GET", `/v2/msgsvc/user/${accountId}`],
    ["POST", `/v2/msgsvc/rotate-token/${accountId}`],
    ["POST", "/v2/msgsvc/user/rotatetoken"],
    ["POST", `/v2/msgsvc/set-plan/${accountId}`, { plan_name: "free" }],
    ["PATCH", `/v2/msgsvc/update-budget/${accountId}`, { budget: 50 }],
    ["POST", `/v2/msgsvc/enable-prodpack/${accountId}`],
    ["POST", `/v2/msgsvc/disable-prodpack/${accountId}`],
    ["GET", `/v2/msgsvc/stats/${accountId}`],
    ["GET", "/v2/msgsvc/stats"],
    ["POST", "/v2/search", { name: "x", region: "eu-west-1", type: "free" }],
    ["GET", "/v2/search"],
    ["GET", `/v2/search/${searchId}`],
    ["DELETE", `/v2/search/${searchId}`],
    ["POST", `/v2/search/${searchId}/rename`, { name: "y" }],
    ["POST", `/v2/search/${searchId}/reset-password`],
  ];
}

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

describe("inactive accounts", () => {
  it("refuses an account with active: false or state passive on the messaging API with a clear 403", async () => {
    const paused = await addCustomer(server, "inactive@test.local");
    const { store } = server.ferry.services;
    await store.accountUpdate({ id: paused.accountId, patch: { active: false } });
    let res = await server.call("POST", `/v2/publish/${receiver.url("/x")}`, { token: paused.token, body: "x" });
    expect(res.status).toBe(403);
    expect(res.json.error).toMatch(/account is not active/);

    await store.accountUpdate({ id: paused.accountId, patch: { active: true, state: "passive" } });
    res = await server.call("GET", "/v2/logs", { token: paused.token });
    expect(res.status).toBe(403);
    expect(res.json.error).toMatch(/state: passive/);

    // The management record shows the state; the account works again once active.
    const record = (await manage(server, "GET", "/v2/msgsvc/user", { auth: paused.credentials })).json;
    expect(record).toMatchObject({ active: true, state: "passive" });
    await store.accountUpdate({ id: paused.accountId, patch: { state: "active", modifyingState: "suspended" } });
    expect((await server.call("GET", "/v2/logs", { token: paused.token })).status).toBe(200);
    const shown = (await manage(server, "GET", "/v2/msgsvc/user", { auth: paused.credentials })).json;
    expect(shown.modifying_state).toBe("suspended");
    expect(Object.keys(shown).indexOf("modifying_state")).toBe(ACCOUNT_FIELDS.indexOf("state") + 1);
  });
});

describe("search indexes", () => {
  const SEARCH_FIELDS = [
    "customer_id",
    "id",
    "name",
    "endpoint",
    "type",
    "region",
    "partner_email",
    "token",
    "read_only_token",
    "max_vector_count",
    "max_monthly_reranks",
    "max_daily_updates",
    "max_daily_queries",
    "max_monthly_bandwidth",
    "max_writes_per_second",
    "max_query_per_second",
    "max_reads_per_request",
    "max_writes_per_request",
    "creation_time",
    "input_enrichment_enabled",
    "throughput_vector",
  ];

  it("creates an index with the full seed 2.1 record, limits by type, endpoint and tokens", async () => {
    for (const type of ["free", "payg", "fixed"] as const) {
      const res = await manage(server, "POST", "/v2/search", {
        body: { name: `idx-${type}`, region: "us-central1", type },
      });
      expect(res.status).toBe(200);
      expect(Object.keys(res.json)).toEqual(SEARCH_FIELDS);
      expect(res.json).toMatchObject({
        customer_id: ADMIN_EMAIL,
        name: `idx-${type}`,
        type,
        region: "us-central1",
        partner_email: "",
        input_enrichment_enabled: false,
        ...searchLimits[type],
      });
      // One point a minute over the last hour; a new index has done nothing yet (docs/search.md "Usage").
      expect(res.json.throughput_vector).toHaveLength(60);
      expect(res.json.throughput_vector[59].x).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:00 \+0000 UTC$/);
      expect(res.json.throughput_vector.every((p: { y: number }) => p.y === 0)).toBe(true);
      expect(res.json.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.json.endpoint).toMatch(new RegExp(`^${server.url}/search/[a-z]+-[a-z]+-\\d{5}-us1$`));
      expect(res.json.token).toMatch(/^\w{20,}$/);
      expect(res.json.read_only_token).toMatch(/^\w{20,}$/);
      expect(res.json.read_only_token).not.toBe(res.json.token);
      expect(Math.abs(res.json.creation_time - Date.now() / 1000)).toBeLessThan(60);
    }
  });

  it("refuses a missing or invalid name, region or type with 400 naming the field", async () => {
    const valid = { name: "n", region: "eu-west-1", type: "free" };
    const cases: [Record<string, unknown>, string][] = [
      [{ region: "eu-west-1", type: "free" }, "name"],
      [{ ...valid, name: "" }, "name"],
      [{ ...valid, name: 5 }, "name"],
      [{ name: "n", type: "free" }, "region"],
      [{ ...valid, region: "us-east-1" }, "region"],
      [{ name: "n", region: "eu-west-1" }, "type"],
      [{ ...valid, type: "paid" }, "type"],
      [{ ...valid, type: null }, "type"],
    ];
    for (const [body, field] of cases) {
      const res = await manage(server, "POST", "/v2/search", { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error).toMatch(new RegExp(`^invalid ${field}: `));
    }
    for (const body of ["[1]", "nope"]) {
      const res = await manage(server, "POST", "/v2/search", { body });
      expect(res.status).toBe(400);
      expect(res.json.error).toMatch(/^invalid body: /);
    }
    expect((await manage(server, "POST", "/v2/search")).json.error).toMatch(/^invalid name: is required/);
  });

  it("lists, gets, renames, resets credentials and deletes; another customer gets 404", async () => {
    const created = (
      await manage(server, "POST", "/v2/search", { body: { name: "life", region: "eu-west-1", type: "payg" } })
    ).json;
    const id = created.id;
    expect((await manage(server, "GET", "/v2/search")).json.map((i: { id: string }) => i.id)).toContain(id);
    expect((await manage(server, "GET", `/v2/search/${id}`)).json).toEqual(created);

    // Another customer sees none of it and can change none of it.
    expect((await manage(server, "GET", "/v2/search", { auth: other.credentials })).json).toEqual([]);
    for (const [method, path, body] of [
      ["GET", `/v2/search/${id}`],
      ["DELETE", `/v2/search/${id}`],
      ["POST", `/v2/search/${id}/rename`, { name: "stolen" }],
      ["POST", `/v2/search/${id}/reset-password`],
    ] as [string, string, unknown?][]) {
      const res = await manage(server, method, path, { auth: other.credentials, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json.error).toBe(`search index ${id} not found`);
    }
    expect((await manage(server, "GET", `/v2/search/${id}`)).json).toEqual(created);

    const renamed = await manage(server, "POST", `/v2/search/${id}/rename`, { body: { name: "renamed" } });
    expect(renamed.json).toBe("OK");
    expect((await manage(server, "POST", `/v2/search/${id}/rename`, { body: {} })).json.error).toMatch(
      /^invalid name: /,
    );
    expect((await manage(server, "POST", `/v2/search/${id}/reset-password`)).json).toBe("OK");
    const after = (await manage(server, "GET", `/v2/search/${id}`)).json;
    expect(after.name).toBe("renamed");
    expect(after.token).not.toBe(created.token);
    expect(after.read_only_token).not.toBe(created.read_only_token);
    expect({ ...after, name: created.name, token: created.token, read_only_token: created.read_only_token }).toEqual(
      created,
    );

    expect((await manage(server, "DELETE", `/v2/search/${id}`)).json).toBe("OK");
    expect((await manage(server, "GET", `/v2/search/${id}`)).status).toBe(404);
    expect((await manage(server, "DELETE", `/v2/search/${id}`)).status).toBe(404);
  });
});

describe("first start", () => {
  it("generates the first customer's credentials once when none are configured, and keeps them", async () => {
    const first = await startTestServer();
    const dataDir = first.dataDir;
    try {
      const { adminEmail, adminApiKey } = first.ferry.bootstrap.generated;
      expect(adminEmail).toBe("admin@ferry.local");
      expect(adminApiKey).toMatch(/^key_\w{32}$/);
      const credentials = { email: adminEmail!, key: adminApiKey! };
      const record = (await manage(first, "GET", "/v2/msgsvc/user", { auth: credentials })).json;
      expect(record).toMatchObject({ customer_id: "admin@ferry.local", token: first.token, type: "paid" });
    } finally {
      await first.stop({ keepData: true });
    }
    const again = await startTestServer({ dataDir });
    try {
      expect(again.ferry.bootstrap.generated.adminApiKey).toBeUndefined();
      const res = await manage(again, "GET", "/v2/msgsvc/user", {
        auth: { email: "admin@ferry.local", key: first.ferry.bootstrap.generated.adminApiKey! },
      });
      expect(res.status).toBe(200);
    } finally {
      await again.stop({ keepData: true });
    }
    // Configured values win on a later start: a new e-mail renames the customer, a new key replaces the old one.
    const configured = await startTestServer({
      dataDir,
      env: { FERRY_ADMIN_EMAIL: "ops@test.local", FERRY_ADMIN_API_KEY: "configured-key-0123456789" },
    });
    try {
      const old = { email: "admin@ferry.local", key: first.ferry.bootstrap.generated.adminApiKey! };
      expect((await manage(configured, "GET", "/v2/msgsvc/user", { auth: old })).status).toBe(401);
      const res = await manage(configured, "GET", "/v2/msgsvc/user", {
        auth: { email: "ops@test.local", key: "configured-key-0123456789" },
      });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ customer_id: "ops@test.local", id: first.ferry.bootstrap.account.id });
    } finally {
      await configured.stop();
    }
  });

  it("puts the first account on FERRY_DEFAULT_PLAN", async () => {
    const s = await startTestServer({ env: { ...adminEnv, FERRY_DEFAULT_PLAN: "msgsvc_fixed_10m" } });
    try {
      const record = (await manage(s, "GET", "/v2/msgsvc/user")).json;
      expect(record).toMatchObject({ reserved_type: "msgsvc_fixed_10m", ...plans.msgsvc_fixed_10m });
    } finally {
      await s.stop();
    }
  });
});

describe("upstash dialect", () => {
  it("serves the management API under /v2/qstash with vercel_email and qstash_fixed_* plan names", async () => {
    const s = await startTestServer({ env: { ...adminEnv, FERRY_DIALECT: "upstash" } });
    try {
      const id = s.ferry.bootstrap.account.id;
      expect((await manage(s, "GET", "/v2/msgsvc/user")).status).toBe(404);
      expect((await manage(s, "GET", "/v2/qstash/user")).json.id).toBe(id);
      const set = await manage(s, "POST", `/v2/qstash/set-plan/${id}`, { body: { plan_name: "qstash_fixed_1m" } });
      expect(set.json).toBe("OK");
      expect((await manage(s, "GET", "/v2/qstash/user")).json.reserved_type).toBe("qstash_fixed_1m");
      const bad = await manage(s, "POST", `/v2/qstash/set-plan/${id}`, { body: { plan_name: "msgsvc_fixed_1m" } });
      expect(bad.status).toBe(400);
      const index = await manage(s, "POST", "/v2/search", { body: { name: "v", region: "eu-west-1", type: "free" } });
      expect(index.json.vercel_email).toBe("");
      expect(index.json.partner_email).toBeUndefined();
    } finally {
      await s.stop();
    }
  });
});
