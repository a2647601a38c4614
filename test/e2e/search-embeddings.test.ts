import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Search } from "@upstash/search";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminEnv, manage } from "../helpers/management.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Search indexes with an OpenAI-compatible embeddings endpoint (FERRY_EMBEDDINGS_*): a local stand-in returns fixed
 * vectors, so the semantic side visibly comes from it; batching, retries, the error when it is down, and an index
 * refusing to mix embedders.
 */

interface Seen {
  auth: string | undefined;
  model: string;
  inputs: number;
}

/** Fixed 3-dimensional vectors by topic: "cat" words, "dog" words, anything else. */
function vectorFor(text: string): number[] {
  if (/cat|kitten|feline/i.test(text)) return [1, 0, 0.1];
  if (/dog|puppy|canine/i.test(text)) return [0, 1, 0.1];
  return [0, 0, 1];
}

let standIn: Server;
let standInUrl: string;
const seen: Seen[] = [];
/** Answers to fail with before answering normally: a status code per upcoming request. */
const failNext: number[] = [];

beforeAll(async () => {
  standIn = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      const { model, input } = JSON.parse(body) as { model: string; input: string[] };
      seen.push({ auth: req.headers.authorization, model, inputs: input.length });
      const status = failNext.shift();
      if (status !== undefined) {
        res.writeHead(status, { "content-type": "application/json" }).end('{"error":"busy"}');
        return;
      }
      const data = input.map((text, index) => ({ object: "embedding", index, embedding: vectorFor(text) }));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data, model }));
    });
  });
  await new Promise<void>((r) => standIn.listen(0, "127.0.0.1", r));
  standInUrl = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}/v1/embeddings`;
});
afterAll(async () => {
  await new Promise((r) => standIn.close(r));
});

async function newIndex(server: TestServer) {
  const created = await manage(server, "POST", "/v2/search", { body: { name: "e", region: "eu-west-1", type: "payg" } });
  const { endpoint, token } = created.json as { endpoint: string; token: string };
  return new Search({ url: endpoint, token, enableTelemetry: false, retry: false });
}

describe("embeddings endpoint", () => {
  const env = () => ({
    ...adminEnv,
    FERRY_EMBEDDINGS_URL: standInUrl,
    FERRY_EMBEDDINGS_MODEL: "fixed-3d",
    FERRY_EMBEDDINGS_API_KEY: "sk-test-123",
  });

  it("embeds in batches of 64 with the configured model and key, and ranks by its vectors", async () => {
    const server = await startTestServer({ env: env() });
    try {
      const docs = (await newIndex(server)).index("pets");
      seen.length = 0;
      const animals = Array.from({ length: 100 }, (_, i) => ({
        id: `a${i}`,
        content: { text: i % 2 === 0 ? `a cat named ${i}` : `a dog named ${i}` },
      }));
      await docs.upsert(animals);
      expect(seen.map((s) => s.inputs)).toEqual([64, 36]);
      expect(seen.every((s) => s.auth === "Bearer sk-test-123" && s.model === "fixed-3d")).toBe(true);
      // "kitten" shares no word with any document: only the endpoint's vectors can rank the cats first.
      const hits = await docs.search({ query: "kitten", limit: 10, semanticWeight: 1 });
      expect(hits).toHaveLength(10);
      expect(hits.every((h) => (h.content as { text: string }).text.includes("cat"))).toBe(true);
      const info = await server.call("POST", `${new URL((await manage(server, "GET", "/v2/search")).json[0].endpoint).pathname}/info`, {
        token: (await manage(server, "GET", "/v2/search")).json[0].token,
        body: "[]",
      });
      expect(info.json.result.dimension).toBe(3);
    } finally {
      await server.stop();
    }
  });

  it("retries a failing endpoint, then answers 503 naming it when it stays down", async () => {
    const server = await startTestServer({ env: env() });
    try {
      const docs = (await newIndex(server)).index("pets");
      failNext.push(500, 429);
      seen.length = 0;
      await docs.upsert({ id: "x", content: { text: "a puppy" } });
      expect(seen).toHaveLength(3);
      failNext.push(503, 503, 503);
      await expect(docs.upsert({ id: "y", content: { text: "a kitten" } })).rejects.toThrow(
        new RegExp(`embeddings endpoint ${standInUrl.replace(/[/.]/g, "\\$&")} is unavailable: HTTP 503 after 3 attempts`),
      );
      expect(failNext).toEqual([]);
      expect((await docs.info()).documentCount).toBe(1);
    } finally {
      await server.stop();
    }
  });

  it("refuses to mix: an index built by the built-in embedder refuses the endpoint's vectors", async () => {
    const first = await startTestServer({ env: adminEnv });
    const docs = (await newIndex(first)).index("mixed");
    await docs.upsert({ id: "1", content: { text: "built in" } });
    await first.stop({ keepData: true });
    const second = await startTestServer({ env: env(), dataDir: first.dataDir });
    try {
      const [record] = (await manage(second, "GET", "/v2/search")).json as { endpoint: string; token: string }[];
      // The endpoint's host was the first server's; its path finds the index on the second.
      const again = new Search({
        url: `${second.url}${new URL(record!.endpoint).pathname}`,
        token: record!.token,
        enableTelemetry: false,
        retry: false,
      }).index("mixed");
      await expect(again.upsert({ id: "2", content: { text: "a cat" } })).rejects.toThrow(
        /was built by ferry-hash-v1 \(dimension 128\) and this server embeds with openai:fixed-3d \(dimension 3\)/,
      );
      await expect(again.search({ query: "cat" })).rejects.toThrow(/was built by ferry-hash-v1/);
      await again.reset();
      await again.upsert({ id: "2", content: { text: "a cat" } });
      expect((await again.search({ query: "kitten", semanticWeight: 1 }))[0]?.id).toBe("2");
    } finally {
      await second.stop();
    }
  });
});
