/**
 * The one reader of process.env. Every option is a row of the table in src/config/options.ts (variable, default,
 * parser, description): `Config`, its defaults, the boot validation and docs/configuration.md's table all come from
 * it (issue 30). A bad value stops start-up with the variable's name.
 */

import type { DialectName } from "./domain/dialect.js";
import { CONFIG_OPTIONS, type ConfigOption } from "./config/options.js";
import type { Env } from "./config/parsers.js";

export { ConfigError, egressThreadWanted } from "./config/parsers.js";
export { type AccountRegion, CONFIG_OPTIONS, type ConfigOption } from "./config/options.js";
export { configDocsTable, withConfigDocsTable } from "./config/docs-table.js";

export type Dialect = DialectName;
export type SqliteSynchronous = "FULL" | "NORMAL";

type Option = (typeof CONFIG_OPTIONS)[number];

/** One field per row of the table, typed by its parser (undefined for a row without a default when unset). */
export type Config = { [O in Option as O["key"]]: O extends ConfigOption<string, infer T> ? T : never };

export function loadConfig(env: Env = process.env): Config {
  const entries = CONFIG_OPTIONS.map((o: ConfigOption<string, unknown>) => [o.key, o.read(env)] as const);
  // Each field is its row's `read`, so the object has the shape `Config` derives from the same rows.
  return Object.fromEntries(entries) as Config;
}
