/**
 * Reads by key asked for in the same event-loop turn go out as ONE statement for all their keys: under load every
 * publish authenticates its token, and 30 publishes arriving together then cost one round trip instead of 30
 * (docs/postgres.md, "How the adapter is built"). Each read still happens after its request arrived, so it sees every
 * write committed before: nothing is cached.
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
    }
    const found = new Map<string, Row>();
    for (const row of rows) for (const key of keysOf(row)) if (key) found.set(key, row);
    for (const [key, resolvers] of turn) for (const resolve of resolvers) resolve(found.get(key));
  };

  return (key) =>
    new Promise<Row | undefined>((resolve, reject) => {
      if (waiting.size === 0) setImmediate(() => void flush());
      const resolvers = waiting.get(key);
      if (resolvers) resolvers.push(resolve);
      else waiting.set(key, [resolve]);
      failers.push(reject);
    });
}
