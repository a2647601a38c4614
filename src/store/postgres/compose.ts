/*
 * Statements that a pipelined run may send as ONE statement (docs/postgres.md, "One statement per publish run").
 *
 * A publish run used to send BEGIN, the fast path's check, the INSERT, the outcomes' UPDATE, the flush and COMMIT:
 * six statements, each with its own parse of the protocol messages, portal, executor start and end, snapshot and
 * answer. Written as one statement in autocommit, the same work costs the database about 240 µs less per run
 * (docs/postgres.md, where it is measured). That is what the run costs whatever it holds, so it is what three nodes
 * pay three times as often as one.
 */

/**
 * A statement: plain text, or named so each connection prepares it once (hot statements), or written to be composed
 * with the others of a pipelined run into one.
 */
export type Statement = string | { name: string; text: string } | ComposableStatement;

/**
 * A statement written so that it can be composed with others: data-modifying or reading `steps` (common table
 * expressions, `alias AS (sql)`) and `checks`, scalar expressions over them, each evaluated once. Its own text is
 * `WITH steps SELECT checks`, so alone it does what it does composed. `$1`… are its own parameters; they must
 * appear nowhere else in its SQL (no dollar quoting).
 */
export interface ComposableStatement {
  name: string;
  text: string;
  steps: readonly (readonly [alias: string, sql: string])[];
  checks: readonly string[];
}

export function composable(
  name: string,
  steps: readonly (readonly [alias: string, sql: string])[],
  checks: readonly string[],
): ComposableStatement {
  return { name, text: withSelect(steps, checks), steps, checks };
}

function withSelect(steps: readonly (readonly [string, string])[], checks: readonly string[]): string {
  const head = steps.length === 0 ? "" : `WITH ${steps.map(([alias, sql]) => `${alias} AS (${sql})`).join(",\n  ")}\n`;
  return `${head}SELECT ${checks.length === 0 ? "1" : checks.join(",\n  ")}`;
}

const renumber = (sql: string, offset: number) =>
  offset === 0 ? sql : sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);

/** Names of the composed statements, one per distinct sequence of parts: PostgreSQL cuts longer names at 63 bytes. */
const composedNames = new Map<string, string>();

/**
 * The statements of a run as one, in their order, or undefined when two of them would share a step's alias (the
 * same statement with steps twice, e.g. the finishes of two lease owners): those are sent one by one.
 *
 * Composed, every step sees the run's starting snapshot and none sees another's writes, so the statements composed
 * must not read what another of them writes, nor write the same rows. The checks are evaluated in order (a step a
 * check reads runs then), and steps no check reads (the inserts) run after all checks, when PostgreSQL finishes the
 * statement. Nothing relies on that order for correctness: were the fast path's function to count the run's own
 * inserts, it would only find less room and refuse (the run then goes again, reading). A check that fails fails the
 * statement, and nothing is written.
 */
export function compose(
  parts: readonly { statement: ComposableStatement; values: readonly unknown[] }[],
): { statement: { name: string; text: string }; values: unknown[] } | undefined {
  const aliases = new Set<string>();
  const steps: [string, string][] = [];
  const checks: string[] = [];
  const values: unknown[] = [];
  for (const { statement, values: own } of parts) {
    for (const [alias, sql] of statement.steps) {
      if (aliases.has(alias)) return undefined;
      aliases.add(alias);
      steps.push([alias, renumber(sql, values.length)]);
    }
    for (const check of statement.checks) checks.push(renumber(check, values.length));
    values.push(...own);
  }
  const key = parts.map((p) => `${p.statement.name}/${p.values.length}`).join("+");
  let name = composedNames.get(key);
  if (name === undefined) {
    name = `ferry_composed_${composedNames.size + 1}`;
    composedNames.set(key, name);
  }
  return { statement: { name, text: withSelect(steps, checks) }, values };
}
