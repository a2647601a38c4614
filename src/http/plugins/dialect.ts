import type { FastifyInstance, FastifyRequest } from "fastify";
import { chooseDialect, type Dialect, type DialectChoice, type NamePlace } from "../../domain/dialect.js";
import type { Services } from "../../services/context.js";
import { queryKeys } from "../destination.js";

declare module "fastify" {
  interface FastifyRequest {
    /**
     * The names this request speaks (docs/messaging.md "Dialects"): decided by the first `Svc-`/`Upstash-` header,
     * `svc_token`/`qstash_token` or `svc-*`/`upstash-*` query key, or `/v2/msgsvc`/`/v2/qstash` path it used; the
     * default (FERRY_DIALECT) when it used none. Handlers read and answer in it, and hand it to the use cases.
     */
    dialect: Dialect;
    /** The decision behind `dialect`, which a batch continues with its items' names. */
    dialectChoice: DialectChoice;
  }
}

/** The names of a request that may belong to a dialect, in the order a refusal reports them. */
export function* requestNames(request: FastifyRequest): Generator<readonly [NamePlace, string]> {
  const url = request.raw.url ?? "";
  const q = url.indexOf("?");
  yield ["path", q < 0 ? url : url.slice(0, q)];
  // Read from the raw URL as `splitDestination` reads it: a publish's query string is the destination's too.
  for (const key of queryKeys(url)) yield ["query parameter", key];
  for (const name of Object.keys(request.headers)) yield ["header", name];
}

/**
 * Decides every request's dialect before anything reads its names (auth reads the token parameter): registered on
 * the root, so its hook runs before every scope's. A request that mixes the two dialects is a 400 naming the name.
 */
export function decideDialects(app: FastifyInstance, services: Services): void {
  app.decorateRequest("dialect", undefined as unknown as Dialect);
  app.decorateRequest("dialectChoice", undefined as unknown as DialectChoice);
  app.addHook("onRequest", async (request) => {
    const choice = chooseDialect(services.dialects, requestNames(request));
    request.dialectChoice = choice;
    request.dialect = choice.dialect;
  });
}
