import { type SearchRegion, type SearchType, searchRegions, searchTypes } from "../../domain/search.js";
import { invalidField, quoted } from "../../errors.js";
import type { NewSearchIndex } from "../../services/search.js";

/** The management API's search-index bodies (docs/management.md "Search indexes"). */

const MAX_NAME = 256;

function requiredName(value: unknown): string {
  if (value === undefined || value === null) throw invalidField("name", "is required");
  if (typeof value !== "string" || value.trim() === "") throw invalidField("name", "must be a non-empty string");
  if (value.length > MAX_NAME) throw invalidField("name", `must be at most ${MAX_NAME} characters`);
  return value;
}

function requiredEnum<T extends string>(body: Record<string, unknown>, field: string, allowed: readonly T[]): T {
  const value = body[field];
  if (value === undefined || value === null) throw invalidField(field, `is required (one of ${allowed.join(", ")})`);
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    throw invalidField(field, `${quoted(value)} must be one of ${allowed.join(", ")}`);
  }
  return value as T;
}

/** `POST /v2/search`: `{name, region, type}`. */
export function parseSearchIndexCreate(body: Record<string, unknown>): NewSearchIndex {
  return {
    name: requiredName(body.name),
    region: requiredEnum<SearchRegion>(body, "region", searchRegions),
    type: requiredEnum<SearchType>(body, "type", searchTypes),
  };
}

/** `POST /v2/search/:id/rename`: `{name}`. */
export function parseSearchIndexRename(body: Record<string, unknown>): string {
  return requiredName(body.name);
}
