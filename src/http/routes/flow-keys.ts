import type { FastifyInstance, FastifyReply } from "fastify";
import { parseDurationMs } from "../../domain/duration.js";
import { MAX_PERIOD_SEC } from "../../domain/flow-control-value.js";
import { parseBool } from "../../domain/publish-config.js";
import { invalidField } from "../../errors.js";
import type { Services } from "../../services/context.js";
import {
  getFlowKey,
  globalParallelism,
  listFlowKeys,
  type PinInput,
  pinFlowKey,
  resetFlowKey,
  setFlowKeyPaused,
  unpinFlowKey,
} from "../../services/flow-keys.js";
import { type Query, rejectUnknownKeys, single } from "../query.js";
import { flowKeyRecord, globalParallelismRecord } from "../views/flow-key-view.js";
import { readable } from "../plugins/auth.js";

type KeyParams = { Params: { key: string } };

/** `period` of the pin endpoint: seconds (a bare integer) or a duration such as `1m`, 1 s to 1 week. */
function pinPeriod(raw: string): number {
  const seconds = Math.floor(parseDurationMs(raw, "period") / 1000);
  if (seconds < 1 || seconds > MAX_PERIOD_SEC)
    throw invalidField("period", `must be between 1s and 1 week, got "${raw}"`);
  return seconds;
}

/** A positive integer; empty or `0` means "not given" (clients send zero values for unset options). */
function optionalCount(query: Query, key: string): number | undefined {
  const raw = single(query, key)?.trim();
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n)) throw invalidField(key, `"${raw}" must be a positive integer`);
  return n === 0 ? undefined : n;
}

/** Flow-control keys and global parallelism (docs/flow-control.md). Actions answer 200 with an empty body. */
export function flowControlRoutes(app: FastifyInstance, services: Services): void {
  const empty = (reply: FastifyReply) => reply.status(200).send();

  app.get("/v2/flowControl", readable, async (request) => {
    const query = request.query as Query;
    rejectUnknownKeys(query, new Set(["search"]), request.dialect.tokenQuery);
    const search = single(query, "search");
    const keys = await listFlowKeys(services, request.account, search === "" ? undefined : search);
    return keys.map(flowKeyRecord);
  });

  app.get<KeyParams>("/v2/flowControl/:key", readable, async (request) =>
    flowKeyRecord(await getFlowKey(services, request.account, request.params.key)),
  );

  for (const action of ["reset", "resetRate"]) {
    app.post<KeyParams>(`/v2/flowControl/:key/${action}`, async (request, reply) => {
      await resetFlowKey(services, request.account, request.params.key);
      return empty(reply);
    });
  }

  app.post<KeyParams>("/v2/flowControl/:key/pause", async (request, reply) => {
    await setFlowKeyPaused(services, request.account, request.params.key, true);
    return empty(reply);
  });

  app.post<KeyParams>("/v2/flowControl/:key/resume", async (request, reply) => {
    await setFlowKeyPaused(services, request.account, request.params.key, false);
    return empty(reply);
  });

  app.post<KeyParams>("/v2/flowControl/:key/pin", async (request, reply) => {
    const query = request.query as Query;
    rejectUnknownKeys(query, new Set(["parallelism", "rate", "period"]), request.dialect.tokenQuery);
    const input: PinInput = {};
    const parallelism = optionalCount(query, "parallelism");
    const rate = optionalCount(query, "rate");
    const period = single(query, "period")?.trim();
    if (parallelism !== undefined) input.parallelism = parallelism;
    if (rate !== undefined) input.rate = rate;
    if (period !== undefined && period !== "" && period !== "0") input.periodSec = pinPeriod(period);
    await pinFlowKey(services, request.account, request.params.key, input);
    return empty(reply);
  });

  // Without any part named, both are unpinned.
  app.post<KeyParams>("/v2/flowControl/:key/unpin", async (request, reply) => {
    const query = request.query as Query;
    rejectUnknownKeys(query, new Set(["parallelism", "rate"]), request.dialect.tokenQuery);
    const part = (key: string) => {
      const raw = single(query, key);
      return raw === undefined || raw === "" ? undefined : parseBool(raw, key);
    };
    const parallelism = part("parallelism");
    const rate = part("rate");
    const neither = parallelism === undefined && rate === undefined;
    await unpinFlowKey(services, request.account, request.params.key, {
      parallelism: neither || parallelism === true,
      rate: neither || rate === true,
    });
    return empty(reply);
  });

  app.get("/v2/globalParallelism", readable, async (request) =>
    globalParallelismRecord(await globalParallelism(services, request.account)),
  );
}
