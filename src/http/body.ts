import type { FastifyRequest } from "fastify";
import { AppError, invalidField } from "../errors.js";
import { MAX_JSON_DEPTH, shapeProblem } from "./json-depth.js";

/** Every body arrives as raw bytes (publish forwards them untouched); JSON routes parse here. */
export function rawBody(request: FastifyRequest): Buffer {
  return Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
}

/**
 * The request's JSON body. Its shape is checked before it is parsed (docs/reliability.md "Hostile bodies"): nesting
 * deeper than MAX_JSON_DEPTH is a 400 naming the path; a top-level array longer than `items.max` is refused with
 * `items.refuse()` without building the array.
 */
export function jsonBody(request: FastifyRequest, items?: { max: number; refuse(): AppError }): unknown {
  const raw = rawBody(request);
  if (raw.length === 0) return undefined;
  const text = raw.toString("utf8");
  const problem = shapeProblem(text, items ? { maxItems: items.max } : {});
  if (problem?.kind === "depth") throw invalidField(problem.path, `nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (problem?.kind === "items") throw items!.refuse();
  try {
    return JSON.parse(text);
  } catch {
    throw invalidField("body", "must be valid JSON");
  }
}

export function jsonObjectBody(request: FastifyRequest): Record<string, unknown> | undefined {
  const body = jsonBody(request);
  if (body === undefined || body === null) return undefined;
  if (typeof body !== "object" || Array.isArray(body)) throw invalidField("body", "must be a JSON object");
  return body as Record<string, unknown>;
}
