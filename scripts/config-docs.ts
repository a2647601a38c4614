/**
 * `npm run config:docs`: rewrites the table of docs/configuration.md from src/config/options.ts, the one table of
 * Ferry's configuration (test/unit/config-table.test.ts fails when the two differ).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { withConfigDocsTable } from "../src/config.js";

const path = new URL("../docs/configuration.md", import.meta.url);
writeFileSync(path, withConfigDocsTable(readFileSync(path, "utf8")));
process.stdout.write("wrote docs/configuration.md\n");
