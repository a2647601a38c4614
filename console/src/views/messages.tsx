import { useState } from "preact/hooks";
import { useApp } from "../lib/app-context";
import { groupLogs } from "../lib/group-logs";
import { href, navigate } from "../lib/router";
import type { LogEntry } from "../lib/types";
import { useAsync, useInterval } from "../lib/use-async";
import { Empty, ListStatus, PageHead, Pager, StateBadge, Time, usePager } from "../components/ui";
import { FilterBar, filterQuery, type Filters, noFilters } from "./filters";

const PAGE = 100;

export function Messages() {
  const { api } = useApp();
  const [filters, setFilters] = useState<Filters>(noFilters);
  const pager = usePager();
  const logs = useAsync(
    () =>
      api.get<{ logs: LogEntry[]; cursor?: string }>("/v2/logs", {
        query: { ...filterQuery(filters, true), count: PAGE, cursor: pager.cursor },
      }),
    [api, filters, pager.cursor],
  );
  // Live while the first page is shown: newer entries arrive at its top.
  const live = pager.page === 1;
  useInterval(() => logs.reload(true), 2000, live);
  const groups = groupLogs(logs.data?.logs ?? []);

  return (
    <>
      <PageHead title="Messages" sub="Recent messages and their transitions, newest first.">
        {live && <span class="live">Live</span>}
      </PageHead>
      <FilterBar
        value={filters}
        withState
        onApply={(f) => {
          setFilters(f);
          pager.reset();
        }}
      />
      <section class="panel flush">
        <ListStatus
          state={logs}
          count={groups.length}
          empty={
            <Empty title="No messages here yet">
              Publish one from the <a href={href("publish")}>Publish</a> view or with the API; it shows up here within
              seconds. If filters are set, clear them.
            </Empty>
          }
        />
        {groups.length > 0 && (
          <div class="table-wrap">
            <table class="table" data-testid="messages-table">
              <thead>
                <tr>
                  <th>Message</th>
                  <th>State</th>
                  <th>Destination</th>
                  <th>Labels</th>
                  <th>Transitions</th>
                  <th>Last change</th>
                </tr>
              </thead>
              <tbody>
                {groups.map((g) => (
                  <tr
                    key={g.messageId}
                    class="clickable"
                    data-message-id={g.messageId}
                    onClick={(e) => {
                      if ((e.target as HTMLElement).closest("a")) return;
                      navigate("messages", g.messageId);
                    }}
                  >
                    <td>
                      <a class="id-link" href={href("messages", g.messageId)}>
                        {g.messageId}
                      </a>
                    </td>
                    <td>
                      <StateBadge state={g.state} />
                    </td>
                    <td class="cell-url" title={g.url}>
                      {g.topicName && <span class="tag">group {g.topicName}</span>}
                      {g.queueName && <span class="tag">queue {g.queueName}</span>}
                      {g.url}
                    </td>
                    <td>
                      {g.labels.map((l) => (
                        <span key={l} class="tag">
                          {l}
                        </span>
                      ))}
                    </td>
                    <td class="muted small">{g.states.join(" → ")}</td>
                    <td>
                      <Time ms={g.lastTime} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager page={pager.page} nextCursor={logs.data?.cursor} onNext={pager.next} onPrev={pager.prev} />
      </section>
    </>
  );
}
