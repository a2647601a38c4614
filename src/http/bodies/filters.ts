import { invalidField } from "../../errors.js";
import type { MessageFilter } from "../../store/store.js";
import { bodyScalar, messageFilterFromQuery, type Query } from "../query.js";

/*
 * Filters sent as a JSON body (the Python and Go SDKs) instead of query keys (the JS SDK): the body's fields read as
 * one query, so the same query readers apply to both (docs/messaging.md "Messages and logs").
 */

/**
 * A JSON body's fields as a query: arrays or single scalars, null meaning absent. `lists` names the fields that must
 * be arrays of strings, with the refusal's text. Null prototype: a field named `__proto__` is a key like any other
 * (docs/reliability.md, "Header maps").
 */
export function bodyAsQuery(body: Record<string, unknown>, lists: Readonly<Record<string, string>> = {}): Query {
  const query = Object.create(null) as Query;
  for (const [key, value] of Object.entries(body)) {
    if (value === null || value === undefined) continue;
    if (Object.hasOwn(lists, key) && !(Array.isArray(value) && value.every((v) => typeof v === "string"))) {
      throw invalidField(key, lists[key]!);
    }
    query[key] = Array.isArray(value) ? value.map((v) => bodyScalar(v, key)) : bodyScalar(value, key);
  }
  return query;
}

/** The message filter of a JSON body: arrays or single strings. */
export function messageFilterFromBody(body: Record<string, unknown>): MessageFilter {
  return messageFilterFromQuery(bodyAsQuery(body));
}
