import type { NodeStore } from "../node-store.js";
import type { PgContext } from "./context.js";

export function nodeNumberQueries(ctx: PgContext): NodeStore {
  return {
    // nextval never returns a value twice, whatever the transactions around it do (migration 008).
    nodeNumberTake: async () => {
      const [row] = await ctx.query<{ n: number }>("SELECT nextval('ferry_node_numbers')::int8 AS n");
      return Number(row!.n);
    },
  };
}
