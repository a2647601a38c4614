/**
 * The live and ended conditions of a `messages` row as SQLite's partial indexes carry them (migration 065), and so as
 * every SQLite query that wants those indexes must write them: SQLite uses a partial index only when the query repeats
 * its condition term by term.
 *
 * They mean the same as src/store/derived-log.ts `LIVE_ROW_SQL` and `ENDED_STATES_SQL` (PostgreSQL keeps those), but
 * avoid `IN` with three constants: SQLite evaluates such a list through an ephemeral table built afresh on every
 * evaluation, and a partial index's condition is evaluated for every row an INSERT or UPDATE writes. Before 065 a
 * publish opened four of them and a delivery eight, about a tenth of the storage's instructions per message
 * (docs/threading.md "The P1 path now").
 */
const live = (column: string) => `${column} <> 'DELIVERED' AND ${column} <> 'FAILED' AND ${column} <> 'CANCELED'`;

/** A live row (not ended): `messages_live`, `messages_queue` and `messages_parent` carry this condition. */
export const LIVE_ROW = live("state");

/** The same for a query that names the table (`m.state …`). */
export const liveRowOf = (alias: string): string => live(`${alias}.state`);

/** An ended row, kept for its log until retention: `messages_ended` carries this condition. */
export const ENDED_ROW = "(state = 'DELIVERED' OR state = 'FAILED' OR state = 'CANCELED')";
