import type { HeaderMap } from "../../domain/headers.js";
import type { TopicQueries } from "../adapter-parts.js";
import type { Topic, TopicEndpoint, TopicUpsertResult } from "../topic-store.js";
import { arrayRows } from "./rows.js";
import type { PgContext, Tx } from "./context.js";
import { Params } from "./filters.js";

interface TopicRow {
  name: string;
  headers: string | null;
  created_at: number;
  updated_at: number;
  /** json_agg of the endpoints in position order; NULL for a group without endpoints (never kept). */
  endpoints: { url: string; name: string | null }[] | null;
}

function topicFromRow(t: TopicRow): Topic {
  const topic: Topic = {
    name: t.name,
    createdAt: t.created_at,
    updatedAt: t.updated_at,
    endpoints: (t.endpoints ?? []).map((e) => (e.name !== null ? { name: e.name, url: e.url } : { url: e.url })),
  };
  if (t.headers !== null) topic.headers = JSON.parse(t.headers) as HeaderMap;
  return topic;
}

/** A group with its endpoints in one statement: one round trip on the publish path, and one consistent snapshot. */
const SELECT_TOPIC = `SELECT t.name, t.headers, t.created_at, t.updated_at,
    (SELECT json_agg(json_build_object('url', e.url, 'name', e.name) ORDER BY e.position) FROM topic_endpoints e
      WHERE e.account_id = t.account_id AND e.topic_name = t.name) AS endpoints
  FROM topics t`;

/**
 * Advisory lock namespace (first key of pg_advisory_xact_lock(int4, int4)) of an account's URL-group writes; the
 * second key is hashtext(account id). The two-key form never collides with the migration lock (one bigint key).
 */
const TOPIC_WRITES_LOCK = 7_262_002;

/**
 * Every multi-statement write to an account's groups takes this transaction-scoped lock first, so the writes of one
 * account are serialised across nodes exactly like SQLite's single writer serialises them: max_topics and
 * max_endpoints_per_topic are counted with nobody adding meanwhile, and a removal that deletes a group with its last
 * endpoint cannot interleave with an addition to it. Group management is rare; publishes only read.
 */
const lockAccountTopics = (tx: Tx, accountId: string) =>
  tx.query({ name: "ferry_topic_lock", text: "SELECT pg_advisory_xact_lock($1, hashtext($2))" }, [
    TOPIC_WRITES_LOCK,
    accountId,
  ]);

interface StoredEndpoint {
  name: string | null;
  position: number;
}

/**
 * Applies an endpoint upsert to the group's current endpoints in memory, with the SQLite adapter's rules and in its
 * order: same URL = same endpoint (its name updated, or kept when none is given); a new URL goes last; a name held by
 * another URL refuses the whole upsert; more than `maxEndpoints` afterwards too. Nothing is written before the
 * verdict, so a refusal leaves no trace (SQLite uses a savepoint for that).
 */
function planUpsert(
  current: Map<string, StoredEndpoint>,
  endpoints: TopicEndpoint[],
  maxEndpoints: number,
): TopicUpsertResult & { touched?: Map<string, StoredEndpoint> } {
  const next = new Map(current);
  const touched = new Map<string, StoredEndpoint>();
  let last = Math.max(0, ...[...current.values()].map((e) => e.position));
  for (const e of endpoints) {
    const existing = next.get(e.url);
    const stored = existing
      ? { ...existing, name: e.name ?? existing.name }
      : { name: e.name ?? null, position: (last += 1) };
    next.set(e.url, stored);
    touched.set(e.url, stored);
    if (e.name !== undefined) {
      for (const [url, other] of next) {
        if (url !== e.url && other.name === e.name) {
          return { ok: false, reason: "endpoint_name_taken", endpointName: e.name };
        }
      }
    }
  }
  if (next.size > maxEndpoints) return { ok: false, reason: "max_endpoints" };
  return { ok: true, touched };
}

export function topicQueries(ctx: PgContext): TopicQueries {
  const read = async (accountId: string, name: string) => {
    const [row] = await ctx.query<TopicRow>(
      { name: "ferry_topic_get", text: `${SELECT_TOPIC} WHERE t.account_id = $1 AND t.name = $2` },
      [accountId, name],
    );
    return row ? topicFromRow(row) : undefined;
  };

  return {
    topicAddEndpoints: ({ accountId, name, endpoints, now, maxTopics, maxEndpoints }) =>
      ctx.write(async (tx): Promise<TopicUpsertResult> => {
        await lockAccountTopics(tx, accountId);
        const [counts] = await tx.query<{ n: number; present: boolean }>(
          "SELECT COUNT(*)::int AS n, COALESCE(bool_or(name = $2), FALSE) AS present FROM topics WHERE account_id = $1",
          [accountId, name],
        );
        const exists = counts!.present;
        if (!exists && counts!.n >= maxTopics) return { ok: false, reason: "max_topics" };
        const current = new Map<string, StoredEndpoint>();
        if (exists) {
          const rows = await tx.query<{ url: string; name: string | null; position: number }>(
            "SELECT url, name, position FROM topic_endpoints WHERE account_id = $1 AND topic_name = $2",
            [accountId, name],
          );
          for (const r of rows) current.set(r.url, { name: r.name, position: r.position });
        }
        const plan = planUpsert(current, endpoints, maxEndpoints);
        if (!plan.ok) return plan;

        if (exists) {
          await tx.execute("UPDATE topics SET updated_at = $3 WHERE account_id = $1 AND name = $2", [
            accountId,
            name,
            now,
          ]);
        } else {
          await tx.execute(
            "INSERT INTO topics (account_id, name, headers, created_at, updated_at) VALUES ($1, $2, NULL, $3, $3)",
            [accountId, name, now],
          );
        }
        const touched = [...plan.touched!.entries()];
        if (touched.length > 0) {
          // One row per URL (the plan merged repeats), so ON CONFLICT never meets a row twice; a kept endpoint keeps
          // its position.
          await tx.execute(
            `INSERT INTO topic_endpoints (account_id, topic_name, position, url, name)
             SELECT $1, $2, p, u, n FROM ${arrayRows("r", [["p", "int"], ["u", "text"], ["n", "text"]], 3)}
             ON CONFLICT (account_id, topic_name, url) DO UPDATE SET name = excluded.name`,
            [
              accountId,
              name,
              touched.map(([, e]) => e.position),
              touched.map(([url]) => url),
              touched.map(([, e]) => e.name),
            ],
          );
        }
        return { ok: true };
      }),

    topicRemoveEndpoints: ({ accountId, name, endpoints, now }) =>
      ctx.write(async (tx) => {
        await lockAccountTopics(tx, accountId);
        const found = await tx.query("SELECT 1 FROM topics WHERE account_id = $1 AND name = $2", [accountId, name]);
        if (found.length === 0) return "not_found";
        const params = new Params();
        const topic = `account_id = ${params.add(accountId)} AND topic_name = ${params.add(name)}`;
        const matches = endpoints.flatMap((e) => {
          const parts: string[] = [];
          if (e.url !== undefined) parts.push(`url = ${params.add(e.url)}`);
          if (e.name !== undefined) parts.push(`name = ${params.add(e.name)}`);
          return parts.length > 0 ? [`(${parts.join(" AND ")})`] : [];
        });
        if (matches.length > 0) {
          await tx.execute(`DELETE FROM topic_endpoints WHERE ${topic} AND (${matches.join(" OR ")})`, params.values);
        }
        const [left] = await tx.query<{ n: number }>(
          "SELECT COUNT(*)::int AS n FROM topic_endpoints WHERE account_id = $1 AND topic_name = $2",
          [accountId, name],
        );
        if (left!.n === 0) {
          await tx.execute("DELETE FROM topics WHERE account_id = $1 AND name = $2", [accountId, name]);
          return "deleted";
        }
        await tx.execute("UPDATE topics SET updated_at = $3 WHERE account_id = $1 AND name = $2", [
          accountId,
          name,
          now,
        ]);
        return "removed";
      }),

    topicGet: ({ accountId, name }) => read(accountId, name),

    // Byte-wise name order (COLLATE "C"), like SQLite, whatever the database's collation.
    topicList: async ({ accountId }) => {
      const rows = await ctx.query<TopicRow>(`${SELECT_TOPIC} WHERE t.account_id = $1 ORDER BY t.name COLLATE "C"`, [
        accountId,
      ]);
      return rows.map(topicFromRow);
    },

    // Single statements: atomic by themselves (the endpoints go with the group: ON DELETE CASCADE).
    topicDelete: ({ accountId, name }) =>
      ctx.write(
        async (tx) =>
          (await tx.execute("DELETE FROM topics WHERE account_id = $1 AND name = $2", [accountId, name])) > 0,
      ),

    topicSetHeaders: ({ accountId, name, headers, now }) =>
      ctx.write(async (tx) => {
        const json = Object.keys(headers).length > 0 ? JSON.stringify(headers) : null;
        const changed = await tx.execute(
          "UPDATE topics SET headers = $1, updated_at = $2 WHERE account_id = $3 AND name = $4",
          [json, now, accountId, name],
        );
        return changed > 0;
      }),
  };
}
