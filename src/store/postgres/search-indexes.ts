import { SEARCH_INDEX_PATCH_COLUMNS, type SearchIndexQueries, patchColumns } from "../adapter-parts.js";
import { type SearchIndexRow, searchIndexFromRow } from "../rows-shared.js";
import type { PgContext } from "./context.js";
import { Params } from "./filters.js";

export function searchIndexQueries(ctx: PgContext): SearchIndexQueries {
  const one = (rows: SearchIndexRow[]) => (rows[0] ? searchIndexFromRow(rows[0]) : undefined);
  const get = "SELECT * FROM search_indexes WHERE id = $1 AND customer_id = $2";

  return {
    searchIndexInsert: ({ index: i }) =>
      ctx.write(async (tx) => {
        await tx.execute(
          `INSERT INTO search_indexes (id, customer_id, name, endpoint, type, region, partner_email, token,
             read_only_token, input_enrichment_enabled, creation_time)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
          [
            i.id,
            i.customerId,
            i.name,
            i.endpoint,
            i.type,
            i.region,
            i.partnerEmail,
            i.token,
            i.readOnlyToken,
            i.inputEnrichmentEnabled,
            i.creationTime,
          ],
        );
      }),

    searchIndexGet: async ({ customerId, id }) => one(await ctx.query<SearchIndexRow>(get, [id, customerId])),

    searchIndexList: async ({ customerId }) =>
      (
        await ctx.query<SearchIndexRow>(
          "SELECT * FROM search_indexes WHERE customer_id = $1 ORDER BY creation_time, id",
          [customerId],
        )
      ).map(searchIndexFromRow),

    // One UPDATE … RETURNING: the change and the record returned are the same row version, whichever node wrote last.
    searchIndexUpdate: ({ customerId, id, patch }) =>
      ctx.write(async (tx) => {
        const params = new Params();
        const sets = patchColumns(patch, SEARCH_INDEX_PATCH_COLUMNS).map(
          ([column, v]) => `${column} = ${params.add(v)}`,
        );
        if (sets.length === 0) return one(await tx.query<SearchIndexRow>(get, [id, customerId]));
        return one(
          await tx.query<SearchIndexRow>(
            `UPDATE search_indexes SET ${sets.join(", ")}
             WHERE id = ${params.add(id)} AND customer_id = ${params.add(customerId)} RETURNING *`,
            params.values,
          ),
        );
      }),

    searchIndexDelete: ({ customerId, id }) =>
      ctx.write(
        async (tx) =>
          (await tx.execute("DELETE FROM search_indexes WHERE id = $1 AND customer_id = $2", [id, customerId])) === 1,
      ),
  };
}
