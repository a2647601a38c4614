/**
 * Credentials of this tab, in session storage only: never in a URL, never in a cookie. Closing the tab or signing
 * out forgets them.
 */
export type Session =
  | { kind: "token"; token: string }
  | {
      kind: "management";
      email: string;
      apiKey: string;
      /** The messaging account chosen after sign-in; its token is what the messaging API is called with. */
      accountId?: string;
      token?: string;
    };

const KEY = "ferry.console.session";

export function loadSession(): Session | undefined {
  try {
    const raw = sessionStorage.getItem(KEY);
    return raw ? (JSON.parse(raw) as Session) : undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(KEY, JSON.stringify(session));
}

export function clearSession(): void {
  sessionStorage.removeItem(KEY);
}

/** The messaging token the console acts with, once an account is chosen. */
export function messagingToken(session: Session | undefined): string | undefined {
  return session?.token;
}
