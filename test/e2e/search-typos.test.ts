import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminEnv, manage } from "../helpers/management.js";
import { httpCall, startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Typo tolerance (docs/search.md "Typo tolerance", ../shared/docs/search-api.md): a query with one misspelt word
 * finds its document among the first few, over look-alike documents. The corpus reproduces the outside finding: four
 * look-alikes share every other query word (one of them twice). Before the fix the misspelt query ranked the document
 * 5th on both stores, while the correctly spelt one ranked it 1st.
 */
let server: TestServer;
let index: { endpoint: string; token: string };

const docs = [
  { id: "sax", content: { title: "Saxophone lessons for nervous beginners", body: "Patient teacher, quiet room." } },
  ...["Guitar", "Piano", "Drum", "Violin"].map((name) => ({
    id: name.toLowerCase(),
    content: { title: `${name} lessons for nervous beginners`, body: "Beginners welcome." },
  })),
];

const search = async (query: string, extra: Record<string, unknown> = {}): Promise<string[]> => {
  const res = await httpCall(index.endpoint, "POST", "/search/music", {
    body: JSON.stringify({ query, topK: 5, ...extra }),
    token: index.token,
  });
  expect(res.status, res.text).toBe(200);
  return (res.json.result as { id: string }[]).map((r) => r.id);
};

beforeAll(async () => {
  server = await startTestServer({ env: adminEnv });
  index = (await manage(server, "POST", "/v2/search", { body: { name: "typos", region: "us-central1", type: "payg" } })).json;
  const res = await httpCall(index.endpoint, "POST", "/upsert-data/music", { body: JSON.stringify(docs), token: index.token });
  expect(res.json).toEqual({ result: "Success" });
});
afterAll(async () => server?.stop());

describe("search typo tolerance", () => {
  it("the correctly spelt query ranks its document first (the baseline)", async () => {
    expect((await search("Saxophone lessons for nervous beginners"))[0]).toBe("sax");
  });

  it("a misspelt word still finds its document in the top 3 over four look-alikes", async () => {
    const ids = await search("Saxaphone lessons for nervous beginners");
    expect(ids.slice(0, 3), ids.join(" ")).toContain("sax");
  });

  it("a transposition and a dropped letter are corrected too, also on the full-text side alone", async () => {
    expect((await search("Saxohpone lessons for nervous beginners")).slice(0, 3)).toContain("sax");
    expect((await search("Saxophne lessons for nervous beginners")).slice(0, 3)).toContain("sax");
    expect((await search("saxaphone", { semanticWeight: 0 }))[0]).toBe("sax");
  });

  it("a short word is not corrected, and a correct query is answered as before", async () => {
    // "drun" (4 letters) gets no edit: only the trigram side can find "drum".
    expect(await search("drun", { semanticWeight: 0 })).toEqual([]);
    expect((await search("Violin lessons"))[0]).toBe("violin");
  });
});
