/**
 * Wire shapes: one TypeBox schema per shape a route answers with (docs/architecture.md "Wire shapes").
 *
 * A schema here is the single source of three things:
 * - the view's return type, `Static<typeof Schema>` (src/http/views/ build values of exactly that type);
 * - the route's 2xx serialization: a RouteDoc that names the schema in `responses` makes Fastify serialize the
 *   answer through it (fast-json-stringify), so a field the schema does not name is dropped from the answer and a
 *   required field that is missing is a 500 in the tests, never a silent drift;
 * - the OpenAPI entry, which @fastify/swagger publishes from the same object.
 * The console imports the types (`import type`) from these files instead of keeping copies.
 *
 * Conventions: optional wire fields are `Type.Optional` (views omit zero values, docs/messaging.md "Wire
 * conventions"); a number that may be fractional is `Type.Number`, never `Type.Integer` (the serializer truncates);
 * no `$id`s (every schema is inlined where it is used).
 */
// Through ./typebox.ts, which the build bundles into one module (memory; docs/architecture.md "Wire shapes").
import { type Static, type TSchema, Type } from "./typebox.js";

export { type Static, type TSchema, Type };

/** Header name → values, as the hosted service shows headers in messages, logs and DLQ records. */
export const HeaderMap = Type.Record(Type.String(), Type.Array(Type.String()));

/** Any JSON value, serialized as it is (e.g. a caller's own document). */
export const AnyJson = Type.Unknown();

/** Unix milliseconds. */
export const UnixMs = Type.Integer({ description: "Unix milliseconds" });

/** A page's cursor: absent (or empty) on the last page. */
export const Cursor = Type.Optional(Type.String({ description: "Cursor of the next page; absent on the last page" }));

/**
 * Whether a schema is a typed wire shape (made with TypeBox here) rather than a loose documentation fragment: only
 * typed shapes are used to serialize answers (src/http/openapi/plugin.ts).
 */
export function isWireShape(schema: unknown): schema is TSchema {
  return typeof schema === "object" && schema !== null && Object.prototype.hasOwnProperty.call(schema, "~kind");
}

/**
 * True when two types name the same keys with the same types: a view asserts that the domain's fields and their wire
 * shape agree (e.g. src/http/views/message-view.ts), where both are in reach; the schemas import nothing from the
 * domain, since the console's build reads them.
 */
export type Same<A, B> = [A, keyof A] extends [B, keyof B] ? ([B, keyof B] extends [A, keyof A] ? true : false) : false;
