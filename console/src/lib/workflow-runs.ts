import type { WorkflowRun, WorkflowStep, WorkflowStepGroup } from "./types.js";

/** The run states of `GET /v2/workflows/events` (docs/workflows.md). */
export const RUN_STATES = ["RUN_STARTED", "RUN_SUCCESS", "RUN_FAILED", "RUN_CANCELED"] as const;

/** The Workflow runs view's filters, as kept in the fragment's query (`#/workflows?state=RUN_FAILED&label=x`). */
export interface RunFilters {
  state: string;
  url: string;
  label: string;
  /** `datetime-local` values in the browser's zone. */
  from: string;
  to: string;
}

export const noRunFilters: RunFilters = { state: "", url: "", label: "", from: "", to: "" };

export function runFiltersFrom(query: URLSearchParams): RunFilters {
  const get = (k: keyof RunFilters) => query.get(k) ?? "";
  return { state: get("state"), url: get("url"), label: get("label"), from: get("from"), to: get("to") };
}

export function runFiltersActive(f: RunFilters): boolean {
  return Object.values(f).some((v) => v !== "");
}

/** `datetime-local` text (browser zone) to unix ms; undefined when empty or not a date. */
export function localMs(value: string): number | undefined {
  if (!value) return undefined;
  const ms = new Date(value).getTime();
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * The API's query for the filters (contract E6/E11 names): the URL filter is a prefix, as the SDK's `workflowUrl`
 * filter is without `workflowUrlExactMatch`.
 */
export function runQuery(f: RunFilters): Record<string, string | number | undefined> {
  return {
    state: f.state,
    workflowUrl: f.url.trim(),
    label: f.label.trim(),
    fromDate: localMs(f.from),
    toDate: localMs(f.to),
  };
}

/** A run's input: the payload it was triggered with (the first group's `Initial` step). */
export function runInput(run: WorkflowRun): string | undefined {
  const first = run.steps[0]?.steps[0];
  return first?.stepType === "Initial" ? first.out : undefined;
}

/** The groups after the initial payload: what the run did. */
export function runSteps(run: WorkflowRun): WorkflowStepGroup[] {
  const first = run.steps[0]?.steps[0];
  const groups = first?.stepType === "Initial" ? run.steps.slice(1) : run.steps;
  // A failed run's `next` group of failed steps only (docs/workflows.md "Run logs") is left out: the run page shows
  // that step from its DLQ entry, named, with its error and the way to resume it.
  return run.workflowState === "RUN_FAILED"
    ? groups.filter((g) => !(g.type === "next" && g.steps.length > 0 && g.steps.every((s) => s.state === "STEP_FAILED")))
    : groups;
}

export function stepCount(run: WorkflowRun): number {
  return runSteps(run).reduce((n, g) => n + (g.type === "next" ? 0 : g.steps.length), 0);
}

/** How long a run took (or has been running, with `now`), in ms. */
export function runDuration(run: WorkflowRun, now: number): number {
  return (run.workflowRunCompletedAt ?? now) - run.workflowRunCreatedAt;
}

/** `sleepFor` as the SDK writes it: seconds, or a duration text such as `10s`, `5m`, `2h`, `1d`. */
export function sleepMs(value: number | string | undefined): number | undefined {
  if (typeof value === "number") return value * 1000;
  const m = /^(\d+)\s*(s|m|h|d)$/.exec(value ?? "");
  if (!m) return undefined;
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "s" | "m" | "h" | "d"];
}

/** When a sleep step's sleep ends: the SDK publishes its result first, and the next call comes after the delay. */
function sleepEnd(step: WorkflowStep): number | undefined {
  if (step.createdAt === undefined) return undefined;
  if (step.stepType === "SleepUntil" && step.sleepUntil !== undefined) return Math.max(step.createdAt, step.sleepUntil * 1000);
  if (step.stepType === "SleepFor") {
    const ms = sleepMs(step.sleepFor);
    return ms === undefined ? undefined : step.createdAt + ms;
  }
  return undefined;
}

/**
 * Each group's time: from the end of the group before it (the run's start for the first) to its last step's
 * result. A parallel group's branches ran side by side, so the group's time is the slowest branch's. A sleep ends
 * when its delay is over, not when its result was published (contract §6.1), so the sleep holds its own time and
 * the step after it starts then.
 */
export function groupTimings(run: WorkflowRun): { start: number; end: number | undefined }[] {
  let previous = run.workflowRunCreatedAt;
  return runSteps(run).map((g) => {
    const times = g.steps
      .map((s) => sleepEnd(s) ?? s.createdAt)
      .filter((t): t is number => typeof t === "number");
    const end = times.length > 0 ? Math.max(...times) : undefined;
    const timing = { start: previous, end };
    if (end !== undefined) previous = end;
    return timing;
  });
}

export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} min`;
}

/** A value the SDK passes through as the caller's own JSON (a call's body): text as is, anything else as JSON. */
export function jsonText(value: unknown): string | undefined {
  return value === undefined || typeof value === "string" ? value : JSON.stringify(value);
}

/** A `context.call` result step's `out`: the third party's answer `{status, body, header}`. */
export function callResult(step: WorkflowStep): { status?: number; body?: string; header?: Record<string, string[]> } | undefined {
  if (step.callResponseStatus !== undefined) {
    const body = jsonText(step.callResponseBody);
    return { status: step.callResponseStatus, ...(body !== undefined ? { body } : {}) };
  }
  if (!step.out) return undefined;
  try {
    const parsed = JSON.parse(step.out) as unknown;
    if (typeof parsed === "object" && parsed !== null && "status" in parsed) {
      return parsed as { status?: number; body?: string; header?: Record<string, string[]> };
    }
  } catch {
    // Not the SDK's call result: shown as the plain output.
  }
  return undefined;
}

/** Wait steps carry the event's data base64-encoded (the server builds them, contract §6.4); other steps as is. */
export function stepOutput(step: WorkflowStep): string | undefined {
  if (step.out === undefined) return undefined;
  if (step.stepType !== "Wait" && step.stepType !== "WaitForWebhook") return step.out;
  try {
    const binary = atob(step.out);
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return step.out;
  }
}

const RUN_STATE_CLASS: Record<string, string> = {
  RUN_STARTED: "info",
  RUN_SUCCESS: "ok",
  RUN_FAILED: "bad",
  RUN_CANCELED: "muted",
  STEP_SUCCESS: "ok",
  STEP_PROGRESS: "info",
  STEP_RETRY: "warn",
  STEP_FAILED: "bad",
  STEP_CANCELED: "muted",
};

export function runStateClass(state: string | undefined): string {
  return RUN_STATE_CLASS[state ?? ""] ?? "muted";
}

/**
 * The query that lists the runs "Cancel matching" would cancel: the filters with the state set to RUN_STARTED, or
 * undefined when the state filter shows only ended runs (nothing shown can be cancelled then).
 */
export function cancelQuery(f: RunFilters): Record<string, string | number | undefined> | undefined {
  if (f.state !== "" && f.state !== "RUN_STARTED") return undefined;
  return { ...runQuery(f), state: "RUN_STARTED" };
}

/** The runs to confirm a bulk cancel with: only started runs can be cancelled (contract §6.8). */
export function cancellable(runs: WorkflowRun[]): WorkflowRun[] {
  return runs.filter((r) => r.workflowState === "RUN_STARTED");
}

/**
 * The name of the step that failed: the workflow SDK answers a failed step with a `<prefix>-Error-Step-Name` header.
 * The SDK, not Ferry, picks the prefix, so any prefix is read.
 */
export function failedStepName(headers: Record<string, string[]> | undefined): string | undefined {
  for (const [k, v] of Object.entries(headers ?? {})) if (k.toLowerCase().endsWith("-error-step-name")) return v[0];
  return undefined;
}

/** The failed step's error from the SDK's answer (`{"error", "message", "stack"}`), else the body as is. */
export function failureMessage(body: string | undefined): string | undefined {
  if (!body) return undefined;
  try {
    const parsed = JSON.parse(body) as { message?: unknown; error?: unknown };
    if (typeof parsed.message === "string") return parsed.message;
    if (typeof parsed.error === "string") return parsed.error;
  } catch {
    // Not JSON: the body is the message.
  }
  return body;
}

