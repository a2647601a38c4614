import { invalidField, quoted } from "../errors.js";

/** Queue, URL-group and schedule names: alphanumerics, `-`, `_`, `.` (docs/messaging.md "Names"). */
const NAME = /^[A-Za-z0-9._-]+$/;

/** Longest accepted name; long enough for generated ids, short enough to keep indexes and logs tidy. */
export const MAX_NAME_LENGTH = 256;

/** Returns the name when it is valid, otherwise a 400 naming `field`. */
export function validName(value: unknown, field: string): string {
  if (typeof value !== "string" || value === "") throw invalidField(field, "is required");
  if (value.length > MAX_NAME_LENGTH) throw invalidField(field, `must be at most ${MAX_NAME_LENGTH} characters`);
  if (!NAME.test(value)) {
    throw invalidField(field, `${quoted(value)} must contain only alphanumerics, "-", "_" and "."`);
  }
  return value;
}
