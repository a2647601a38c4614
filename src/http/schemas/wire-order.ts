import type { TObject } from "typebox";

/**
 * A record whose documented field order has optional fields in the middle (the account record's `modifying_state`,
 * a search index's partner e-mail field): fast-json-stringify writes every required field before the optional ones,
 * so such a record would come out reordered. This keeps the declared order on the wire by listing as required (for
 * the serializer and the OpenAPI document) only the fields before the first optional one; the rest are written in
 * declaration order, each when present. The TypeScript type (`Static`) is unchanged: it comes from the properties,
 * so a view must still set every field the shape does not mark optional.
 */
export function inDeclaredOrder<T extends TObject>(schema: T): T {
  const keys = Object.keys(schema.properties);
  const required = new Set<string>(schema.required ?? []);
  const firstOptional = keys.findIndex((key) => !required.has(key));
  // Mutated in place: a copy by spreading would lose TypeBox's non-enumerable kind marker (schemas/common.ts).
  if (firstOptional >= 0) Object.assign(schema, { required: keys.slice(0, firstOptional) });
  return schema;
}
