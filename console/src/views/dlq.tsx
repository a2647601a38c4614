import { useState } from "preact/hooks";
import { useApp } from "../lib/app-context";
import { SelectAllBox, SelectBox, useSelection } from "../components/selection";
import { enc, type MessagingApi, type QueryValue } from "../lib/api";
import { href, navigate } from "../lib/router";
import type { DlqEntry } from "../lib/types";
import { useAsync } from "../lib/use-async";
import { BodyView } from "../components/body-view";
import {
  Badge,
  Dialog,
  Empty,
  ErrorBox,
  HeadersTable,
  KeyValues,
  ListStatus,
  Loading,
  PageHead,
  Pager,
  Time,
  useAction,
  useConfirm,
  usePager,
  WriteButton,
} from "../components/ui";
import { FilterBar, filterQuery, type Filters, noFilters } from "./filters";

const PAGE = 50;
/** Bulk actions by filter go page by page (100 entries a call); this bounds one click. */
const MAX_BULK_CALLS = 200;

function statusKind(status: number): string {
  if (status === 0) return "bad";
  return status >= 500 ? "bad" : status >= 400 ? "warn" : "info";
}

/**
 * Why the entry's last attempt failed (docs/dlq.md "Cause"): a badge (the HTTP status, or the network cause in words:
 * "Connection refused", "Timed out", "TLS error", "DNS lookup failed") and one line (the start of the response body,
 * or the error as recorded). In the list the line is cut to the cell; `full` (the entry's dialog) wraps it.
 */
function Cause({ entry, full }: { entry: DlqEntry; full?: boolean }) {
  const cause = entry.failureCause;
  const http = entry.responseStatus > 0;
  const badge = http ? `HTTP ${entry.responseStatus}` : (cause?.summary ?? "No answer");
  // The HTTP summary starts with the status the badge already shows.
  const line = http ? (cause?.summary.replace(/^HTTP \d+:? ?/, "") ?? "") : (cause?.error ?? "");
  return (
    <div class={full ? "cause full" : "cause"} title={[badge, line].filter(Boolean).join(": ")} data-kind={cause?.kind}>
      <Badge kind={statusKind(entry.responseStatus)}>{badge}</Badge>
      {line && <span class="cause-text">{line}</span>}
    </div>
  );
}

async function retryMatching(api: MessagingApi, query: Record<string, QueryValue>): Promise<number> {
  let cursor: string | undefined;
  let total = 0;
  for (let call = 0; call < MAX_BULK_CALLS; call++) {
    const r = await api.post<{ responses: unknown[]; cursor?: string }>("/v2/dlq/retry", { query: { ...query, cursor } });
    total += r.responses.length;
    cursor = r.cursor;
    if (!cursor) break;
  }
  return total;
}

export function DeadLetters({ selected }: { selected: string | undefined }) {
  const { api, refreshAccount } = useApp();
  const [filters, setFilters] = useState<Filters>(noFilters);
  const selection = useSelection();
  const { checked } = selection;
  const pager = usePager();
  const { run, busy } = useAction();
  const confirm = useConfirm();
  const query = filterQuery(filters, false);
  const list = useAsync(
    () =>
      api.get<{ messages: DlqEntry[]; cursor?: string }>("/v2/dlq", {
        query: { ...query, count: PAGE, cursor: pager.cursor, order: "latestFirst" },
      }),
    [api, filters, pager.cursor],
  );
  // The total under the same filters: one COUNT, not a walk over the pages (GET /v2/dlq/count, docs/dlq.md).
  const total = useAsync(() => api.get<{ count: number }>("/v2/dlq/count", { query }), [api, filters]);
  const entries = list.data?.messages ?? [];
  const filtered = Object.values(filters).some((v) => v !== "");
  const after = () => {
    selection.clear();
    list.reload(true);
    total.reload(true);
    refreshAccount();
  };

  const ids = [...checked];

  const retrySelected = () =>
    run(() => api.post("/v2/dlq/retry", { body: { dlqIds: ids } }), `Retried ${ids.length} entries`, after);
  const deleteSelected = async () => {
    if (!(await confirm.ask(`Delete ${ids.length} entries from the dead letter queue?`, "Delete"))) return;
    await run(() => api.del("/v2/dlq", { body: { dlqIds: ids } }), `Deleted ${ids.length} entries`, after);
  };
  const retryAll = async () => {
    const what = filtered ? "every entry matching the filters" : "every entry";
    if (!(await confirm.ask(`Retry ${what} in the dead letter queue?`, "Retry all"))) return;
    await run(() => retryMatching(api, query), `Retried ${what}`, after);
  };
  const deleteAll = async () => {
    const what = filtered ? "every entry matching the filters" : "every entry";
    if (!(await confirm.ask(`Delete ${what} from the dead letter queue? This cannot be undone.`, "Delete all"))) return;
    await run(
      async () => {
        if (!filtered) return api.del("/v2/dlq");
        let cursor: string | undefined;
        for (let call = 0; call < MAX_BULK_CALLS; call++) {
          const r = await api.del<{ cursor?: string }>("/v2/dlq", { query: { ...query, count: 100, cursor } });
          cursor = r.cursor;
          if (!cursor) break;
        }
        return undefined;
      },
      `Deleted ${what}`,
      after,
    );
  };

  return (
    <>
      {confirm.dialog}
      <PageHead title="Dead letter queue" sub="Messages whose every attempt failed. Retry them once the destination is fixed.">
        {checked.size > 0 ? (
          <>
            <span class="muted">{checked.size} selected</span>
            <WriteButton onClick={() => void retrySelected()} disabled={busy}>
              Retry selected
            </WriteButton>
            <WriteButton variant="danger" onClick={() => void deleteSelected()} disabled={busy}>
              Delete selected
            </WriteButton>
          </>
        ) : (
          entries.length > 0 && (
            <>
              <WriteButton onClick={() => void retryAll()} disabled={busy}>
                {filtered ? "Retry matching" : "Retry all"}
              </WriteButton>
              <WriteButton variant="danger" onClick={() => void deleteAll()} disabled={busy}>
                {filtered ? "Delete matching" : "Delete all"}
              </WriteButton>
            </>
          )
        )}
      </PageHead>
      <FilterBar
        value={filters}
        withState={false}
        onApply={(f) => {
          setFilters(f);
          selection.clear();
          pager.reset();
        }}
      />
      {total.data && (
        <p class="list-total" data-testid="dlq-total">
          {total.data.count === 1 ? "1 entry" : `${total.data.count.toLocaleString()} entries`}
          {filtered ? " match the filters" : " in the dead letter queue"}
        </p>
      )}
      <section class="panel flush">
        <ListStatus
          state={list}
          count={entries.length}
          empty={
            <Empty title="The dead letter queue is empty">
              A message lands here when it fails after its last retry. Nothing to do while this stays empty.
            </Empty>
          }
        />
        {entries.length > 0 && (
          <div class="table-wrap">
            <table class="table dlq-table" data-testid="dlq-table">
              <thead>
                <tr>
                  <th>
                    <SelectAllBox ids={entries.map((e) => e.dlqId)} selection={selection} />
                  </th>
                  <th>Message</th>
                  <th>Destination</th>
                  <th>Cause</th>
                  <th>Labels</th>
                  <th>Created</th>
                  <th>
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {entries.map((e) => (
                  <tr key={e.dlqId} data-dlq-id={e.dlqId} class={checked.has(e.dlqId) ? "selected" : ""}>
                    <td>
                      <SelectBox id={e.dlqId} selection={selection} />
                    </td>
                    <td class="cell-ids">
                      <a class="id-link ellipsis" href={href("messages", e.messageId)} title={e.messageId}>
                        {e.messageId}
                      </a>
                      <a class="id-link ellipsis muted-link" href={href("dlq", e.dlqId)} title={`DLQ entry ${e.dlqId}`}>
                        {e.dlqId}
                      </a>
                    </td>
                    <td class="dlq-url" title={e.url}>
                      <span class="clamp-2">{e.url}</span>
                    </td>
                    <td class="cell-cause" data-testid="dlq-cause">
                      <Cause entry={e} />
                    </td>
                    <td class="cell-labels">
                      <div>
                        {(e.labels ?? []).length === 0 && <span class="muted">–</span>}
                        {(e.labels ?? []).map((l) => (
                          <Badge key={l} kind="muted">
                            {l}
                          </Badge>
                        ))}
                      </div>
                    </td>
                    <td>
                      <Time ms={e.createdAt} />
                    </td>
                    <td>
                      <div class="row-actions">
                        <WriteButton
                          small
                          onClick={() =>
                            void run(() => api.post(`/v2/dlq/retry/${enc(e.dlqId)}`), "Retried: a new message is on its way", after)
                          }
                          disabled={busy}
                        >
                          Retry
                        </WriteButton>
                        <WriteButton
                          small
                          variant="danger"
                          onClick={() =>
                            void (async () => {
                              if (!(await confirm.ask(`Delete ${e.dlqId} from the dead letter queue?`, "Delete"))) return;
                              await run(() => api.del(`/v2/dlq/${enc(e.dlqId)}`), "Deleted", after);
                            })()
                          }
                          disabled={busy}
                        >
                          Delete
                        </WriteButton>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager page={pager.page} nextCursor={list.data?.cursor} onNext={pager.next} onPrev={pager.prev} />
      </section>
      {selected && <DlqEntryDialog id={selected} onChanged={after} />}
    </>
  );
}

function DlqEntryDialog({ id, onChanged }: { id: string; onChanged: () => void }) {
  const { api } = useApp();
  const { run, busy } = useAction();
  const entry = useAsync(() => api.get<DlqEntry>(`/v2/dlq/${enc(id)}`), [api, id]);
  const close = () => navigate("dlq");
  const done = () => {
    onChanged();
    close();
  };
  return (
    <Dialog title={`DLQ entry ${id}`} open onClose={close} wide>
      {entry.error && <ErrorBox error={entry.error} />}
      {!entry.data && !entry.error && <Loading />}
      {entry.data && (
        <>
          <KeyValues
            rows={[
              ["Message", <a class="id-link" href={href("messages", entry.data.messageId)}>{entry.data.messageId}</a>],
              ["Destination", <span class="break">{entry.data.url}</span>],
              ["Method", entry.data.method],
              ["Created", <Time ms={entry.data.createdAt} />],
              ["Last response", entry.data.responseStatus === 0 ? "no HTTP answer" : `HTTP ${entry.data.responseStatus}`],
              ["Cause", <Cause entry={entry.data} full />],
              ["Failed", <Time ms={entry.data.failedAt} />],
              ["Labels", (entry.data.labels ?? []).join(", ") || "–"],
            ]}
          />
          <h3>Response headers</h3>
          <HeadersTable headers={entry.data.responseHeader} />
          <h3>Response body</h3>
          <BodyView text={entry.data.responseBody} base64={entry.data.responseBodyBase64} name={`${id}-response`} />
          <h3>Message body</h3>
          <BodyView text={entry.data.body} base64={entry.data.bodyBase64} name={id} />
          <div class="actions">
            <WriteButton
              variant="danger"
              disabled={busy}
              onClick={() => void run(() => api.del(`/v2/dlq/${enc(id)}`), "Deleted", done)}
            >
              Delete
            </WriteButton>
            <WriteButton
              variant="primary"
              disabled={busy}
              onClick={() => void run(() => api.post(`/v2/dlq/retry/${enc(id)}`), "Retried: a new message is on its way", done)}
            >
              Retry
            </WriteButton>
          </div>
        </>
      )}
    </Dialog>
  );
}
