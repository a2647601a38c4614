import { useState } from "preact/hooks";
import { noRunFilters, RUN_STATES, type RunFilters, runFiltersActive } from "../lib/workflow-runs";
import { Button, Field } from "../components/ui";

/**
 * The filters of the Workflow runs and Workflow DLQ views. Applying them changes the fragment's query (the caller's
 * `onApply` navigates), so a filtered list survives a reload and can be shared.
 */
export function RunFilterBar({
  value,
  onApply,
  withState,
  runId,
}: {
  value: RunFilters & { runId?: string };
  onApply: (f: RunFilters & { runId?: string }) => void;
  withState: boolean;
  /** The DLQ filters by run id too. */
  runId?: boolean;
}) {
  const [draft, setDraft] = useState(value);
  const set = (key: keyof RunFilters | "runId") => (e: Event) =>
    setDraft({ ...draft, [key]: (e.currentTarget as HTMLInputElement).value });
  const active = runFiltersActive(value) || Boolean(value.runId);
  return (
    <form
      class="filters"
      onSubmit={(e) => {
        e.preventDefault();
        onApply(draft);
      }}
    >
      {withState && (
        <Field label="State">
          <select value={draft.state} onChange={set("state")} name="state">
            <option value="">Any state</option>
            {RUN_STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </Field>
      )}
      <Field label="Workflow URL" wide>
        <input value={draft.url} onInput={set("url")} name="url" placeholder="https://… (prefix)" />
      </Field>
      {runId ? (
        <Field label="Run id">
          <input value={draft.runId ?? ""} onInput={set("runId")} name="runId" placeholder="wfr_…" />
        </Field>
      ) : (
        <Field label="Label">
          <input value={draft.label} onInput={set("label")} name="label" />
        </Field>
      )}
      <Field label="From">
        <input type="datetime-local" value={draft.from} onInput={set("from")} name="from" />
      </Field>
      <Field label="To">
        <input type="datetime-local" value={draft.to} onInput={set("to")} name="to" />
      </Field>
      <Button type="submit" variant="primary">
        Apply filters
      </Button>
      {active && (
        <Button
          variant="ghost"
          onClick={() => {
            setDraft({ ...noRunFilters, runId: "" });
            onApply({ ...noRunFilters, runId: "" });
          }}
        >
          Clear
        </Button>
      )}
    </form>
  );
}
