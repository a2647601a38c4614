import { AppError } from "../errors.js";
import type { Embedder } from "./embedder.js";
import { timerDelay } from "../domain/timers.js";

/** Texts per request: OpenAI accepts up to 2048 inputs; smaller batches keep each request well under its limits. */
export const EMBEDDING_BATCH = 64;
const ATTEMPTS = 3;
const TIMEOUT_MS = 30_000;

export interface OpenAiEmbedderOptions {
  url: string;
  model: string;
  apiKey?: string;
  /** Waits before retry `n` (1-based); tests pass a short one. */
  backoffMs?: (attempt: number) => number;
}

function unavailable(url: string, why: string): AppError {
  return new AppError("unavailable", `embeddings endpoint ${url} is unavailable: ${why}`);
}

/** A unit-length copy: cosine similarity becomes a dot product whatever the endpoint returns. */
function normalised(values: number[]): Float32Array {
  const v = Float32Array.from(values);
  let norm = 0;
  for (const x of v) norm += x * x;
  if (norm > 0) {
    const inv = 1 / Math.sqrt(norm);
    for (let i = 0; i < v.length; i++) v[i]! *= inv;
  }
  return v;
}

/**
 * Any OpenAI-compatible `POST /v1/embeddings` endpoint (OpenAI, Ollama, vLLM, LocalAI …): batches of 64 texts,
 * up to 3 attempts on network errors, 429 and 5xx, then a 503 naming the endpoint.
 */
export function openAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const backoff = options.backoffMs ?? ((n: number) => 200 * 4 ** (n - 1));
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

  async function batch(input: string[]): Promise<Float32Array[]> {
    let lastProblem = "no attempt";
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      if (attempt > 1) await new Promise((r) => setTimeout(r, timerDelay(backoff(attempt - 1))));
      let res: Response;
      try {
        res = await fetch(options.url, {
          method: "POST",
          headers,
          body: JSON.stringify({ model: options.model, input }),
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
      } catch (error) {
        lastProblem = (error as Error).message;
        continue;
      }
      const text = await res.text();
      if (res.status === 429 || res.status >= 500) {
        lastProblem = `HTTP ${res.status}`;
        continue;
      }
      if (!res.ok) throw unavailable(options.url, `HTTP ${res.status}: ${text.slice(0, 200)}`);
      let data: unknown;
      try {
        data = (JSON.parse(text) as { data?: unknown }).data;
      } catch {
        throw unavailable(options.url, "the answer is not JSON");
      }
      if (!Array.isArray(data) || data.length !== input.length) {
        throw unavailable(options.url, `expected ${input.length} embeddings in "data"`);
      }
      const ordered = [...(data as { index?: number; embedding?: unknown }[])].sort(
        (a, b) => (a.index ?? 0) - (b.index ?? 0),
      );
      return ordered.map((d) => {
        if (!Array.isArray(d.embedding) || d.embedding.length === 0) {
          throw unavailable(options.url, "an embedding is not an array of numbers");
        }
        return normalised(d.embedding as number[]);
      });
    }
    throw unavailable(options.url, `${lastProblem} after ${ATTEMPTS} attempts`);
  }

  return {
    name: `openai:${options.model}`,
    embed: async (texts) => {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += EMBEDDING_BATCH) out.push(...(await batch(texts.slice(i, i + EMBEDDING_BATCH))));
      const dimension = out[0]?.length;
      if (out.some((v) => v.length !== dimension)) throw unavailable(options.url, "embeddings of different dimensions");
      return out;
    },
  };
}
