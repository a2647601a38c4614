import { type FieldPath, type FilterNode, type FilterValue, globToRegex } from "../../search/filter.js";
import type { Params } from "./filters.js";

/**
 * A parsed search filter (src/search/filter.ts) as a PostgreSQL boolean expression over the document row `d`,
 * comparing jsonb values. Only the tree's shape becomes SQL text; paths and values are parameters.
 */
function pathArray(field: FieldPath): string[] {
  return field.steps.map((s) => ("key" in s ? s.key : "index" in s ? String(s.index) : String(-s.fromEnd)));
}

const column = (field: FieldPath) => (field.source === "metadata" ? "d.metadata" : "d.content");

/** Booleans are documented as 1/0 and also written true/false: either form matches either. */
function alternatives(v: FilterValue): string[] {
  if (v === true || v === 1) return ["1", "true"];
  if (v === false || v === 0) return ["0", "false"];
  return [JSON.stringify(v)];
}

export function postgresFilter(node: FilterNode, params: Params): string {
  const value = (field: FieldPath) => `(${column(field)} #> ${params.add(pathArray(field))}::text[])`;
  const json = (v: FilterValue) => `${params.add(JSON.stringify(v))}::jsonb`;
  const walk = (n: FilterNode): string => {
    switch (n.kind) {
      case "and":
      case "or":
        return `(${n.children.map(walk).join(n.kind === "and" ? " AND " : " OR ")})`;
      case "compare": {
        const x = value(n.field);
        if (n.op === "=" || n.op === "!=") {
          const alts = alternatives(n.value).map((a) => `${params.add(a)}::jsonb`);
          return `(${x} ${n.op === "=" ? "IN" : "NOT IN"} (${alts.join(", ")}))`;
        }
        return `(${x} ${n.op} ${json(n.value)})`;
      }
      case "glob": {
        const x = `(${column(n.field)} #>> ${params.add(pathArray(n.field))}::text[])`;
        const test = `${x} ~ ${params.add(globToRegex(n.pattern))}`;
        return n.negate ? `(NOT (${test}))` : `(${test})`;
      }
      case "in": {
        const x = value(n.field);
        return `(${x} ${n.negate ? "NOT IN" : "IN"} (${n.values.map(json).join(", ")}))`;
      }
      case "contains": {
        const x = value(n.field);
        const test = `${x} @> jsonb_build_array(${json(n.value)})`;
        return n.negate ? `(jsonb_typeof(${x}) = 'array' AND NOT (${test}))` : `(${test})`;
      }
      case "hasField":
        return `(${value(n.field)} IS ${n.negate ? "" : "NOT "}NULL)`;
    }
  };
  return walk(node);
}
