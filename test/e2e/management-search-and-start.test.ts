import { describe, expect, it } from "vitest";
import { plans } from "../../src/domain/plans.js";
import { searchLimits } from "../../src/domain/search.js";
import { ACCOUNT_FIELDS, addCustomer, ADMIN_EMAIL, adminEnv, manage } from "../helpers/management.js";
import { startTestServer } from "../helpers/server.js";
import { other, receiver, server } from "./management-fixture.js";

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

describe("dialects (docs/messaging.md \"Dialects\")", () => {
  it("serves the management API under /v2/qstash and /v2/msgsvc at once, each in its plan names", async () => {
    const s = await startTestServer({ env: { ...adminEnv } });
    try {
      const id = s.ferry.bootstrap.account.id;
      expect((await manage(s, "GET", "/v2/msgsvc/user")).json.id).toBe(id);
      expect((await manage(s, "GET", "/v2/qstash/user")).json.id).toBe(id);
      const set = await manage(s, "POST", `/v2/qstash/set-plan/${id}`, { body: { plan_name: "qstash_fixed_1m" } });
      expect(set.json).toBe("OK");
      expect((await manage(s, "GET", "/v2/qstash/user")).json.reserved_type).toBe("qstash_fixed_1m");
      expect((await manage(s, "GET", "/v2/msgsvc/user")).json.reserved_type).toBe("msgsvc_fixed_1m");
      const bad = await manage(s, "POST", `/v2/qstash/set-plan/${id}`, { body: { plan_name: "msgsvc_fixed_1m" } });
      expect(bad.status).toBe(400);
      // /v2/search has no dialect in its path: a request naming neither answers in the default's field name.
      const index = await manage(s, "POST", "/v2/search", { body: { name: "n", region: "eu-west-1", type: "free" } });
      expect(index.json.partner_email).toBe("");
      expect(index.json.vercel_email).toBeUndefined();
    } finally {
      await s.stop();
    }
  });

  it("with FERRY_DIALECT=upstash, a search request naming neither answers vercel_email", async () => {
    const s = await startTestServer({ env: { ...adminEnv, FERRY_DIALECT: "upstash" } });
    try {
      const index = await manage(s, "POST", "/v2/search", { body: { name: "v", region: "eu-west-1", type: "free" } });
      expect(index.json.vercel_email).toBe("");
      expect(index.json.partner_email).toBeUndefined();
    } finally {
      await s.stop();
    }
  });
});
