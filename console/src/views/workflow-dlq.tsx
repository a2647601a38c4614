import { useState } from "preact/hooks";
import { useApp } from "../lib/app-context";

import { href, navigate } from "../lib/router";
import type { WorkflowDlqEntry } from "../lib/types";
import { useAsync } from "../lib/use-async";
import { failedStepName, failureMessage, localMs, type RunFilters, runFiltersActive } from "../lib/workflow-runs";
import {
  Badge,
  Empty,
  ListStatus,
  PageHead,
  Pager,
  Time,
  useAction,
  useConfirm,
  usePager,
  WriteButton,
} from "../components/ui";
import { RunFilterBar } from "./run-filters";

const PAGE = 50;

type Mode = "resume" | "restart";
const MODE_TEXT: Record<Mode, { verb: string; past: string; what: string }> = {
  resume: { verb: "Resume", past: "Resumed", what: "keeping their successful steps and retrying the failed one" },
  restart: { verb: "Restart", past: "Restarted", what: "from the first step, with the same payload" },
};

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

/**
 * The workflow DLQ (docs/console.md, "Workflow DLQ"): failed runs (`GET /v2/dlq?source=workflow`), filtered by URL,
 * run id and date (kept in the fragment's query). Resume keeps the successful steps, Restart starts over; both start
 * a new run and take the entry out (`POST /v2/workflows/dlq/resume|restart`, contract E13).
 */
export function WorkflowDlq({ filters }: { filters: RunFilters & { runId: string } }) {
  const { api, refreshAccount } = useApp();
  const pager = usePager();
  const [checked, setChecked] = useState<Set<string>>(new Set());
  const { run, busy } = useAction();
  const confirm = useConfirm();
  const list = useAsync(
    () =>
      api.get<{ messages: WorkflowDlqEntry[]; cursor?: string }>("/v2/dlq", {
        query: {
          source: "workflow",
          workflowUrl: filters.url.trim(),
          workflowRunId: filters.runId.trim(),
          fromDate: localMs(filters.from),
          toDate: localMs(filters.to),
          order: "latestFirst",
          count: PAGE,
          cursor: pager.cursor,
        },
      }),
    [api, pager.cursor],
  );
  const entries = list.data?.messages ?? [];
  const filtered = runFiltersActive(filters) || filters.runId !== "";
  const after = () => {
    setChecked(new Set());
    list.reload(true);
    refreshAccount();
  };
  const toggle = (id: string) => {
    const next = new Set(checked);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setChecked(next);
  };

  const rerun = async (mode: Mode, ids: string[], ask: boolean) => {
    const t = MODE_TEXT[mode];
    if (ask && !(await confirm.ask(`${t.verb} ${plural(ids.length, "failed run")}, ${t.what}? Each continues as a new run.`, `${t.verb} ${plural(ids.length, "run")}`))) {
      return;
    }
    await run(
      async () => {
        const r = await api.post<{ workflowRuns: { workflowRunId: string }[] }>(`/v2/workflows/dlq/${mode}`, {
          query: { dlqIds: ids, count: ids.length },
        });
        return r.workflowRuns;
      },
      ids.length === 1 ? `${t.past}: a new run is on its way` : `${t.past} ${plural(ids.length, "run")}`,
      after,
    );
  };
  const remove = async (ids: string[]) => {
    if (!(await confirm.ask(`Delete ${plural(ids.length, "entry", "entries")} from the workflow DLQ? This cannot be undone.`, "Delete"))) return;
    await run(() => api.del("/v2/workflows/dlq", { query: { dlqIds: ids, count: ids.length } }), `Deleted ${plural(ids.length, "entry", "entries")}`, after);
  };
  const ids = [...checked];

  return (
    <>
      {confirm.dialog}
      <p>
        <a href={href("workflows")}>← Workflow runs</a>
      </p>
      <PageHead title="Workflow DLQ" sub="Runs whose step failed after its last retry. Resume or restart them once the cause is fixed.">
        {checked.size > 0 && (
          <>
            <span class="muted">{checked.size} selected</span>
            <WriteButton variant="primary" onClick={() => void rerun("resume", ids, true)} disabled={busy}>
              Resume selected
            </WriteButton>
            <WriteButton onClick={() => void rerun("restart", ids, true)} disabled={busy}>
              Restart selected
            </WriteButton>
            <WriteButton variant="danger" onClick={() => void remove(ids)} disabled={busy}>
              Delete selected
            </WriteButton>
          </>
        )}
      </PageHead>
      <RunFilterBar
        value={filters}
        withState={false}
        runId
        onApply={(f) => navigate("workflow-dlq", undefined, { url: f.url, runId: f.runId ?? "", from: f.from, to: f.to })}
      />
      <section class="panel flush">
        <ListStatus
          state={list}
          count={entries.length}
          empty={
            <Empty title={filtered ? "No failed run matches the filters" : "The workflow DLQ is empty"}>
              A run lands here when one of its steps fails after its last retry. Nothing to do while this stays empty.
            </Empty>
          }
        />
        {entries.length > 0 && (
          <div class="table-wrap">
            <table class="table" data-testid="workflow-dlq-table">
              <thead>
                <tr>
                  <th>
                    <input
                      type="checkbox"
                      aria-label="Select all on this page"
                      checked={entries.every((e) => checked.has(e.dlqId))}
                      onChange={(e) => setChecked(e.currentTarget.checked ? new Set(entries.map((x) => x.dlqId)) : new Set())}
                    />
                  </th>
                  <th>Run</th>
                  <th>Workflow URL</th>
                  <th>Failed step</th>
                  <th>Last response</th>
                  <th>Run started</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {entries.map((e) => {
                  const step = failedStepName(e.responseHeader);
                  const message = failureMessage(e.responseBody);
                  return (
                    <tr key={e.dlqId} data-dlq-id={e.dlqId} class={checked.has(e.dlqId) ? "selected" : ""}>
                      <td>
                        <input
                          type="checkbox"
                          aria-label={`Select ${e.dlqId}`}
                          checked={checked.has(e.dlqId)}
                          onChange={() => toggle(e.dlqId)}
                        />
                      </td>
                      <td>
                        {e.workflowRunId ? (
                          <a class="id-link" href={href("workflows", e.workflowRunId)}>
                            {e.workflowRunId}
                          </a>
                        ) : (
                          <span class="muted">–</span>
                        )}
                      </td>
                      <td class="cell-url" title={e.workflowUrl ?? e.url}>
                        {e.workflowUrl ?? e.url}
                      </td>
                      <td>
                        {step ?? <span class="muted">–</span>}
                        {message && (
                          <div class="muted small cell-url" title={message}>
                            {message}
                          </div>
                        )}
                      </td>
                      <td>
                        <Badge kind={e.responseStatus >= 500 ? "bad" : e.responseStatus >= 400 ? "warn" : "muted"}>
                          {e.responseStatus === 0 ? "no answer" : `HTTP ${e.responseStatus}`}
                        </Badge>
                      </td>
                      <td>
                        <Time ms={e.workflowCreatedAt ?? e.createdAt} />
                      </td>
                      <td>
                        <div class="row-actions">
                          <WriteButton small variant="primary" onClick={() => void rerun("resume", [e.dlqId], false)} disabled={busy}>
                            Resume
                          </WriteButton>
                          <WriteButton small onClick={() => void rerun("restart", [e.dlqId], false)} disabled={busy}>
                            Restart
                          </WriteButton>
                          <WriteButton small variant="danger" onClick={() => void remove([e.dlqId])} disabled={busy}>
                            Delete
                          </WriteButton>
                        </div>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
        <Pager page={pager.page} nextCursor={list.data?.cursor} onNext={pager.next} onPrev={pager.prev} />
      </section>
    </>
  );
}

