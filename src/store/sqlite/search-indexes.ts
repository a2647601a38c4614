import { SEARCH_INDEX_PATCH_COLUMNS, type SearchIndexQueries, patchColumns } from "../adapter-parts.js";
import { type SearchIndexRow, searchIndexFromRow } from "../rows-shared.js";
import type { SqliteContext } from "./context.js";

export function searchIndexQueries(ctx: SqliteContext): SearchIndexQueries {
  const { db } = ctx;
  const insert = db.prepare(
    `INSERT INTO search_indexes (id, customer_id, name, endpoint, type, region, partner_email, token, read_only_token,
       input_enrichment_enabled, creation_time)
     VALUES (@id, @customerId, @name, @endpoint, @type, @region, @partnerEmail, @token, @readOnlyToken,
       @inputEnrichmentEnabled, @creationTime)`,
  );
  const get = db.prepare("SELECT * FROM search_indexes WHERE id = ? AND customer_id = ?");
  const list = db.prepare("SELECT * FROM search_indexes WHERE customer_id = ? ORDER BY creation_time, id");
  const remove = db.prepare("DELETE FROM search_indexes WHERE id = ? AND customer_id = ?");

  return {
    searchIndexInsert: ({ index }) =>
      ctx.write(() => {
        insert.run({ ...index, inputEnrichmentEnabled: index.inputEnrichmentEnabled ? 1 : 0 });
      }),

    searchIndexGet: async ({ customerId, id }) => {
      const row = get.get(id, customerId) as SearchIndexRow | undefined;
      return row ? searchIndexFromRow(row) : undefined;
    },

    searchIndexList: async ({ customerId }) => (list.all(customerId) as SearchIndexRow[]).map(searchIndexFromRow),

    searchIndexUpdate: ({ customerId, id, patch }) =>
      ctx.write(() => {
        const entries = patchColumns(patch, SEARCH_INDEX_PATCH_COLUMNS);
        if (entries.length > 0) {
          const sets = entries.map(([column]) => `${column} = ?`).join(", ");
          db.prepare(`UPDATE search_indexes SET ${sets} WHERE id = ? AND customer_id = ?`).run(
            ...entries.map(([, v]) => v),
            id,
            customerId,
          );
        }
        const row = get.get(id, customerId) as SearchIndexRow | undefined;
        return row ? searchIndexFromRow(row) : undefined;
      }),

    searchIndexDelete: ({ customerId, id }) => ctx.write(() => remove.run(id, customerId).changes === 1),
  };
}
