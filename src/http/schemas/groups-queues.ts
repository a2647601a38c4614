import { HeaderMap, type Static, Type, UnixMs } from "./common.js";

/** A URL group (docs/url-groups.md): endpoints in insertion order, `headers` only when defaults are set. */
export const Topic = Type.Object({
  name: Type.String(),
  createdAt: UnixMs,
  updatedAt: UnixMs,
  endpoints: Type.Array(Type.Object({ name: Type.Optional(Type.String()), url: Type.String() })),
  headers: Type.Optional(HeaderMap),
});
export type Topic = Static<typeof Topic>;

/** A FIFO queue (docs/queues.md): every key always present, zeros included (the Python SDK requires all of them). */
export const Queue = Type.Object({
  name: Type.String(),
  createdAt: UnixMs,
  updatedAt: UnixMs,
  parallelism: Type.Integer(),
  lag: Type.Integer({ description: "Messages of the queue not yet delivered or failed" }),
  paused: Type.Boolean(),
});
export type Queue = Static<typeof Queue>;
