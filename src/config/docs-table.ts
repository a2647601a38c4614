import { CONFIG_OPTIONS, type ConfigOption } from "./options.js";

const HEADER = "| Variable | Default | Meaning |";

/** The table of docs/configuration.md, one row per option of src/config/options.ts, in its order. */
export function configDocsTable(): string {
  const escape = (cell: string) => cell.replace(/\|/g, "\\|");
  const rows = CONFIG_OPTIONS.map((o: ConfigOption<string, unknown>) => {
    const fallback = o.default !== undefined ? `\`${o.default}\`` : `(${o.unset ?? "none"})`;
    return `| \`${o.variable}\` | ${escape(fallback)} | ${escape(o.doc)} |`;
  });
  return [HEADER, "|---|---|---|", ...rows].join("\n");
}

/**
 * `markdown` (docs/configuration.md) with its table replaced by the one the options make: `npm run config:docs`
 * writes it, test/unit/config-table.test.ts fails when the file differs from it.
 */
export function withConfigDocsTable(markdown: string): string {
  const lines = markdown.split("\n");
  const start = lines.indexOf(HEADER);
  if (start < 0) throw new Error(`docs/configuration.md has no line "${HEADER}"`);
  let end = start;
  while (end < lines.length && lines[end]!.startsWith("|")) end++;
  return [...lines.slice(0, start), configDocsTable(), ...lines.slice(end)].join("\n");
}
