import type { FastifyRequest } from "fastify";
import { invalidField } from "../errors.js";
import { MAX_JSON_DEPTH, tooDeepAt } from "./json-depth.js";

/** Every body arrives as raw bytes (publish forwards them untouched); JSON routes parse here. */
export function rawBody(request: FastifyRequest): Buffer {
  return Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
}

export function jsonBody(request: FastifyRequest): unknown {
  const raw = rawBody(request);
  if (raw.length === 0) return undefined;
  const text = raw.toString("utf8");
  const deep = tooDeepAt(text);
  if (deep !== undefined) throw invalidField(deep, `nested deeper than ${MAX_JSON_DEPTH} levels`);
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
