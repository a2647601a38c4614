import { useState } from "preact/hooks";
import { hasFilters, LIST_STATES, type MessageFilters, noMessageFilters } from "../lib/message-list";
import { Button, Field } from "../components/ui";

/**
 * The Messages view's search and filters (lib/message-list.ts). "Apply" writes them into the fragment's query, so
 * the view they produce is a link; the view reads them back from there.
 */
export function MessageFilterBar({ value, onApply }: { value: MessageFilters; onApply: (f: MessageFilters) => void }) {
  const [draft, setDraft] = useState(value);
  const set = (key: keyof MessageFilters) => (e: Event) =>
    setDraft({ ...draft, [key]: (e.currentTarget as HTMLInputElement | HTMLSelectElement).value });
  return (
    <form
      class="filters"
      role="search"
      aria-label="Messages"
      onSubmit={(e) => {
        e.preventDefault();
        onApply(draft);
      }}
    >
      <Field label="Message id" wide>
        <input value={draft.id} onInput={set("id")} name="id" placeholder="msg_…" spellcheck={false} />
      </Field>
      <Field label="State">
        <select value={draft.state} onChange={set("state")} name="state">
          <option value="">Any state</option>
          {LIST_STATES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Label">
        <input value={draft.label} onInput={set("label")} name="label" />
      </Field>
      <Field label="Destination URL" wide>
        <input value={draft.url} onInput={set("url")} name="url" placeholder="https://…" />
      </Field>
      <Field label="URL group">
        <input value={draft.group} onInput={set("group")} name="group" />
      </Field>
      <Field label="Queue">
        <input value={draft.queue} onInput={set("queue")} name="queue" />
      </Field>
      <Field label="Schedule">
        <input value={draft.schedule} onInput={set("schedule")} name="schedule" placeholder="scd_…" />
      </Field>
      <Button type="submit" variant="primary">
        Apply filters
      </Button>
      {hasFilters(value) && (
        <Button
          variant="ghost"
          onClick={() => {
            setDraft(noMessageFilters);
            onApply(noMessageFilters);
          }}
        >
          Clear
        </Button>
      )}
    </form>
  );
}
