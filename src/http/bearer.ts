/**
 * The token of an `Authorization: Bearer <token>` header, trimmed; undefined without one. Every API that takes a
 * Bearer token reads it here (messaging, the search data plane, /metrics: src/http/plugins/auth.ts); tokens are
 * compared with `sameSecret` (src/domain/secrets.ts).
 */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(header?.trim() ?? "");
  return match?.[1]?.trim();
}
