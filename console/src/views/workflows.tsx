import { useState } from "preact/hooks";
import { useApp } from "../lib/app-context";
import type { MessagingApi, QueryValue } from "../lib/api";
import { href, navigate } from "../lib/router";
import type { WorkflowRun } from "../lib/types";
import { useAsync, useInterval } from "../lib/use-async";
import {
  cancellable,
  cancelQuery,
  duration,
  type RunFilters,
  runDuration,
  runFiltersActive,
  runQuery,
  runStateClass,
  stepCount,
} from "../lib/workflow-runs";
import { Badge, Empty, ListStatus, PageHead, Pager, Time, useAction, useConfirm, usePager, WriteButton } from "../components/ui";
import { RunFilterBar } from "./run-filters";

const PAGE = 25;
/** "Cancel matching" first lists the running runs it would touch (100 a call); this bounds one click. */
const MAX_LIST_CALLS = 50;
/** Ids per bulk cancel call: `DELETE /v2/workflows/runs?workflowRunIds=…` (contract E6). */
const CANCEL_CHUNK = 100;

type RunPage = { runs: WorkflowRun[]; cursor?: string };

/** The ids of the runs that match `query` (from `cancelQuery`: running ones), newest first, at most MAX_LIST_CALLS pages. */
async function runningIds(api: MessagingApi, query: Record<string, QueryValue>): Promise<{ ids: string[]; more: boolean }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let call = 0; call < MAX_LIST_CALLS; call++) {
    const page = await api.get<RunPage>("/v2/workflows/events", {
      query: { ...query, count: 100, cursor },
    });
    ids.push(...page.runs.map((r) => r.workflowRunId));
    cursor = page.cursor;
    if (!cursor) return { ids, more: false };
  }
  return { ids, more: true };
}

/** Cancels exactly `ids` (those the confirm counted), 100 a call; answers how many the server cancelled. */
export async function cancelRuns(api: MessagingApi, ids: string[]): Promise<number> {
  let cancelled = 0;
  for (let i = 0; i < ids.length; i += CANCEL_CHUNK) {
    const chunk = ids.slice(i, i + CANCEL_CHUNK);
    const r = await api.del<{ cancelled: number }>("/v2/workflows/runs", { query: { workflowRunIds: chunk, count: chunk.length } });
    cancelled += r.cancelled;
  }
  return cancelled;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

/**
 * Workflow runs (docs/console.md, "Workflow runs"): `GET /v2/workflows/events`, newest first, filtered by state, URL
 * prefix, label and date; the filters live in the fragment's query (`filters`). Cancel one selection or every
 * running run that matches; the confirm says how many runs it touches.
 */
export function WorkflowRuns({ filters }: { filters: RunFilters }) {
  const { api, notify } = useApp();
  const pager = usePager();
  const [checked, setChecked] = useState<Set<string>>(new Set());
  const { run, busy } = useAction();
  const confirm = useConfirm();
  const query = runQuery(filters);
  const list = useAsync(
    () => api.get<RunPage>("/v2/workflows/events", { query: { ...query, count: PAGE, cursor: pager.cursor } }),
    [api, pager.cursor],
  );
  const runs = list.data?.runs ?? [];
  const live = pager.page === 1;
  useInterval(() => list.reload(true), 3000, live);
  const filtered = runFiltersActive(filters);
  const after = () => {
    setChecked(new Set());
    list.reload(true);
  };
  const toggle = (id: string) => {
    const next = new Set(checked);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setChecked(next);
  };
  const selectable = cancellable(runs);
  // A selected run that ended meanwhile (the list is live) drops out: the confirm counts only what can be cancelled.
  const selected = selectable.filter((r) => checked.has(r.workflowRunId)).map((r) => r.workflowRunId);

  const cancelSelected = async () => {
    const ids = selected;
    if (!(await confirm.ask(`Cancel ${plural(ids.length, "run")}? Their pending steps will not run.`, `Cancel ${plural(ids.length, "run")}`))) return;
    await run(() => cancelRuns(api, ids), `Cancelled ${plural(ids.length, "selected run")}`, after);
  };
  const cancelMatching = async () => {
    const running = cancelQuery(filters);
    let found = { ids: [] as string[], more: false };
    try {
      if (running) found = await runningIds(api, running);
    } catch (e) {
      notify((e as Error).message, "error");
      return;
    }
    const { ids, more } = found;
    if (ids.length === 0) {
      notify(filtered ? "No running run matches the filters" : "No run is running", "ok");
      return;
    }
    const what = filtered ? "running runs matching the filters" : "running runs";
    const count = `${more ? "the first " : ""}${ids.length.toLocaleString()}`;
    if (!(await confirm.ask(`Cancel ${count} ${what}? Their pending steps will not run.`, `Cancel ${plural(ids.length, "run")}`))) return;
    await run(() => cancelRuns(api, ids), `Cancelled ${plural(ids.length, "run")}`, after);
  };

  return (
    <>
      {confirm.dialog}
      <PageHead title="Workflow runs" sub="Runs of your workflows, newest first, with their steps.">
        {live && <span class="live">Live</span>}
        <a class="btn" href={href("workflow-dlq")}>
          Workflow DLQ
        </a>
        {selected.length > 0 ? (
          <>
            <span class="muted">{selected.length} selected</span>
            <WriteButton variant="danger" onClick={() => void cancelSelected()} disabled={busy}>
              Cancel selected
            </WriteButton>
          </>
        ) : (
          runs.length > 0 && (
            <WriteButton variant="danger" onClick={() => void cancelMatching()} disabled={busy}>
              {filtered ? "Cancel matching" : "Cancel all running"}
            </WriteButton>
          )
        )}
      </PageHead>
      <RunFilterBar
        value={filters}
        withState
        onApply={(f) => navigate("workflows", undefined, { state: f.state, url: f.url, label: f.label, from: f.from, to: f.to })}
      />
      <section class="panel flush">
        <ListStatus
          state={list}
          count={runs.length}
          empty={
            <Empty title={filtered ? "No run matches the filters" : "No workflow runs yet"}>
              {filtered ? (
                <>Clear the filters to see every run.</>
              ) : (
                <>
                  Serve a workflow with the official <code>@upstash/workflow</code> SDK and trigger it
                  (docs/workflows.md); its runs show up here within seconds.
                </>
              )}
            </Empty>
          }
        />
        {runs.length > 0 && (
          <div class="table-wrap">
            <table class="table" data-testid="runs-table">
              <thead>
                <tr>
                  <th>
                    <input
                      type="checkbox"
                      aria-label="Select the running runs on this page"
                      disabled={selectable.length === 0}
                      checked={selectable.length > 0 && selectable.every((r) => checked.has(r.workflowRunId))}
                      onChange={(e) =>
                        setChecked(e.currentTarget.checked ? new Set(selectable.map((r) => r.workflowRunId)) : new Set())
                      }
                    />
                  </th>
                  <th>Run</th>
                  <th>State</th>
                  <th>Workflow URL</th>
                  <th>Label</th>
                  <th class="num">Steps</th>
                  <th>Started</th>
                  <th class="num">Duration</th>
                </tr>
              </thead>
              <tbody>
                {runs.map((r) => (
                  <tr
                    key={r.workflowRunId}
                    data-run-id={r.workflowRunId}
                    class={checked.has(r.workflowRunId) ? "clickable selected" : "clickable"}
                    onClick={(e) => {
                      if ((e.target as HTMLElement).closest("a, input")) return;
                      navigate("workflows", r.workflowRunId);
                    }}
                  >
                    <td>
                      {r.workflowState === "RUN_STARTED" && (
                        <input
                          type="checkbox"
                          aria-label={`Select ${r.workflowRunId}`}
                          checked={checked.has(r.workflowRunId)}
                          onChange={() => toggle(r.workflowRunId)}
                        />
                      )}
                    </td>
                    <td>
                      <a class="id-link" href={href("workflows", r.workflowRunId)}>
                        {r.workflowRunId}
                      </a>
                    </td>
                    <td>
                      <Badge kind={runStateClass(r.workflowState)}>{r.workflowState}</Badge>
                    </td>
                    <td class="cell-url" title={r.workflowUrl}>
                      {r.workflowUrl}
                    </td>
                    <td>{r.label ? <span class="tag">{r.label}</span> : <span class="muted">–</span>}</td>
                    <td class="num">{stepCount(r)}</td>
                    <td>
                      <Time ms={r.workflowRunCreatedAt} />
                    </td>
                    <td class={r.workflowState === "RUN_STARTED" ? "num muted" : "num"} title={r.workflowState === "RUN_STARTED" ? "so far" : undefined}>
                      {duration(runDuration(r, Date.now()))}
                    </td>
                  </tr>
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
