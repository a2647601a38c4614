import { Field } from "./ui";

/** The filter bars' inputs write into their draft through one setter a key (views/filters.tsx, views/run-filters.tsx). */
type Setter = (key: "state" | "from" | "to") => (e: Event) => void;

/** The "State" select of a filter bar: any state, or one of `states`. */
export function StateField({ value, states, set }: { value: string; states: readonly string[]; set: Setter }) {
  return (
    <Field label="State">
      <select value={value} onChange={set("state")} name="state">
        <option value="">Any state</option>
        {states.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
    </Field>
  );
}

/** The "From" and "To" inputs of a filter bar: `datetime-local` values in the browser's zone. */
export function DateRangeFields({ from, to, set }: { from: string; to: string; set: Setter }) {
  return (
    <>
      <Field label="From">
        <input type="datetime-local" value={from} onInput={set("from")} name="from" />
      </Field>
      <Field label="To">
        <input type="datetime-local" value={to} onInput={set("to")} name="to" />
      </Field>
    </>
  );
}
