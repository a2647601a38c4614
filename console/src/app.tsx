import { useEffect, useMemo, useState } from "preact/hooks";
import { ApiError, loadServerConfig, ManagementApi, MessagingApi } from "./lib/api";
import { AppContext, type AppContextValue, type Toast } from "./lib/app-context";
import { href, navigate, useRoute } from "./lib/router";
import { clearSession, loadSession, type Session, saveSession } from "./lib/session";
import type { AccountOverview, ManagementAccount, ServerConfig } from "./lib/types";
import { ErrorBox, Loading } from "./components/ui";
import { AccountPicker, SignIn } from "./views/sign-in";
import { Overview } from "./views/overview";
import { Messages } from "./views/messages";
import { MessageDetail } from "./views/message-detail";
import { DeadLetters } from "./views/dlq";
import { Schedules } from "./views/schedules";
import { Queues } from "./views/queues";
import { UrlGroups } from "./views/url-groups";
import { FlowControl } from "./views/flow-control";
import { Publish } from "./views/publish";
import { WorkflowRuns } from "./views/workflows";
import { WorkflowRunDetail } from "./views/workflow-run";
import { WorkflowDlq } from "./views/workflow-dlq";
import { runFiltersFrom } from "./lib/workflow-runs";
import { Settings } from "./views/settings";

export const NAV: { view: string; label: string }[] = [
  { view: "overview", label: "Overview" },
  { view: "messages", label: "Messages" },
  { view: "dlq", label: "Dead letter queue" },
  { view: "workflows", label: "Workflow runs" },
  { view: "workflow-dlq", label: "Workflow DLQ" },
  { view: "schedules", label: "Schedules" },
  { view: "queues", label: "Queues" },
  { view: "url-groups", label: "URL groups" },
  { view: "flow-control", label: "Flow control" },
  { view: "publish", label: "Publish" },
  { view: "settings", label: "Settings" },
];

export function App() {
  const [config, setConfig] = useState<ServerConfig>();
  const [configError, setConfigError] = useState<Error>();
  const [session, setSession] = useState<Session | undefined>(loadSession);
  const [accounts, setAccounts] = useState<ManagementAccount[]>();
  const [notice, setNotice] = useState<string>();

  useEffect(() => {
    loadServerConfig().then(setConfig, setConfigError);
  }, []);

  const update = (next: Session | undefined) => {
    if (next) saveSession(next);
    else clearSession();
    setSession(next);
  };
  const signOut = (message?: string) => {
    update(undefined);
    setAccounts(undefined);
    setNotice(message);
    history.replaceState(null, "", location.pathname);
  };

  // An e-mail session after a reload: list the accounts again (for the picker, or for "Switch account").
  useEffect(() => {
    if (!config || session?.kind !== "management" || accounts) return;
    new ManagementApi(session.email, session.apiKey, config)
      .get<ManagementAccount[]>("users")
      .then(setAccounts, (e: Error) => signOut(e.message));
  }, [config, session, accounts]);

  if (configError) return <ErrorBox error={configError} retry={() => location.reload()} />;
  if (!config) return <Loading label="Starting the console…" />;

  if (!session) {
    return (
      <SignIn
        config={config}
        notice={notice}
        onSignedIn={(s, list) => {
          setNotice(undefined);
          if (s.kind === "management" && list) {
            setAccounts(list);
            // A customer with one account goes straight into it.
            if (list.length === 1) {
              update({ ...s, accountId: list[0]!.id, token: list[0]!.token });
              return;
            }
          }
          update(s);
        }}
      />
    );
  }

  if (session.kind === "management" && !session.token) {
    if (!accounts) return <Loading label="Loading accounts…" />;
    return (
      <AccountPicker
        accounts={accounts}
        email={session.email}
        onPick={(a) => {
          update({ ...session, accountId: a.id, token: a.token });
          navigate("overview");
        }}
        onSignOut={() => signOut()}
      />
    );
  }

  return (
    <Shell
      config={config}
      session={session}
      multipleAccounts={(accounts?.length ?? 0) > 1}
      onSwitchAccount={() => session.kind === "management" && update({ kind: "management", email: session.email, apiKey: session.apiKey })}
      onSession={update}
      onSignOut={signOut}
    />
  );
}

function Shell({
  config,
  session,
  multipleAccounts,
  onSwitchAccount,
  onSession,
  onSignOut,
}: {
  config: ServerConfig;
  session: Session;
  multipleAccounts: boolean;
  onSwitchAccount: () => void;
  onSession: (s: Session) => void;
  onSignOut: (message?: string) => void;
}) {
  const token = session.token!;
  const api = useMemo(() => new MessagingApi(token, config), [token, config]);
  const management = useMemo(
    () => (session.kind === "management" ? new ManagementApi(session.email, session.apiKey, config) : undefined),
    [session, config],
  );
  const [account, setAccount] = useState<AccountOverview>();
  const [accountError, setAccountError] = useState<Error>();
  const [toasts, setToasts] = useState<Toast[]>([]);
  const route = useRoute();

  const refreshAccount = () => {
    api.get<AccountOverview>("/v2/account").then(
      (a) => {
        setAccount(a);
        setAccountError(undefined);
      },
      (e: Error) => {
        if (e instanceof ApiError && (e.status === 401 || e.status === 403)) onSignOut(e.message);
        else setAccountError(e);
      },
    );
  };
  useEffect(refreshAccount, [api]);

  const notify = (text: string, kind: Toast["kind"] = "ok") => {
    const id = Date.now() + Math.random();
    setToasts((t) => [...t, { id, kind, text }]);
    setTimeout(() => setToasts((t) => t.filter((x) => x.id !== id)), kind === "error" ? 8000 : 3500);
  };

  if (accountError && !account) return <ErrorBox error={accountError} retry={refreshAccount} />;
  if (!account) return <Loading label="Opening the account…" />;

  const ctx: AppContextValue = {
    config,
    session,
    api,
    management,
    account,
    readOnly: account.readOnly,
    refreshAccount,
    notify,
    setToken: (t) => onSession({ ...session, token: t }),
  };
  const active = route.view;

  return (
    <AppContext.Provider value={ctx}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <div class="layout">
        <aside class="sidebar">
          <div class="brand">
            <span class="logo" aria-hidden="true" />
            Ferry
          </div>
          <nav aria-label="Console">
            <ul class="nav">
              {NAV.map((item) => (
                <li key={item.view}>
                  <a
                    href={href(item.view)}
                    class={active === item.view ? "nav-item active" : "nav-item"}
                    aria-current={active === item.view ? "page" : undefined}
                  >
                    {item.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div class="sidebar-foot">
            <div class="account-chip" title={account.accountId}>
              <span class="muted small">Account</span>
              <span class="mono ellipsis">{account.accountId}</span>
              {account.readOnly && <span class="badge warn">read-only</span>}
            </div>
            {multipleAccounts && (
              <button type="button" class="btn ghost small wide" onClick={onSwitchAccount}>
                Switch account
              </button>
            )}
            <button type="button" class="btn small wide" onClick={() => onSignOut()}>
              Sign out
            </button>
          </div>
        </aside>
        <main id="main" class="content" tabIndex={-1}>
          <View view={route.view} id={route.id} query={route.query} />
        </main>
      </div>
      <div class="toasts" aria-live="polite">
        {toasts.map((t) => (
          <div key={t.id} class={`toast ${t.kind}`} role={t.kind === "error" ? "alert" : "status"}>
            {t.text}
          </div>
        ))}
      </div>
    </AppContext.Provider>
  );
}

function View({ view, id, query }: { view: string; id: string | undefined; query: URLSearchParams }) {
  // Views with filters in the fragment's query start afresh (first page, no selection) when the query changes.
  const key = query.toString();
  switch (view) {
    case "workflows":
      return id ? <WorkflowRunDetail id={id} /> : <WorkflowRuns key={key} filters={runFiltersFrom(query)} />;
    case "workflow-dlq":
      return <WorkflowDlq key={key} filters={{ ...runFiltersFrom(query), runId: query.get("runId") ?? "" }} />;
    case "messages":
      return id ? <MessageDetail id={id} /> : <Messages key={key} query={query} />;
    case "dlq":
      return <DeadLetters selected={id} />;
    case "schedules":
      return <Schedules />;
    case "queues":
      return <Queues />;
    case "url-groups":
      return <UrlGroups />;
    case "flow-control":
      return <FlowControl />;
    case "publish":
      return <Publish />;
    case "settings":
      return <Settings />;
    default:
      return <Overview />;
  }
}
