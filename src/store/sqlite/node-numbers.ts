import type { NodeStore } from "../node-store.js";
import type { SqliteContext } from "./context.js";

export function nodeNumberQueries(ctx: SqliteContext): NodeStore {
  // The counter row of migration 008; an upsert so the first call creates it. A write, so one at a time.
  const take = ctx.db.prepare(
    `INSERT INTO id_counters (name, value) VALUES ('node', 1)
     ON CONFLICT (name) DO UPDATE SET value = value + 1 RETURNING value`,
  );
  return {
    nodeNumberTake: () => ctx.write(() => (take.get() as { value: number }).value),
  };
}
