/**
 * The fragment's grammar, pure (no Preact) so unit tests import it without the DOM's types.
 *
 * Views live in the URL's fragment (`#/messages/<id>`) so a reload or a shared link opens the same view; the
 * fragment never carries a credential. A view's filters may follow as a query (`#/workflows?state=RUN_FAILED`), so a
 * filtered list can be reloaded and shared too.
 */
export interface Route {
  view: string;
  id?: string;
  /** The fragment's query (`?key=value&…`), empty when there is none. */
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, "");
  const q = raw.indexOf("?");
  const path = q < 0 ? raw : raw.slice(0, q);
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const route: Route = { view: parts[0] ?? "overview", query: new URLSearchParams(q < 0 ? "" : raw.slice(q + 1)) };
  if (parts[1] !== undefined) route.id = parts[1];
  return route;
}

/** `#/view`, `#/view/<id>`, with the query's non-empty values (`#/view?a=1`). */
export function href(view: string, id?: string, query?: Record<string, string>): string {
  const base = id === undefined ? `#/${view}` : `#/${view}/${encodeURIComponent(id)}`;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) if (value !== "") params.set(key, value);
  const text = params.toString();
  return text ? `${base}?${text}` : base;
}

