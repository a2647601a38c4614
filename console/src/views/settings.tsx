import { useApp } from "../lib/app-context";
import { enc } from "../lib/api";
import type { ManagementAccount, SigningKeys } from "../lib/types";
import { useAsync } from "../lib/use-async";
import { ErrorBox, KeyValues, Loading, PageHead, Secret, useAction, useConfirm, WriteButton } from "../components/ui";
import { LimitsTable } from "./limits";

export function Settings() {
  const { api, management, session, account, readOnly, setToken, refreshAccount } = useApp();
  const { run, busy } = useAction();
  const confirm = useConfirm();
  // The read-only token and token rotation live on the management API: only an e-mail sign-in reaches them.
  const record = useAsync(
    () =>
      management && session.kind === "management" && session.accountId
        ? management.get<ManagementAccount>(`user/${enc(session.accountId)}`)
        : Promise.resolve(undefined),
    [management, session],
  );
  // Signing keys are secrets of the full token; the read-only console does not ask for them.
  const keys = useAsync(
    () => (readOnly ? Promise.resolve(undefined) : api.get<SigningKeys>("/v2/keys")),
    [api, readOnly],
  );

  const rotateToken = async () => {
    if (!management || session.kind !== "management" || !session.accountId) return;
    if (!(await confirm.ask("Rotate the token? The current token stops working at once, on every node.", "Rotate token"))) return;
    await run(
      async () => {
        const updated = await management.post<ManagementAccount>(`rotate-token/${enc(session.accountId!)}`);
        setToken(updated.token);
      },
      "Token rotated",
      () => record.reload(true),
    );
  };
  const rotateKeys = async () => {
    if (!(await confirm.ask("Rotate the signing keys? The next key becomes the current one and a new next key is made.", "Rotate keys"))) return;
    await run(() => api.post("/v2/keys/rotate"), "Signing keys rotated", () => {
      keys.reload(true);
      refreshAccount();
    });
  };

  return (
    <>
      {confirm.dialog}
      <PageHead title="Settings" sub={`Account ${account.accountId}`} />
      <section class="panel">
        <div class="panel-head">
          <h2>Tokens</h2>
          {management && (
            <WriteButton variant="danger" onClick={() => void rotateToken()} disabled={busy}>
              Rotate token
            </WriteButton>
          )}
        </div>
        {record.error && <ErrorBox error={record.error} retry={() => record.reload()} />}
        <KeyValues
          rows={[
            [readOnly ? "Read-only token (this session)" : "Token", <Secret value={session.token ?? ""} label="Token" />],
            [
              "Read-only token",
              record.data?.read_only_token ? (
                <Secret value={record.data.read_only_token} label="Read-only token" />
              ) : (
                <span class="muted">
                  {management ? "Not available on this server." : "Sign in with e-mail and API key to see it."}
                </span>
              ),
            ],
          ]}
        />
        {!management && (
          <p class="field-hint">Rotating the token is a management action: sign in with e-mail and API key to do it here.</p>
        )}
      </section>
      <section class="panel">
        <div class="panel-head">
          <h2>Signing keys</h2>
          {!readOnly && (
            <WriteButton onClick={() => void rotateKeys()} disabled={busy}>
              Rotate signing keys
            </WriteButton>
          )}
        </div>
        {readOnly ? (
          <p class="muted">Signing keys are not shown to the read-only token.</p>
        ) : keys.error ? (
          <ErrorBox error={keys.error} retry={() => keys.reload()} />
        ) : !keys.data ? (
          <Loading />
        ) : (
          <KeyValues
            rows={[
              ["Current", <Secret value={keys.data.current} label="Current signing key" />],
              ["Next", <Secret value={keys.data.next} label="Next signing key" />],
            ]}
          />
        )}
      </section>
      <section class="panel">
        <h2>Plan limits</h2>
        <p class="muted">Plan {account.plan}.</p>
        <LimitsTable limits={account.limits} />
      </section>
    </>
  );
}
