import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminEnv, manage } from "../helpers/management.js";
import { httpCall, type HttpResult, startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Hostile JSON bodies (docs/reliability.md "Hostile bodies"): a value nested thousands of levels deep is a 400 naming
 * its field, never a 500 from a stack overflow; a huge offending value is quoted by a short prefix only.
 */
let server: TestServer;
let accountId: string;
let index: { endpoint: string; token: string };

beforeAll(async () => {
  server = await startTestServer({ env: adminEnv });
  accountId = (await manage(server, "GET", "/v2/msgsvc/user")).json.id;
  index = (await manage(server, "POST", "/v2/search", { body: { name: "h", region: "us-central1", type: "payg" } })).json;
});
afterAll(async () => server?.stop());

const json = { "content-type": "application/json" };
/** `[[[…1…]]]` nested `depth` arrays deep, built as text (JSON.stringify of such a value overflows the stack). */
const deepArray = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

const dataPlane = (route: string, body: string): Promise<HttpResult> =>
  httpCall(index.endpoint, "POST", `/${route}`, { body, token: index.token, headers: json });

/** Every body path that reads JSON, with the field a deep value is put in. */
const bodyCases: { name: string; field: string; send(deep: string): Promise<HttpResult> }[] = [
  {
    name: "queue upsert",
    field: "parallelism",
    send: (deep) =>
      server.call("POST", "/v2/queues", { headers: json, body: `{"queueName":"q","parallelism":${deep}}` }),
  },
  {
    name: "set-plan",
    field: "plan_name",
    send: (deep) => manage(server, "POST", `/v2/msgsvc/set-plan/${accountId}`, { body: `{"plan_name":${deep}}` }),
  },
  {
    name: "search index region",
    field: "region",
    send: (deep) => manage(server, "POST", "/v2/search", { body: `{"name":"x","region":${deep},"type":"payg"}` }),
  },
  {
    name: "search index type",
    field: "type",
    send: (deep) => manage(server, "POST", "/v2/search", { body: `{"name":"x","region":"us-central1","type":${deep}}` }),
  },
  {
    name: "search document content",
    field: "body[0].content",
    send: (deep) => dataPlane("upsert-data/n", `[{"id":"d","content":{"t":${deep}}}]`),
  },
  {
    name: "search document metadata",
    field: "body[0].metadata",
    send: (deep) => dataPlane("upsert-data/n", `[{"id":"d","content":{"t":"x"},"metadata":{"m":${deep}}}]`),
  },
  {
    name: "search query",
    field: "filter",
    send: (deep) => dataPlane("search/n", `{"query":"x","filter":${deep}}`),
  },
  {
    name: "batch item",
    field: "body[0].headers",
    send: (deep) => server.call("POST", "/v2/batch", { headers: json, body: `[{"destination":"x","headers":${deep}}]` }),
  },
  {
    name: "DLQ filter",
    field: "url",
    send: (deep) => server.call("POST", "/v2/dlq/retry", { headers: json, body: `{"url":${deep}}` }),
  },
  {
    name: "URL group endpoints",
    field: "endpoints",
    send: (deep) => server.call("POST", "/v2/topics/g/endpoints", { headers: json, body: `{"endpoints":${deep}}` }),
  },
];

describe("deep JSON", () => {
  for (const c of bodyCases) {
    it(`${c.name}: 10,000 levels in ${c.field} → 400 naming it`, async () => {
      for (const deep of [deepArray(10_000), deepObject(5_000)]) {
        const res = await c.send(deep);
        expect(res.status, res.text.slice(0, 300)).toBe(400);
        expect(res.json.error).toMatch(new RegExp(`^invalid ${c.field.replace(/[[\].]/g, "\\$&")}\\b.*nested deeper than 64 levels`));
      }
    });
  }

  it("a search filter nested 10,000 parentheses deep → 400 naming the filter (search and delete)", async () => {
    const filter = `${"(".repeat(10_000)}a = 1${")".repeat(10_000)}`;
    for (const route of ["search/n", "delete/n"]) {
      const res = await dataPlane(route, JSON.stringify(route.startsWith("search") ? { query: "x", filter } : { filter }));
      expect(res.status, res.text.slice(0, 300)).toBe(400);
      expect(res.json.error).toBe("invalid filter: parentheses nested deeper than 64 levels at position 64");
    }
  });

  it("a body nested exactly to the limit is read as before", async () => {
    const res = await server.call("POST", "/v2/queues", {
      headers: json,
      body: `{"queueName":"q","parallelism":${deepArray(63)}}`,
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("invalid parallelism: an array must be an integer of at least 1");
  });
});

describe("error bodies quote a short prefix", () => {
  const huge = "x".repeat(5_000_000);
  const cases: { name: string; send(): Promise<HttpResult> }[] = [
    {
      name: "queue parallelism",
      send: () => server.call("POST", "/v2/queues", { headers: json, body: JSON.stringify({ queueName: "q", parallelism: huge }) }),
    },
    { name: "set-plan", send: () => manage(server, "POST", `/v2/msgsvc/set-plan/${accountId}`, { body: { plan_name: huge } }) },
    { name: "search region", send: () => manage(server, "POST", "/v2/search", { body: { name: "x", region: huge, type: "payg" } }) },
    { name: "queue name", send: () => server.call("POST", "/v2/queues", { headers: json, body: JSON.stringify({ queueName: `${huge}!` }) }) },
    { name: "publish header", send: () => server.call("POST", "/v2/publish/http://127.0.0.1:9/x", { headers: { "svc-delay": huge.slice(0, 8_000) }, body: "x" }) },
    { name: "query parameter", send: () => server.call("GET", `/v2/logs?cursor=${huge.slice(0, 8_000)}`) },
    { name: "batch header value", send: () => server.call("POST", "/v2/batch", { headers: json, body: JSON.stringify([{ destination: "http://127.0.0.1:9/x", headers: { [`svc-forward-${huge.slice(0, 100_000)}`]: "\u0000" } }]) }) },
    { name: "config query key", send: () => server.call("POST", `/v2/publish/http://127.0.0.1:9/x?svc-${huge.slice(0, 8_000)}=%00`, { body: "x" }) },
    { name: "unknown query key", send: () => server.call("GET", `/v2/logs?${huge.slice(0, 8_000)}=1`) },
    { name: "batch header name", send: () => server.call("POST", "/v2/batch", { headers: json, body: JSON.stringify([{ destination: "http://127.0.0.1:9/x", headers: { [`${huge} `]: "v" } }]) }) },
    { name: "search filter", send: () => dataPlane("search/n", JSON.stringify({ query: "x", filter: `${huge} ~~ 1` })) },
    { name: "search document id", send: () => dataPlane("upsert-data/n", JSON.stringify([{ id: huge, content: {} }])) },
    { name: "search document content", send: () => dataPlane("upsert-data/n", JSON.stringify([{ id: huge.slice(0, 500), content: "c" }])) },
  ];
  for (const c of cases) {
    it(`${c.name}: a 400 of at most 1 KB`, async () => {
      const res = await c.send();
      expect(res.text.length, res.text.slice(0, 300)).toBeLessThan(1024);
      // A batch answers each item (docs/batch.md); every other route refuses the request.
      const error: unknown = c.name.startsWith("batch") ? res.json[0]?.error : res.json.error;
      expect(res.status, res.text.slice(0, 300)).toBe(c.name.startsWith("batch") ? 200 : 400);
      expect(error).toMatch(/^invalid /);
    });
  }
});
