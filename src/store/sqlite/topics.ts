import type { HeaderMap } from "../../domain/headers.js";
import type { Store } from "../store.js";
import type { Topic } from "../topic-store.js";
import type { SqliteContext } from "./context.js";

type TopicQueries = Pick<
  Store,
  "topicAddEndpoints" | "topicRemoveEndpoints" | "topicGet" | "topicList" | "topicDelete" | "topicSetHeaders"
>;

interface TopicRow {
  name: string;
  headers: string | null;
  created_at: number;
  updated_at: number;
}

interface EndpointRow {
  topic_name: string;
  url: string;
  name: string | null;
}

function topicFromRows(t: TopicRow, endpoints: EndpointRow[]): Topic {
  const topic: Topic = {
    name: t.name,
    createdAt: t.created_at,
    updatedAt: t.updated_at,
    endpoints: endpoints.map((e) => (e.name !== null ? { name: e.name, url: e.url } : { url: e.url })),
  };
  if (t.headers !== null) topic.headers = JSON.parse(t.headers) as HeaderMap;
  return topic;
}

export function topicQueries(ctx: SqliteContext): TopicQueries {
  const { db } = ctx;
  const getTopic = db.prepare("SELECT * FROM topics WHERE account_id = ? AND name = ?");
  const listTopics = db.prepare("SELECT * FROM topics WHERE account_id = ? ORDER BY name");
  const countTopics = db.prepare("SELECT COUNT(*) AS n FROM topics WHERE account_id = ?");
  const insertTopic = db.prepare(
    "INSERT INTO topics (account_id, name, headers, created_at, updated_at) VALUES (?, ?, NULL, ?, ?)",
  );
  const touchTopic = db.prepare("UPDATE topics SET updated_at = ? WHERE account_id = ? AND name = ?");
  const setHeaders = db.prepare("UPDATE topics SET headers = ?, updated_at = ? WHERE account_id = ? AND name = ?");
  const deleteTopic = db.prepare("DELETE FROM topics WHERE account_id = ? AND name = ?");
  const endpointsOf = db.prepare(
    "SELECT topic_name, url, name FROM topic_endpoints WHERE account_id = ? AND topic_name = ? ORDER BY position",
  );
  const endpointsOfAccount = db.prepare(
    "SELECT topic_name, url, name FROM topic_endpoints WHERE account_id = ? ORDER BY topic_name, position",
  );
  const nextPosition = db.prepare(
    "SELECT COALESCE(MAX(position), 0) + 1 AS p FROM topic_endpoints WHERE account_id = ? AND topic_name = ?",
  );
  // Same URL = same endpoint (docs/url-groups.md): an upsert updates its name, or keeps it when none is given.
  const upsertEndpoint = db.prepare(
    `INSERT INTO topic_endpoints (account_id, topic_name, position, url, name) VALUES (@accountId, @topic, @position, @url, @name)
     ON CONFLICT (account_id, topic_name, url) DO UPDATE SET name = COALESCE(excluded.name, topic_endpoints.name)`,
  );
  const nameOwner = db.prepare(
    "SELECT url FROM topic_endpoints WHERE account_id = ? AND topic_name = ? AND name = ? AND url != ? LIMIT 1",
  );
  const countEndpoints = db.prepare(
    "SELECT COUNT(*) AS n FROM topic_endpoints WHERE account_id = ? AND topic_name = ?",
  );
  const removeByUrl = db.prepare("DELETE FROM topic_endpoints WHERE account_id = ? AND topic_name = ? AND url = ?");
  const removeByName = db.prepare("DELETE FROM topic_endpoints WHERE account_id = ? AND topic_name = ? AND name = ?");
  const removeByBoth = db.prepare(
    "DELETE FROM topic_endpoints WHERE account_id = ? AND topic_name = ? AND url = ? AND name = ?",
  );

  const read = (accountId: string, name: string): Topic | undefined => {
    const t = getTopic.get(accountId, name) as TopicRow | undefined;
    return t ? topicFromRows(t, endpointsOf.all(accountId, name) as EndpointRow[]) : undefined;
  };

  /** Runs `op` in a savepoint of its own so a refused upsert leaves nothing behind, then returns its verdict. */
  const attempt = <T extends { ok: boolean }>(op: () => T): T => {
    let verdict: T | undefined;
    try {
      db.transaction(() => {
        verdict = op();
        if (!verdict.ok) throw rollback;
      })();
    } catch (error) {
      if (error !== rollback) throw error;
    }
    return verdict!;
  };

  return {
    topicAddEndpoints: ({ accountId, name, endpoints, now, maxTopics, maxEndpoints }) =>
      ctx.write(() =>
        attempt(() => {
          if (!getTopic.get(accountId, name)) {
            const { n } = countTopics.get(accountId) as { n: number };
            if (n >= maxTopics) return { ok: false as const, reason: "max_topics" as const };
            insertTopic.run(accountId, name, now, now);
          } else {
            touchTopic.run(now, accountId, name);
          }
          for (const e of endpoints) {
            const { p } = nextPosition.get(accountId, name) as { p: number };
            upsertEndpoint.run({ accountId, topic: name, position: p, url: e.url, name: e.name ?? null });
            if (e.name !== undefined && nameOwner.get(accountId, name, e.name, e.url)) {
              return { ok: false as const, reason: "endpoint_name_taken" as const, endpointName: e.name };
            }
          }
          const { n } = countEndpoints.get(accountId, name) as { n: number };
          if (n > maxEndpoints) return { ok: false as const, reason: "max_endpoints" as const };
          return { ok: true as const };
        }),
      ),

    topicRemoveEndpoints: ({ accountId, name, endpoints, now }) =>
      ctx.write(() => {
        if (!getTopic.get(accountId, name)) return "not_found";
        for (const e of endpoints) {
          if (e.url !== undefined && e.name !== undefined) removeByBoth.run(accountId, name, e.url, e.name);
          else if (e.url !== undefined) removeByUrl.run(accountId, name, e.url);
          else if (e.name !== undefined) removeByName.run(accountId, name, e.name);
        }
        const { n } = countEndpoints.get(accountId, name) as { n: number };
        if (n === 0) {
          deleteTopic.run(accountId, name);
          return "deleted";
        }
        touchTopic.run(now, accountId, name);
        return "removed";
      }),

    topicGet: async ({ accountId, name }) => read(accountId, name),

    topicList: async ({ accountId }) => {
      const byTopic = new Map<string, EndpointRow[]>();
      for (const e of endpointsOfAccount.all(accountId) as EndpointRow[]) {
        const list = byTopic.get(e.topic_name);
        if (list) list.push(e);
        else byTopic.set(e.topic_name, [e]);
      }
      return (listTopics.all(accountId) as TopicRow[]).map((t) => topicFromRows(t, byTopic.get(t.name) ?? []));
    },

    topicDelete: ({ accountId, name }) => ctx.write(() => deleteTopic.run(accountId, name).changes > 0),

    topicSetHeaders: ({ accountId, name, headers, now }) =>
      ctx.write(() => {
        const json = Object.keys(headers).length > 0 ? JSON.stringify(headers) : null;
        return setHeaders.run(json, now, accountId, name).changes > 0;
      }),
  };
}

/** Thrown inside `attempt` to roll its savepoint back; never escapes. */
const rollback = new Error("rollback");
