/**
 * Typed omit-empty assignment for views (docs/messaging.md "Wire conventions": zero values are left out): the key
 * must be one the wire shape names and the value of its type, so TypeScript checks the view against its schema
 * (src/http/schemas/, docs/architecture.md "Wire shapes").
 */
export function putPresent<T extends object, K extends keyof T>(out: T, key: K, value: T[K] | null | undefined): void {
  if (value === undefined || value === null || value === "") return;
  if (Array.isArray(value) && value.length === 0) return;
  if (typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0) return;
  out[key] = value;
}
