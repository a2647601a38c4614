import { type Static, Type } from "./common.js";

/** `GET /health`: the liveness check, which never touches the store (docs/operations.md). */
export const Liveness = Type.Object({ status: Type.Literal("ok") });
export type Liveness = Static<typeof Liveness>;

/** `GET /ready` answering 200 (docs/operations.md); 503 answers `{status: "unavailable", reason}`. */
export const Ready = Type.Object({ status: Type.Literal("ready") });
export type Ready = Static<typeof Ready>;

/** `GET /console/config.json`: the names this server speaks, for the console page (docs/console.md). */
export const ServerConfig = Type.Object({
  dialect: Type.Union([Type.Literal("neutral"), Type.Literal("upstash")]),
  headerPrefix: Type.String(),
  tokenQuery: Type.String(),
  managementSegment: Type.String(),
  fixedPlanPrefix: Type.String(),
  version: Type.String(),
});
export type ServerConfig = Static<typeof ServerConfig>;

/** `GET /ready` answering 503: why the node is not ready. */
export const NotReady = Type.Object({ status: Type.Literal("unavailable"), reason: Type.String() });
