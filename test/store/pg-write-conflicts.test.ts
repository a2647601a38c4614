import { expect, it } from "vitest";
import { openPgContext } from "../../src/store/postgres/context.js";
import { postgresAvailable } from "../helpers/postgres.js";
import { openPostgresTestStores } from "./adapters.js";

/**
 * A deadlock met while a batch runs operation by operation under savepoints (after another operation failed) comes
 * from locks the batch's earlier operations still hold, so it is there again as long as that transaction lives: the
 * batch must roll back whole and run again, not retry the operation inside the same transaction (which failed it
 * once the retries ran out, as `test/store/flow-control-postgres.test.ts` saw under load).
 */
it.runIf(postgresAvailable())(
  "a deadlock in the savepoint run rolls the whole batch back and runs it again; only the failing operation fails",
  async () => {
    const opened = await openPostgresTestStores();
    const ctx = openPgContext({ connectionString: opened.url, poolSize: 2 });
    try {
      const txids = new Set<string>();
      let conflictTx: string | undefined;
      const deadlock = () => Object.assign(new Error("deadlock detected"), { code: "40P01" });
      const txid = async (tx: Parameters<Parameters<typeof ctx.write>[0]>[0]) =>
        (await tx.query<{ id: string }>("SELECT txid_current()::text AS id"))[0]!.id;
      // Its deadlock appears in the second transaction it runs in (the savepoint run) and lasts as long as that one.
      const contended = ctx.write(async (tx) => {
        const id = await txid(tx);
        txids.add(id);
        if (conflictTx === undefined && txids.size === 2) conflictTx = id;
        if (id === conflictTx) throw deadlock();
        return "contended done";
      });
      const plain = ctx.write(async (tx) => (await txid(tx)) && "plain done");
      const failing = ctx.write(async () => {
        throw new Error("this operation always fails");
      });
      const [a, b, c] = await Promise.allSettled([contended, plain, failing]);
      expect(a).toEqual({ status: "fulfilled", value: "contended done" });
      expect(b).toEqual({ status: "fulfilled", value: "plain done" });
      expect(c.status).toBe("rejected");
      expect(conflictTx).toBeDefined();
    } finally {
      await ctx.close();
      await opened.dispose();
    }
  },
);
