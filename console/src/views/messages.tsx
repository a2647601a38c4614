import { useApp } from "../lib/app-context";
import { href, navigate } from "../lib/router";
import {
  hasFilters,
  messageFiltersFrom,
  messageFiltersQuery,
  messageListQuery,
  shortUrl,
  stateDetail,
} from "../lib/message-list";
import type { MessageListEntry, MessageListPage } from "../lib/types";
import { useAsync, useInterval } from "../lib/use-async";
import { SelectAllBox, SelectBox, useSelection } from "../components/selection";
import { Empty, ListStatus, PageHead, Pager, StateBadge, Time, usePager } from "../components/ui";
import { BulkActions } from "./message-bulk";
import { MessageFilterBar } from "./message-filters";

const PAGE = 50;

/**
 * One row per message (`GET /v2/messages`, docs/messaging.md "Listing messages"), newest first, paged by the API's
 * cursor. The filters come from the fragment's query (app.tsx remounts the view when it changes), so a link
 * reproduces the view. The entries carry no body: the live refresh stays small however large the messages are
 * (a message's body is read only on its page).
 */
export function Messages({ query }: { query: URLSearchParams }) {
  const { api } = useApp();
  const filters = messageFiltersFrom(query);
  const pager = usePager();
  const selection = useSelection();
  const list = useAsync(
    () =>
      api.get<MessageListPage>("/v2/messages", {
        query: { ...messageListQuery(filters), count: PAGE, cursor: pager.cursor },
      }),
    [api, query.toString(), pager.cursor],
  );
  // Live while the first page is shown: new messages arrive at its top, states change in place.
  const live = pager.page === 1;
  useInterval(() => list.reload(true), 2000, live);
  const entries = list.data?.messages ?? [];
  const now = Date.now();

  return (
    <>
      <PageHead title="Messages" sub="Every message with its current state, newest first.">
        {live && <span class="live">Live</span>}
        <BulkActions api={api} filters={filters} entries={entries} selection={selection} onDone={() => list.reload(true)} />
      </PageHead>
      <MessageFilterBar value={filters} onApply={(f) => navigate("messages", undefined, messageFiltersQuery(f))} />
      <section class="panel flush">
        <ListStatus
          state={list}
          count={entries.length}
          empty={
            hasFilters(filters) ? (
              <Empty title="No messages match these filters">
                Change or <a href={href("messages")}>clear the filters</a>. Ended messages are kept until log retention.
              </Empty>
            ) : (
              <Empty title="No messages here yet">
                Publish one from the <a href={href("publish")}>Publish</a> view or with the API; it shows up here within
                seconds.
              </Empty>
            )
          }
        />
        {entries.length > 0 && (
          <div class="table-wrap">
            <table class="table messages-table" data-testid="messages-table">
              <colgroup>
                <col class="col-check" />
                <col class="col-state" />
                <col class="col-id" />
                <col />
                <col class="col-num" />
                <col class="col-status" />
                <col class="col-labels" />
                <col class="col-created" />
              </colgroup>
              <thead>
                <tr>
                  <th>
                    <SelectAllBox ids={entries.map((e) => e.messageId)} selection={selection} />
                  </th>
                  <th>State</th>
                  <th>Message</th>
                  <th>Destination</th>
                  <th class="num" title="Attempts made">
                    Tries
                  </th>
                  <th title="The destination's HTTP status of the last attempt">Status</th>
                  <th>Labels</th>
                  <th>Created</th>
                </tr>
              </thead>
              <tbody>
                {entries.map((e) => (
                  <Row key={e.messageId} entry={e} now={now} selection={selection} />
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager page={pager.page} nextCursor={list.data?.cursor} onNext={pager.next} onPrev={pager.prev} />
      </section>
    </>
  );
}

function Row({ entry: e, now, selection }: { entry: MessageListEntry; now: number; selection: ReturnType<typeof useSelection> }) {
  const detail = stateDetail(e, now);
  return (
    <tr
      class={selection.checked.has(e.messageId) ? "clickable selected" : "clickable"}
      data-message-id={e.messageId}
      data-state={e.state}
      onClick={(ev) => {
        if ((ev.target as HTMLElement).closest("a, input, button")) return;
        navigate("messages", e.messageId);
      }}
    >
      <td>
        <SelectBox id={e.messageId} selection={selection} />
      </td>
      <td>
        <StateBadge state={e.state} />
        {detail && <div class="muted small ellipsis" title={detail}>{detail}</div>}
      </td>
      <td class="ellipsis-cell" title={e.messageId}>
        <a class="id-link" href={href("messages", e.messageId)}>
          {e.messageId}
        </a>
        {e.kind && <div class="muted small">{e.kind === "callback" ? "callback" : "failure callback"}</div>}
      </td>
      <td class="ellipsis-cell" title={e.url}>
        {shortUrl(e.url)}
        {(e.topicName || e.queueName || e.scheduleId) && (
          <div class="ellipsis-cell">
            {e.topicName && <span class="tag">group {e.topicName}</span>}
            {e.queueName && <span class="tag">queue {e.queueName}</span>}
            {e.scheduleId && <span class="tag">schedule {e.scheduleId}</span>}
          </div>
        )}
      </td>
      <td class="num">{e.attempts}</td>
      <td>{e.lastResponseStatus ?? <span class="muted">–</span>}</td>
      <td class="ellipsis-cell" title={(e.labels ?? []).join(", ")}>
        {(e.labels ?? []).map((l) => (
          <span key={l} class="tag">
            {l}
          </span>
        ))}
      </td>
      <td class="ellipsis-cell">
        <Time ms={e.createdAt} />
      </td>
    </tr>
  );
}
