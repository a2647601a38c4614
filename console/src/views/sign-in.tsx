import { useState } from "preact/hooks";
import { ApiError, ManagementApi, MessagingApi } from "../lib/api";
import type { Session } from "../lib/session";
import type { AccountOverview, ManagementAccount, ServerConfig } from "../lib/types";
import { Button, Field } from "../components/ui";

/**
 * Two ways in: a messaging token, or a management customer's e-mail and API key. Each is checked against the API
 * before the console opens; a wrong credential shows the API's own error.
 */
export function SignIn({
  config,
  notice,
  onSignedIn,
}: {
  config: ServerConfig;
  notice: string | undefined;
  onSignedIn: (session: Session, accounts?: ManagementAccount[]) => void;
}) {
  const [token, setToken] = useState("");
  const [email, setEmail] = useState("");
  const [apiKey, setApiKey] = useState("");
  const [mode, setMode] = useState<"token" | "management">("token");
  const [error, setError] = useState<string | undefined>(notice);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      if (mode === "token") {
        const value = token.trim();
        await new MessagingApi(value, config).get<AccountOverview>("/v2/account");
        onSignedIn({ kind: "token", token: value });
      } else {
        const api = new ManagementApi(email.trim(), apiKey.trim(), config);
        const accounts = await api.get<ManagementAccount[]>("users");
        onSignedIn({ kind: "management", email: email.trim(), apiKey: apiKey.trim() }, accounts);
      }
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="sign-in">
      <div class="sign-in-card">
        <div class="brand big">
          <span class="logo" aria-hidden="true" />
          Ferry
        </div>
        <p class="sub">Sign in to see and operate your messages, schedules and queues.</p>
        <div class="tabs" role="tablist">
          <button
            type="button"
            role="tab"
            aria-selected={mode === "token"}
            class={mode === "token" ? "tab active" : "tab"}
            onClick={() => setMode("token")}
          >
            Messaging token
          </button>
          <button
            type="button"
            role="tab"
            aria-selected={mode === "management"}
            class={mode === "management" ? "tab active" : "tab"}
            onClick={() => setMode("management")}
          >
            E-mail and API key
          </button>
        </div>
        <form onSubmit={(e) => void submit(e)} class="form">
          {mode === "token" ? (
            <Field label="Token" hint="The messaging token (or its read-only token) that ferry serve printed.">
              <input
                type="password"
                name="token"
                autoComplete="off"
                required
                value={token}
                onInput={(e) => setToken(e.currentTarget.value)}
                autoFocus
              />
            </Field>
          ) : (
            <>
              <Field label="E-mail">
                <input
                  type="email"
                  name="email"
                  autoComplete="username"
                  required
                  value={email}
                  onInput={(e) => setEmail(e.currentTarget.value)}
                  autoFocus
                />
              </Field>
              <Field label="API key" hint="The management API key of this customer.">
                <input
                  type="password"
                  name="apiKey"
                  autoComplete="current-password"
                  required
                  value={apiKey}
                  onInput={(e) => setApiKey(e.currentTarget.value)}
                />
              </Field>
            </>
          )}
          {error && (
            <div class="error-box" role="alert">
              {error}
            </div>
          )}
          <Button type="submit" variant="primary" disabled={busy} class="wide">
            {busy ? "Signing in…" : "Sign in"}
          </Button>
        </form>
        <p class="fine">
          Credentials stay in this tab's session storage and are sent only to this server. Ferry {config.version}.
        </p>
      </div>
    </main>
  );
}

/** After an e-mail sign-in with several accounts: pick the one to work on. */
export function AccountPicker({
  accounts,
  email,
  onPick,
  onSignOut,
}: {
  accounts: ManagementAccount[];
  email: string;
  onPick: (account: ManagementAccount) => void;
  onSignOut: () => void;
}) {
  return (
    <main class="sign-in">
      <div class="sign-in-card wide">
        <div class="brand big">
          <span class="logo" aria-hidden="true" />
          Ferry
        </div>
        <p class="sub">
          {email} has {accounts.length} messaging accounts. Choose the one to work on.
        </p>
        {accounts.length === 0 ? (
          <p class="muted">This customer has no messaging account yet: create one with the management API.</p>
        ) : (
          <ul class="account-list">
            {accounts.map((a) => (
              <li key={a.id}>
                <button type="button" class="account-choice" onClick={() => onPick(a)}>
                  <span class="mono">{a.id}</span>
                  <span class="muted">
                    {a.reserved_type || a.type} · {a.region} · {a.state}
                  </span>
                </button>
              </li>
            ))}
          </ul>
        )}
        <Button variant="ghost" onClick={onSignOut}>
          Sign out
        </Button>
      </div>
    </main>
  );
}
