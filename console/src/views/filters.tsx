import { useState } from "preact/hooks";
import type { QueryValue } from "../lib/api";
import { DateRangeFields, StateField } from "../components/filter-fields";
import { Button, Field } from "../components/ui";

/** Filters shared by the messages and DLQ views (reference §1.4 names): values as typed, dates as unix ms. */
export interface Filters {
  state: string;
  url: string;
  label: string;
  queueName: string;
  scheduleId: string;
  topicName: string;
  flowControlKey: string;
  /** `datetime-local` input values in the browser's zone. */
  from: string;
  to: string;
}

export const noFilters: Filters = {
  state: "",
  url: "",
  label: "",
  queueName: "",
  scheduleId: "",
  topicName: "",
  flowControlKey: "",
  from: "",
  to: "",
};

const STATES = ["CREATED", "ACTIVE", "IN_PROGRESS", "RETRY", "ERROR", "DELIVERED", "FAILED", "CANCELED"];

/** The API's query keys for the filters that are set. */
export function filterQuery(f: Filters, withState: boolean): Record<string, QueryValue> {
  const local = (v: string) => (v ? new Date(v).getTime() : undefined);
  return {
    state: withState ? f.state : undefined,
    url: f.url.trim(),
    label: f.label.trim(),
    queueName: f.queueName.trim(),
    scheduleId: f.scheduleId.trim(),
    topicName: f.topicName.trim(),
    flowControlKey: f.flowControlKey.trim(),
    fromDate: local(f.from),
    toDate: local(f.to),
  };
}

export function FilterBar({
  value,
  onApply,
  withState,
}: {
  value: Filters;
  onApply: (f: Filters) => void;
  withState: boolean;
}) {
  const [draft, setDraft] = useState(value);
  // The common filters show at once; the rest behind "More filters" (open when one of them is set).
  const [more, setMore] = useState(
    value.scheduleId !== "" || value.topicName !== "" || value.flowControlKey !== "" || value.from !== "" || value.to !== "",
  );
  const set = (key: keyof Filters) => (e: Event) =>
    setDraft({ ...draft, [key]: (e.currentTarget as HTMLInputElement).value });
  const active = Object.values(value).some((v) => v !== "");
  return (
    <form
      class="filters"
      onSubmit={(e) => {
        e.preventDefault();
        onApply(draft);
      }}
    >
      {withState && <StateField value={draft.state} states={STATES} set={set} />}
      <Field label="URL" wide>
        <input value={draft.url} onInput={set("url")} name="url" placeholder="https://…" />
      </Field>
      <Field label="Label">
        <input value={draft.label} onInput={set("label")} name="label" />
      </Field>
      <Field label="Queue">
        <input value={draft.queueName} onInput={set("queueName")} name="queueName" />
      </Field>
      {more && (
        <>
          <Field label="Schedule">
            <input value={draft.scheduleId} onInput={set("scheduleId")} name="scheduleId" />
          </Field>
          <Field label="URL group">
            <input value={draft.topicName} onInput={set("topicName")} name="topicName" />
          </Field>
          <Field label="Flow-control key">
            <input value={draft.flowControlKey} onInput={set("flowControlKey")} name="flowControlKey" />
          </Field>
          <DateRangeFields from={draft.from} to={draft.to} set={set} />
        </>
      )}
      <Button type="submit" variant="primary">
        Apply filters
      </Button>
      <Button variant="ghost" onClick={() => setMore(!more)} aria-expanded={more}>
        {more ? "Fewer filters" : "More filters"}
      </Button>
      {active && (
        <Button
          variant="ghost"
          onClick={() => {
            setDraft(noFilters);
            onApply(noFilters);
          }}
        >
          Clear
        </Button>
      )}
    </form>
  );
}
