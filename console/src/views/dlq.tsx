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
  if (status === 0) return "muted";
  return status >= 500 ? "bad" : status >= 400 ? "warn" : "info";
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
  const entries = list.data?.messages ?? [];
  const filtered = Object.values(filters).some((v) => v !== "");
  const after = () => {
    selection.clear();
    list.reload(true);
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
            <table class="table" data-testid="dlq-table">
              <thead>
                <tr>
                  <th>
                    <SelectAllBox ids={entries.map((e) => e.dlqId)} selection={selection} />
                  </th>
                  <th>DLQ id</th>
                  <th>Message</th>
                  <th>Destination</th>
                  <th>Last response</th>
                  <th>Created</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {entries.map((e) => (
                  <tr key={e.dlqId} data-dlq-id={e.dlqId} class={checked.has(e.dlqId) ? "selected" : ""}>
                    <td>
                      <SelectBox id={e.dlqId} selection={selection} />
                    </td>
                    <td>
                      <a class="id-link" href={href("dlq", e.dlqId)}>
                        {e.dlqId}
                      </a>
                    </td>
                    <td>
                      <a class="id-link" href={href("messages", e.messageId)}>
                        {e.messageId}
                      </a>
                    </td>
                    <td class="cell-url" title={e.url}>
                      {e.url}
                    </td>
                    <td>
                      <Badge kind={statusKind(e.responseStatus)}>
                        {e.responseStatus === 0 ? "no answer" : `HTTP ${e.responseStatus}`}
                      </Badge>
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
