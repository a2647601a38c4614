import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminEnv, manage } from "../helpers/management.js";
import { httpCall, type HttpResult, startTestServer, type TestServer } from "../helpers/server.js";

/** Wire details of the search data plane that the JS client does not exercise (docs/search.md "Endpoint and routes"). */

let server: TestServer;
let index: { endpoint: string; token: string; read_only_token: string };

const call = (method: string, route: string, body?: string, token: string | null = index.token): Promise<HttpResult> =>
  httpCall(index.endpoint, method, `/${route}`, body === undefined ? { token } : { body, token });

beforeAll(async () => {
  server = await startTestServer({ env: adminEnv });
  index = (await manage(server, "POST", "/v2/search", { body: { name: "w", region: "us-central1", type: "payg" } })).json;
  const docs = [
    { id: "a1", content: { t: "first" } },
    { id: 7, content: { t: "numeric id" }, metadata: null },
  ];
  expect((await call("POST", "upsert-data/one", JSON.stringify(docs))).json).toEqual({ result: "Success" });
  // A single object is accepted too, and a route without a name uses the name "".
  expect((await call("POST", "upsert-data", JSON.stringify({ id: "d", content: { t: "default" } }))).status).toBe(200);
  expect((await call("POST", "upsert-data/two", JSON.stringify([{ id: "b", content: { t: "second" } }]))).status).toBe(200);
});
afterAll(async () => server?.stop());

describe("search wire", () => {
  it("serves info and list-namespaces by GET and POST, with the read-only token", async () => {
    for (const method of ["GET", "POST"]) {
      const info = await call(method, "info", method === "POST" ? "[]" : undefined, index.read_only_token);
      expect(info.json.result).toMatchObject({
        vectorCount: 4,
        pendingVectorCount: 0,
        dimension: 128,
        similarityFunction: "COSINE",
        namespaces: { "": { vectorCount: 1, pendingVectorCount: 0 }, one: { vectorCount: 2 }, two: { vectorCount: 1 } },
      });
      expect((await call(method, "list-namespaces", undefined, index.read_only_token)).json).toEqual({
        result: ["", "one", "two"],
      });
    }
  });

  it("turns a numeric id into its decimal string and answers fetch with null for a missing id", async () => {
    const res = await call("POST", "fetch/one", JSON.stringify({ ids: ["7", "zz"], includeMetadata: true }));
    expect(res.json).toEqual({ result: [{ id: "7", metadata: null }, null] });
  });

  it("resets by DELETE, deletes a name by DELETE, and /reset?all empties every name", async () => {
    expect((await call("DELETE", "reset/unknown")).json).toEqual({ result: "Success" });
    expect((await call("DELETE", "delete-namespace/two")).json).toEqual({ result: "Success" });
    expect((await call("GET", "list-namespaces")).json.result).toEqual(["", "one"]);
    expect((await call("POST", "reset?all", "[]")).json).toEqual({ result: "Success" });
    expect((await call("GET", "info")).json.result.vectorCount).toBe(0);
  });

  it("answers every error as JSON with its status", async () => {
    const cases: [HttpResult, number, RegExp][] = [
      [await call("POST", "upsert-data/x", "{not json"), 400, /invalid body: must be valid JSON/],
      [await call("POST", "upsert-data/x", JSON.stringify([{ id: "", content: {} }])), 400, /invalid body\[0\]\.id/],
      [await call("POST", "upsert-data/x", JSON.stringify([{ id: "q", content: "text" }])), 400, /content of document "q"/],
      [await call("POST", "search/x", JSON.stringify({ query: "a", semanticWeight: 2 })), 400, /invalid semanticWeight/],
      [await call("POST", "search/x", JSON.stringify({ topK: 3 })), 400, /invalid query/],
      [await call("POST", "range/x", JSON.stringify({ cursor: "%%", limit: 5 })), 400, /invalid cursor/],
      [await call("POST", "delete/x", JSON.stringify({ filter: "" })), 400, /invalid filter/],
      [await call("POST", "query/x", "{}"), 404, /route POST .*\/query\/x not found/],
      [await call("POST", "info", "[]", "wrong"), 401, /invalid token/],
      [await call("POST", "upsert-data/x", "[]", index.read_only_token), 403, /read-only/],
      [await httpCall(server.url, "POST", "/search/no-such-index/info", { token: index.token }), 404, /search index no-such-index not found/],
    ];
    for (const [res, status, message] of cases) {
      expect(res.status, res.text).toBe(status);
      expect(res.json).toEqual({ error: expect.stringMatching(message), status });
    }
  });

  it("answers a known route called with another method 405 with Allow, in the search body (the common handler)", async () => {
    const res = await call("DELETE", "search/x");
    expect(res.status, res.text).toBe(405);
    expect(res.headers.allow).toBe("POST");
    expect(res.json).toEqual({ error: expect.stringMatching(/method DELETE not allowed .*: use POST/), status: 405 });
  });
});
