import { Search } from "@upstash/search";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminEnv, manage } from "../helpers/management.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * The official @upstash/search client, unmodified, against a real Ferry (SQLite, or PostgreSQL under
 * FERRY_TEST_STORE=postgres): an index created through the management API, then its endpoint's whole data plane.
 */

let server: TestServer;
let index: { id: string; endpoint: string; token: string; read_only_token: string };

const TOPICS = [
  "python programming language interpreter",
  "chocolate cake baking recipe oven",
  "mountain hiking trail summit",
  "violin concerto orchestra symphony",
  "volcano eruption lava magma",
  "submarine ocean depth sonar",
  "tennis racket serve tournament",
  "astronomy telescope galaxy nebula",
];
const FILLER = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda", "sigma"];

/** 300 documents: doc-<n>, one topic each, a category, a price and a tag list. */
function documents() {
  return Array.from({ length: 300 }, (_, n) => ({
    id: `doc-${String(n).padStart(3, "0")}`,
    content: {
      title: n < TOPICS.length ? TOPICS[n]! : `${FILLER[n % 10]} ${FILLER[(n * 7) % 10]} note ${n}`,
      body: `record number ${n} ${FILLER[(n * 3) % 10]}`,
      tags: [FILLER[n % 10], n % 2 === 0 ? "even" : "odd"],
    },
    metadata: { category: n % 3 === 0 ? "red" : "blue", price: n, active: n % 5 === 0 },
  }));
}

const client = (token = index.token) => new Search({ url: index.endpoint, token, enableTelemetry: false });

beforeAll(async () => {
  server = await startTestServer({ env: adminEnv });
  const created = await manage(server, "POST", "/v2/search", {
    body: { name: "docs", region: "eu-west-1", type: "payg" },
  });
  expect(created.status).toBe(200);
  index = created.json;
  // The generated endpoint uses the Host the management call arrived on: this very server.
  expect(index.endpoint.startsWith(server.url)).toBe(true);
  const docs = client().index("books");
  const all = documents();
  for (let i = 0; i < all.length; i += 100) await docs.upsert(all.slice(i, i + 100));
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

describe("search through the official client", () => {
  it("finds the relevant document first for an exact query and for a misspelt one", async () => {
    const docs = client().index("books");
    const exact = await docs.search({ query: "chocolate cake recipe", limit: 5 });
    expect(exact[0]?.id).toBe("doc-001");
    expect(exact[0]?.content).toEqual(documents()[1]!.content);
    expect(exact[0]?.metadata).toEqual({ category: "blue", price: 1, active: false });
    for (let i = 1; i < exact.length; i++) expect(exact[i - 1]!.score).toBeGreaterThanOrEqual(exact[i]!.score);
    // Scores are fractions in [0, 1] on the wire, never cut to integers (src/http/schemas/search.ts).
    expect(exact.every((h) => h.score >= 0 && h.score <= 1)).toBe(true);
    expect(exact.some((h) => h.score > 0 && h.score < 1)).toBe(true);

    const typo = await docs.search({ query: "astronmy telescpe", limit: 3 });
    expect(typo.map((h) => h.id)).toContain("doc-007");
    expect(typo[0]?.id).toBe("doc-007");
    const stem = await docs.search({ query: "baking cakes", limit: 3, semanticWeight: 0 });
    expect(stem[0]?.id).toBe("doc-001");
  });

  it("returns nothing that shares no term with the query when full text alone ranks", async () => {
    const hits = await client().index("books").search({ query: "xylophone", semanticWeight: 0 });
    expect(hits).toEqual([]);
  });

  it("filters before ranking, with strings and with the client's filter trees", async () => {
    const docs = client().index("books");
    const red = await docs.search({ query: "record", limit: 50, filter: "@metadata.category = 'red' AND @metadata.price < 30" });
    expect(red.length).toBe(10);
    expect(red.every((h) => (h.metadata as { category: string }).category === "red")).toBe(true);
    const tree = await docs.search({
      query: "record",
      limit: 50,
      filter: { AND: [{ "@metadata.price": { lessThan: 10 } }, { "tags": { contains: "even" } }] } as never,
    });
    expect(tree.map((h) => h.id).sort()).toEqual(["doc-000", "doc-002", "doc-004", "doc-006", "doc-008"]);
  });

  it("answers a malformed filter with a 400 naming the position", async () => {
    await expect(client().index("books").search({ query: "x", filter: "price <" })).rejects.toThrow(
      /invalid filter: .* at position 7/,
    );
  });

  it("fetches by ids (null for a missing one) and by prefix", async () => {
    const docs = client().index("books");
    const got = await docs.fetch(["doc-004", "nope", "doc-005"]);
    expect(got.map((d) => d?.id ?? null)).toEqual(["doc-004", null, "doc-005"]);
    expect(got[0]?.metadata).toEqual({ category: "blue", price: 4, active: false });
    const byPrefix = await docs.fetch({ prefix: "doc-01" });
    expect(byPrefix.map((d) => d!.id)).toEqual(Array.from({ length: 10 }, (_, i) => `doc-01${i}`));
  });

  it("ranges through every document with cursors, in id order", async () => {
    const docs = client().index("books");
    const seen: string[] = [];
    let cursor = "0";
    for (let page = 0; page < 20; page++) {
      const r = await docs.range({ cursor, limit: 40 });
      seen.push(...r.documents.map((d) => d.id));
      cursor = r.nextCursor;
      if (cursor === "") break;
    }
    expect(cursor).toBe("");
    expect(seen).toEqual(documents().map((d) => d.id));
  });

  it("counts documents in info and lists index names", async () => {
    const search = client();
    await search.index("other").upsert({ id: "x", content: { text: "lonely" } });
    const info = await search.info();
    expect(info.indexes.books).toEqual({ documentCount: 300, pendingDocumentCount: 0 });
    expect(info.documentCount).toBe(301);
    expect(info.diskSize).toBeGreaterThan(0);
    expect((await search.listIndexes()).sort()).toEqual(["books", "other"]);
    expect(await search.index("books").info()).toEqual({ documentCount: 300, pendingDocumentCount: 0 });
    await search.index("other").deleteIndex();
    expect(await search.listIndexes()).toEqual(["books"]);
  });

  it("refuses writes with the read-only token but lets it read, and refuses another index's token", async () => {
    const ro = client(index.read_only_token).index("books");
    await expect(ro.upsert({ id: "z", content: { a: "b" } })).rejects.toThrow(/read-only/);
    await expect(ro.delete(["doc-000"])).rejects.toThrow(/read-only/);
    await expect(ro.reset()).rejects.toThrow(/read-only/);
    expect((await ro.fetch(["doc-000"]))[0]?.id).toBe("doc-000");
    const second = await manage(server, "POST", "/v2/search", { body: { name: "b", region: "us-central1", type: "free" } });
    const foreign = new Search({ url: index.endpoint, token: second.json.token, enableTelemetry: false });
    await expect(foreign.index("books").fetch(["doc-000"])).rejects.toThrow(/invalid token/);
    const res = await fetch(`${index.endpoint}/info`, { method: "POST", body: "[]" });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ status: 401 });
  });

  it("deletes by id, by prefix and by filter, then resets", async () => {
    const docs = client().index("books");
    expect(await docs.delete(["doc-000", "doc-001", "missing"])).toEqual({ deleted: 2 });
    expect(await docs.delete({ prefix: "doc-29" })).toEqual({ deleted: 10 });
    expect(await docs.delete({ filter: "@metadata.price >= 280" } as never)).toEqual({ deleted: 10 });
    expect((await docs.info()).documentCount).toBe(278);
    expect((await docs.search({ query: "chocolate cake recipe", semanticWeight: 0 })).map((h) => h.id)).not.toContain(
      "doc-001",
    );
    expect(await docs.reset()).toBe("Success");
    expect((await docs.info()).documentCount).toBe(0);
    expect(await docs.search({ query: "record" })).toEqual([]);
  });

  it("deleting the index through the management API deletes its data and its endpoint answers 404", async () => {
    const docs = client().index("gone");
    await docs.upsert({ id: "a", content: { text: "to be deleted" } });
    expect((await manage(server, "DELETE", `/v2/search/${index.id}`)).status).toBe(200);
    const res = await fetch(`${index.endpoint}/info`, { method: "POST", headers: { authorization: `Bearer ${index.token}` } });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ status: 404 });
  });
});
