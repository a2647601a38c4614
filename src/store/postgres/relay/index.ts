import type { Logger } from "pino";
import { isPlainDelivery } from "../../../domain/finish-plan.js";
import type { FinishParams, InsertResult, Store } from "../../store.js";
import type { PgConnectionOptions } from "../connection.js";
import { messageFromRow, type MessageRow } from "../rows.js";
import { relayCalls } from "../../../metrics/metrics.js";
import { RelayElection } from "./election.js";
import { RelayLost } from "./link.js";

type InsertParams = Parameters<Store["messageInsertMany"]>[0];

export interface WriteRelayOptions {
  connection: PgConnectionOptions;
  /** FERRY_PG_RELAY_HOST: where this node listens when it leads; default: the address PostgreSQL sees it at. */
  host?: string;
  log?: Logger;
  /** A read on any pooled connection (the context's). */
  query: <R>(sql: string, values: unknown[]) => Promise<R[]>;
}

/**
 * A publish the leader may commit for this node: plain messages only, each inserted already leased to this node (the
 * fast path), without a deduplication key, a FIFO queue or a flow-control key. Those read and lock what other
 * writes share, and go as before. The leader takes the same decisions (its store runs the same code); only where
 * the transaction commits changes.
 */
const relayableInsert = (p: InsertParams) =>
  p.items.length > 0 &&
  p.items.every(
    (i) =>
      i.leaseOwner !== undefined &&
      i.dedupKey === undefined &&
      i.message.queueName === undefined &&
      i.message.spec.flowControl === undefined &&
      i.message.spec.workflow === undefined,
  );

const withoutBody = (r: InsertResult): InsertResult =>
  r.message === undefined ? r : { ...r, message: { ...r.message, body: undefined } };

/** The leader's answer to a publish, with the bodies this node sent (planInsert keeps a message's body as it is). */
const withBodies = (p: InsertParams, results: InsertResult[]): InsertResult[] => {
  const bodies = new Map(p.items.map((i) => [i.message.id, i.message.body]));
  for (const r of results) if (r.message !== undefined) r.message.body = bodies.get(r.message.id);
  return results;
};

/** PostgreSQL's unique violation on the message's id: the row exists already (written by the leader). */
const isDuplicateId = (error: unknown) =>
  error instanceof Error &&
  (error as { code?: unknown }).code === "23505" &&
  (error as { constraint?: unknown }).constraint === "messages_id_key";

/**
 * The write relay (docs/postgres.md "The write relay"): with several nodes on one database, every node hands its
 * plain publishes and plain deliveries' outcomes to one node, the leader, whose group commit holds them all. The
 * database then runs about as many transactions for three nodes as for one, instead of three times as many. Each
 * node still delivers what it published (its publishes are inserted leased to it) and answers its clients only once
 * the leader answered, after the COMMIT. A call whose answer is lost (the leader died, the link broke) is written
 * again by this node in a way that holds whether or not the leader committed it: the message's id is unique, so a
 * publish the leader did commit fails here and is read back; an outcome the leader did commit finds its lease gone.
 */
export function withWriteRelay(store: Store, o: WriteRelayOptions): { store: Store; start: () => void } {
  const local = { insert: store.messageInsertMany, finish: store.messageFinish };
  const election = new RelayElection({
    connection: o.connection,
    ...(o.host !== undefined ? { host: o.host } : {}),
    target: {
      // The follower has the bodies: the answer leaves them out, and `withBodies` puts them back.
      messageInsertMany: async (p: InsertParams) => (await local.insert(p)).map(withoutBody),
      messageFinish: local.finish,
    },
    ...(o.log ? { log: o.log } : {}),
  });
  let inFlight = 0;
  const idle = new Set<() => void>();
  const tracked = async <T>(work: () => Promise<T>): Promise<T> => {
    inFlight++;
    try {
      return await work();
    } finally {
      if (--inFlight === 0) {
        for (const resolve of idle) resolve();
        idle.clear();
      }
    }
  };

  /** A publish whose relayed answer was lost: inserted here, or, when the leader had committed it, read back. */
  const insertAgain = async (p: InsertParams): Promise<InsertResult[]> => {
    try {
      return await local.insert(p);
    } catch (error) {
      if (!isDuplicateId(error)) throw error;
      const ids = p.items.map((i) => i.message.id);
      const rows = await o.query<MessageRow>("SELECT * FROM messages WHERE id = ANY($1::text[])", [ids]);
      const byId = new Map(rows.map((r) => [r.id, messageFromRow(r)]));
      return p.items.map((item) => {
        const m = byId.get(item.message.id);
        // Still leased to this node: it delivers it now; otherwise the lease's expiry or a claim takes it.
        const mine = m !== undefined && m.state === "ACTIVE" && m.leaseOwner === item.leaseOwner;
        return { messageId: item.message.id, deduplicated: false, ...(mine ? { message: m } : {}) };
      });
    }
  };

  const relayed: Store = {
    ...store,
    messageInsertMany: (p) => {
      const link = relayableInsert(p) ? election.link() : undefined;
      if (link === undefined) return local.insert(p);
      return tracked(() =>
        (link.call("messageInsertMany", p) as Promise<InsertResult[]>).then(
          (results) => {
            relayCalls.inc({ method: "messageInsertMany", written_by: "leader" });
            return withBodies(p, results);
          },
          (error: unknown) => {
            if (!(error instanceof RelayLost)) throw error;
            relayCalls.inc({ method: "messageInsertMany", written_by: "self_after_loss" });
            return insertAgain(p);
          },
        ),
      );
    },
    messageFinish: (p: FinishParams) => {
      const link = isPlainDelivery(p) ? election.link() : undefined;
      if (link === undefined) return local.finish(p);
      return tracked(() =>
        (link.call("messageFinish", p) as Promise<boolean>).then(
          (finished) => {
            relayCalls.inc({ method: "messageFinish", written_by: "leader" });
            return finished;
          },
          (error: unknown) => {
            if (!(error instanceof RelayLost)) throw error;
            // Finishing is safe to repeat: a lease the leader already ended is not found again (false).
            relayCalls.inc({ method: "messageFinish", written_by: "self_after_loss" });
            return local.finish(p);
          },
        ),
      );
    },
    close: async () => {
      if (inFlight > 0) await new Promise<void>((resolve) => idle.add(resolve));
      await election.close();
      await store.close();
    },
  };
  return { store: relayed, start: () => election.start() };
}
