/**
 * Reads by key asked for in the same event-loop turn go out as ONE statement for all their keys: under load every
 * publish authenticates its token, and 30 publishes arriving together then cost one round trip instead of 30
 * (docs/postgres.md, "How the adapter is built"). One such statement is in flight at a time: keys asked for while it
 * is go out together as the next one when it is answered, so a busy node's reads grow with its load instead of
 * following its event-loop turns (with three nodes each turn holds a third of the publishes). Each read still
 * happens after its request arrived, so it sees every write committed before: nothing is cached.
 *
 * `readMany` answers the rows of the keys it found; `keysOf` says which asked-for keys a row answers (a row may
 * answer more than one, e.g. an account's token and its read-only token). A failed statement fails every read of
 * its turn, as each would have failed alone.
 */
export function coalescedReads<Row>(
  readMany: (keys: string[]) => Promise<Row[]>,
  keysOf: (row: Row) => (string | null | undefined)[],
): (key: string) => Promise<Row | undefined> {
  let waiting = new Map<string, ((row: Row | undefined) => void)[]>();
  let failers: ((error: unknown) => void)[] = [];
  /** A statement is in flight, or scheduled: keys asked for now wait for the next one. */
  let busy = false;

  const flush = async () => {
    const turn = waiting;
    const fail = failers;
    waiting = new Map();
    failers = [];
    let rows: Row[];
    try {
      rows = await readMany([...turn.keys()]);
    } catch (error) {
      for (const reject of fail) reject(error);
      return;
    } finally {
      // The keys asked for meanwhile (and in this turn) go out together as the next statement.
      if (waiting.size > 0) setImmediate(() => void flush());
      else busy = false;
    }
    const found = new Map<string, Row>();
    for (const row of rows) for (const key of keysOf(row)) if (key) found.set(key, row);
    for (const [key, resolvers] of turn) for (const resolve of resolvers) resolve(found.get(key));
  };

  return (key) =>
    new Promise<Row | undefined>((resolve, reject) => {
      if (!busy) {
        busy = true;
        setImmediate(() => void flush());
      }
      const resolvers = waiting.get(key);
      if (resolvers) resolvers.push(resolve);
      else waiting.set(key, [resolve]);
      failers.push(reject);
    });
}
