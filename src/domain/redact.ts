import { createHash } from "node:crypto";
import { invalidField, quoted } from "../errors.js";

export interface RedactSpec {
  body: boolean;
  allHeaders: boolean;
  /** Lowercase header names. */
  headers: string[];
}

const ONE_HEADER = /^headers?\[\s*([!#$%&'*+.^_`|~0-9a-z-]+)\s*\]$/i;

/** Parses `Svc-Redact-Fields`, e.g. `body,header[Authorization]`; both `header` and `headers` spellings occur. */
export function parseRedactFields(value: string, field: string): RedactSpec {
  const spec: RedactSpec = { body: false, allHeaders: false, headers: [] };
  for (const part of value.split(",")) {
    const token = part.trim();
    if (token === "") continue;
    const lower = token.toLowerCase();
    const one = ONE_HEADER.exec(token);
    if (lower === "body") {
      spec.body = true;
    } else if (lower === "header" || lower === "headers") {
      spec.allHeaders = true;
    } else if (one?.[1] !== undefined) {
      const name = one[1].toLowerCase();
      if (!spec.headers.includes(name)) spec.headers.push(name);
    } else {
      throw invalidField(field, `unknown field ${quoted(token)} (expected body, header or header[Name])`);
    }
  }
  return spec;
}

/** One-way: the digest lets users compare values without storing them. */
export function redactedValue(original: string | Buffer): string {
  return `REDACTED:${createHash("sha256").update(original).digest("hex")}`;
}

export function redactHeaders(headers: Record<string, string[]>, spec: RedactSpec): Record<string, string[]> {
  // Object.fromEntries defines own properties, so a header named `__proto__` cannot touch the prototype.
  return Object.fromEntries(
    Object.entries(headers).map(([name, values]) => {
      const hit = spec.allHeaders || spec.headers.includes(name.toLowerCase());
      return [name, hit ? values.map(redactedValue) : [...values]];
    }),
  );
}
