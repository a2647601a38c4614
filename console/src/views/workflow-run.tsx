import type { ComponentChildren } from "preact";
import { useApp } from "../lib/app-context";
import { enc } from "../lib/api";
import { href } from "../lib/router";
import type { WorkflowDlqEntry, WorkflowRun, WorkflowStep } from "../lib/types";
import { useAsync, useInterval } from "../lib/use-async";
import {
  callResult,
  jsonText,
  failedStepName,
  failureMessage,
  duration,
  groupTimings,
  runDuration,
  runInput,
  runStateClass,
  runSteps,
  stepCount,
  stepOutput,
} from "../lib/workflow-runs";
import { BodyView } from "../components/body-view";
import {
  Badge,
  ErrorBox,
  HeadersTable,
  KeyValues,
  Loading,
  PageHead,
  Time,
  useAction,
  useConfirm,
  WriteButton,
} from "../components/ui";

/**
 * One workflow run (docs/console.md, "A workflow run"): its summary, input and result, and its steps in order:
 * sequential steps one after the other, a parallel group's branches side by side, each with its output and timing,
 * and the details of sleeps, `context.call` and waits. A failed run shows the failed step from its workflow DLQ
 * entry. Live while the run is running; Cancel while it is.
 */
export function WorkflowRunDetail({ id }: { id: string }) {
  const { api } = useApp();
  const { run, busy } = useAction();
  const confirm = useConfirm();
  const data = useAsync(async () => {
    const { runs } = await api.get<{ runs: WorkflowRun[] }>("/v2/workflows/events", { query: { workflowRunId: id } });
    const found = runs[0];
    let failure: WorkflowDlqEntry | undefined;
    if (found?.workflowState === "RUN_FAILED" && found.dlqId) {
      // A list, not GET /v2/dlq/{id}: the entry is gone once the run was resumed, restarted or deleted.
      const dlq = await api.get<{ messages: WorkflowDlqEntry[] }>("/v2/dlq", {
        query: { source: "workflow", workflowRunId: id, count: 1 },
      });
      failure = dlq.messages[0];
    }
    return { run: found, failure };
  }, [api, id]);
  const running = data.data?.run?.workflowState === "RUN_STARTED";
  useInterval(() => data.reload(true), 2000, running);

  if (data.error) return <ErrorBox error={data.error} retry={() => data.reload()} />;
  if (!data.data) return <Loading />;
  const { run: r, failure } = data.data;
  const back = (
    <p>
      <a href={href("workflows")}>← Workflow runs</a>
    </p>
  );
  if (!r) {
    return (
      <>
        {back}
        <PageHead title="Workflow run" sub={id} />
        <section class="panel">
          <p>
            No run <code>{id}</code>. Ended runs are kept for the plan's retention period, like the logs; an older run is
            gone.
          </p>
        </section>
      </>
    );
  }

  const cancel = async () => {
    if (!(await confirm.ask(`Cancel 1 run (${id})? Its pending steps will not run.`, "Cancel run"))) return;
    await run(() => api.del(`/v2/workflows/runs/${enc(id)}`, { query: { cancel: "true" } }), "Run cancelled", () =>
      data.reload(true),
    );
  };
  const now = Date.now();
  const groups = runSteps(r);
  const timings = groupTimings(r);
  const failedStep = failedStepName(failure?.responseHeader);

  return (
    <>
      {confirm.dialog}
      {back}
      <PageHead title="Workflow run" sub={id}>
        <Badge kind={runStateClass(r.workflowState)}>{r.workflowState}</Badge>
        {running && <span class="live">Live</span>}
        {running && (
          <WriteButton variant="danger" onClick={() => void cancel()} disabled={busy}>
            Cancel run
          </WriteButton>
        )}
      </PageHead>
      <div class="split">
        <div>
          <section class="panel">
            <h2>Steps</h2>
            <ol class="steps" data-testid="steps">
              <li class="step-group" data-group="input">
                <StepCard step={{ stepName: "Input", stepType: "Initial", state: "STEP_SUCCESS", createdAt: r.workflowRunCreatedAt }}>
                  <Output text={runInput(r)} label="Payload" />
                </StepCard>
              </li>
              {groups.map((g, i) => {
                const t = timings[i]!;
                const took = t.end === undefined ? undefined : t.end - t.start;
                return (
                  <li key={i} class={`step-group ${g.type}`} data-group={g.type}>
                    {g.type !== "sequential" && (
                      <div class="step-group-head">
                        <span class="badge info">{g.type === "parallel" ? `Parallel · ${g.steps.length} steps` : "Next"}</span>
                        {took !== undefined && <span class="muted small">{duration(took)}</span>}
                      </div>
                    )}
                    <div class={g.type === "parallel" ? "step-parallel" : ""}>
                      {g.steps.map((s, j) => (
                        <StepCard key={s.messageId ?? j} step={s} took={g.type === "sequential" ? took : stepTook(s, t.start)}>
                          <StepDetails step={s} />
                        </StepCard>
                      ))}
                    </div>
                  </li>
                );
              })}
              {failure && !groups.some((g) => g.type === "next") && (
                <li class="step-group next" data-group="failed">
                  <StepCard
                    step={{
                      stepName: failedStep ?? "failed step",
                      state: "STEP_FAILED",
                      createdAt: r.workflowRunCompletedAt,
                    }}
                  >
                    <div class="error-box run-failure" role="note" data-testid="run-failure">
                      <strong>Failed{failedStep ? ` at step “${failedStep}”` : ""}:</strong>
                      <span class="error-text">
                        {failure.responseStatus ? `HTTP ${failure.responseStatus}` : "no HTTP answer"}
                        {failureMessage(failure.responseBody) ? ` · ${failureMessage(failure.responseBody)}` : ""}
                      </span>
                    </div>
                    <p class="small">
                      After its last retry, the run went to the{" "}
                      <a href={href("workflow-dlq", undefined, { runId: id })}>workflow DLQ</a>: resume or restart it there.
                    </p>
                  </StepCard>
                </li>
              )}
              {running && !groups.some((g) => g.type === "next") && (
                <li class="step-group pending" data-group="pending">
                  <p class="muted">
                    Running: the next step shows up here once its result is in (a sleep, a call or a wait shows once it
                    ends).
                  </p>
                </li>
              )}
            </ol>
          </section>
        </div>
        <div>
          <section class="panel">
            <h2>Run</h2>
            <KeyValues
              rows={[
                ["Workflow URL", <span class="break">{r.workflowUrl}</span>],
                ["State", <Badge kind={runStateClass(r.workflowState)}>{r.workflowState}</Badge>],
                ["Label", r.label ?? "–"],
                ["Started", <Time ms={r.workflowRunCreatedAt} />],
                ["Ended", <Time ms={r.workflowRunCompletedAt} />],
                ["Duration", `${duration(runDuration(r, now))}${running ? " so far" : ""}`],
                ["Steps", String(stepCount(r))],
                [
                  "Invoked by",
                  r.invoker ? (
                    <a class="id-link" href={href("workflows", r.invoker.workflowRunId)}>
                      {r.invoker.workflowRunId}
                    </a>
                  ) : (
                    "–"
                  ),
                ],
              ]}
            />
            <h3>Result</h3>
            {r.workflowRunResponse !== undefined ? (
              <div data-testid="run-result">
                <BodyView text={r.workflowRunResponse} name={`${id}-result`} />
              </div>
            ) : (
              <p class="muted">{running ? "Not finished yet." : "No result."}</p>
            )}
          </section>
        </div>
      </div>
    </>
  );
}

/** A parallel branch's own time: from the group's start to its result. */
function stepTook(step: WorkflowStep, start: number): number | undefined {
  return step.createdAt === undefined ? undefined : step.createdAt - start;
}

function StepCard({ step, took, children }: { step: WorkflowStep; took?: number | undefined; children: ComponentChildren }) {
  return (
    <div class="step" data-step-type={step.stepType} data-step-name={step.stepName}>
      <div class="step-head">
        {step.stepId !== undefined && <span class="muted mono small">#{step.stepId}</span>}
        <strong>{step.stepName ?? "step"}</strong>
        {step.stepType && <span class="tag">{step.stepType}</span>}
        {step.state && <Badge kind={runStateClass(step.state)}>{step.state}</Badge>}
        <span class="step-time">
          {took !== undefined && <span class="muted small">{duration(took)}</span>}
          <Time ms={step.createdAt} />
        </span>
      </div>
      <div class="step-body">{children}</div>
    </div>
  );
}

function Output({ text, label = "Output" }: { text: string | undefined; label?: string }) {
  if (text === undefined) return <p class="muted small">No {label.toLowerCase()}.</p>;
  return (
    <details open>
      <summary>{label}</summary>
      <BodyView text={text} name="output" />
    </details>
  );
}

function StepDetails({ step }: { step: WorkflowStep }) {
  const errors = (step.errors ?? []).map((e, i) => (
    <div key={i} class="error-text small">
      {e.status ? `HTTP ${e.status} ` : ""}
      {e.error ?? ""} {e.time && <Time ms={e.time} />}
    </div>
  ));
  switch (step.stepType) {
    case "SleepFor":
      return <p class="muted small">Slept for {typeof step.sleepFor === "number" ? duration(step.sleepFor * 1000) : step.sleepFor}.</p>;
    case "SleepUntil":
      return (
        <p class="muted small">
          Slept until <Time ms={(step.sleepUntil ?? 0) * 1000} />.
        </p>
      );
    case "Call": {
      const result = callResult(step);
      return (
        <div data-testid="call-step">
          {step.callUrl && (
            <p class="small">
              <span class="mono">{step.callMethod ?? "POST"}</span> <span class="break">{step.callUrl}</span>
            </p>
          )}
          {step.callBody !== undefined && (
            <details>
              <summary>Request body</summary>
              <BodyView text={jsonText(step.callBody)} name="call-request" />
            </details>
          )}
          {result ? (
            <>
              <p class="small">
                Answered{" "}
                <Badge kind={(result.status ?? 0) >= 400 ? "bad" : "ok"}>HTTP {result.status ?? "?"}</Badge>
              </p>
              <details open>
                <summary>Response body</summary>
                <BodyView text={result.body} name="call-response" />
              </details>
              {result.header && (
                <details>
                  <summary>Response headers</summary>
                  <HeadersTable headers={result.header} />
                </details>
              )}
            </>
          ) : (
            <Output text={step.out} />
          )}
          {errors}
        </div>
      );
    }
    case "Wait":
    case "WaitForWebhook":
      return (
        <div data-testid="wait-step">
          <p class="small">
            {step.waitEventId && (
              <>
                Event <code>{step.waitEventId}</code>
              </>
            )}
            {step.timeout && <span class="muted"> · timeout {step.timeout}</span>}{" "}
            {step.waitTimeout === true ? <Badge kind="warn">timed out</Badge> : step.waitTimeout === false ? <Badge kind="ok">notified</Badge> : null}
          </p>
          {step.waitTimeout !== true && <Output text={stepOutput(step)} label="Event data" />}
          {errors}
        </div>
      );
    case "Invoke":
      return (
        <div>
          {step.invokedWorkflowRunId && (
            <p class="small">
              Invoked{" "}
              <a class="id-link" href={href("workflows", step.invokedWorkflowRunId)}>
                {step.invokedWorkflowRunId}
              </a>
            </p>
          )}
          <Output text={step.out} />
          {errors}
        </div>
      );
    default:
      return (
        <>
          <Output text={stepOutput(step)} />
          {errors}
        </>
      );
  }
}
