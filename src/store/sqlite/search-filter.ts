import type { FieldPath, FilterNode, FilterValue } from "../../search/filter.js";

/**
 * A parsed search filter (src/search/filter.ts) as a SQLite boolean expression over the document row `d`.
 * Only the tree's shape becomes SQL text; every path and value is a bound parameter.
 */
export interface SqlFragment {
  sql: string;
  params: unknown[];
}

/** A SQLite JSON path: `$."a"[0][#-1]`. Keys are quoted so `-` and digits stay keys. */
export function sqliteJsonPath(field: FieldPath): string {
  let path = "$";
  for (const step of field.steps) {
    if ("key" in step) path += `."${step.key.replace(/"/g, "")}"`;
    else if ("index" in step) path += `[${step.index}]`;
    else path += step.fromEnd === 0 ? "[#]" : `[#-${step.fromEnd}]`;
  }
  return path;
}

const column = (field: FieldPath) => (field.source === "metadata" ? "d.metadata" : "d.content");

/** json_extract yields 1/0 for JSON booleans: the documented `= 1` and `= true` mean the same. */
const bind = (v: FilterValue): unknown => (typeof v === "boolean" ? (v ? 1 : 0) : v);

export function sqliteFilter(node: FilterNode): SqlFragment {
  const params: unknown[] = [];
  const walk = (n: FilterNode): string => {
    switch (n.kind) {
      case "and":
      case "or":
        return `(${n.children.map(walk).join(n.kind === "and" ? " AND " : " OR ")})`;
      case "compare":
        params.push(sqliteJsonPath(n.field), bind(n.value));
        return `(json_extract(${column(n.field)}, ?) ${n.op} ?)`;
      case "glob":
        params.push(sqliteJsonPath(n.field), n.pattern);
        return n.negate
          ? `(NOT (json_extract(${column(n.field)}, ?) GLOB ?))`
          : `(json_extract(${column(n.field)}, ?) GLOB ?)`;
      case "in":
        params.push(sqliteJsonPath(n.field), ...n.values.map(bind));
        return `(json_extract(${column(n.field)}, ?) ${n.negate ? "NOT IN" : "IN"} (${n.values.map(() => "?").join(", ")}))`;
      case "contains": {
        const path = sqliteJsonPath(n.field);
        if (n.negate) {
          params.push(path, path, bind(n.value));
          return `(json_type(${column(n.field)}, ?) = 'array' AND NOT EXISTS (SELECT 1 FROM json_each(${column(n.field)}, ?) WHERE value = ?))`;
        }
        params.push(path, bind(n.value));
        return `(EXISTS (SELECT 1 FROM json_each(${column(n.field)}, ?) WHERE value = ?))`;
      }
      case "hasField":
        params.push(sqliteJsonPath(n.field));
        return `(json_type(${column(n.field)}, ?) IS ${n.negate ? "" : "NOT "}NULL)`;
    }
  };
  const sql = walk(node);
  return { sql, params };
}
