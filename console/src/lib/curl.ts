import type { BuiltRequest } from "./publish-request.js";

/** POSIX shell single quotes: the text as-is, with each `'` written as `'\''`. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The same request as a curl command. The token is never written into it: it reads `$FERRY_TOKEN` from the shell
 * (double quotes so the shell expands it), so a copied command does not leak the credential.
 */
export function curlCommand(origin: string, request: BuiltRequest, tokenVariable = "FERRY_TOKEN"): string {
  const lines = [`curl -X ${request.method} ${shellQuote(origin + request.path)}`];
  lines.push(`-H "Authorization: Bearer $${tokenVariable}"`);
  for (const [name, value] of Object.entries(request.headers)) lines.push(`-H ${shellQuote(`${name}: ${value}`)}`);
  if (request.body !== "") lines.push(`--data-raw ${shellQuote(request.body)}`);
  return lines.join(" \\\n  ");
}
