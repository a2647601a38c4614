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

/** `body` when the bytes are valid UTF-8, otherwise `bodyBase64`; nothing for an empty body (docs/messaging.md). */
export function putBodyPresent(out: { body?: string; bodyBase64?: string }, body: Buffer | undefined): void {
  if (body === undefined || body.length === 0) return;
  const text = body.toString("utf8");
  if (Buffer.from(text, "utf8").equals(body)) out.body = text;
  else out.bodyBase64 = body.toString("base64");
}
