import { useEffect, useState } from "preact/hooks";

import { href, parseHash, type Route } from "./hash.js";

export { href, parseHash, type Route };

export function navigate(view: string, id?: string, query?: Record<string, string>): void {
  location.hash = href(view, id, query);
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
