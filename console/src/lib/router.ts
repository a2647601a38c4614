import { useEffect, useState } from "preact/hooks";

/**
 * Views live in the URL's fragment (`#/messages/<id>`) so a reload or a shared link opens the same view; the
 * fragment never carries a credential.
 */
export interface Route {
  view: string;
  id?: string;
}

export function parseHash(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  const route: Route = { view: parts[0] ?? "overview" };
  if (parts[1] !== undefined) route.id = parts[1];
  return route;
}

export function href(view: string, id?: string): string {
  return id === undefined ? `#/${view}` : `#/${view}/${encodeURIComponent(id)}`;
}

export function navigate(view: string, id?: string): void {
  location.hash = href(view, id);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseHash(location.hash));
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}
