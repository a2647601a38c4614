import { type Static, Type } from "./common.js";

/**
 * One flow-control key (docs/flow-control.md): every field always present, zeros and false included; an unset limit
 * is 0, and so is the start of a window that is not running.
 */
export const FlowKey = Type.Object({
  flowControlKey: Type.String(),
  waitListSize: Type.Integer({ description: "Messages waiting for the key" }),
  parallelismMax: Type.Integer({ description: "0: no parallelism limit" }),
  parallelismCount: Type.Integer(),
  rateMax: Type.Integer({ description: "0: no rate limit" }),
  rateCount: Type.Integer(),
  ratePeriod: Type.Integer({ description: "Seconds" }),
  ratePeriodStart: Type.Integer({ description: "Unix seconds; 0 when no window is running" }),
  isPaused: Type.Boolean(),
  isPinnedParallelism: Type.Boolean(),
  isPinnedRate: Type.Boolean(),
});
export type FlowKey = Static<typeof FlowKey>;

/** `GET /v2/globalParallelism`: zero numbers are left out, as the hosted service does. */
export const GlobalParallelism = Type.Object({
  parallelismMax: Type.Optional(Type.Integer({ description: "The account's max_global_parallelism" })),
  parallelismCount: Type.Optional(Type.Integer({ description: "Messages in flight" })),
});
export type GlobalParallelism = Static<typeof GlobalParallelism>;
