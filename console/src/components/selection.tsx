import { useState } from "preact/hooks";

/**
 * The checked rows of a list that acts on a selection (the DLQ, the workflow DLQ, workflow runs): a set of ids, one
 * row toggled at a time, or every id of the page at once from the header's box.
 */
export function useSelection() {
  const [checked, setChecked] = useState<Set<string>>(new Set());
  const toggle = (id: string) => {
    const next = new Set(checked);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setChecked(next);
  };
  return { checked, setChecked, toggle, clear: () => setChecked(new Set()) };
}

/** The header's box: checked when every id of `ids` is; checking it selects them all, unchecking selects none. */
export function SelectAllBox({
  ids,
  selection,
  label = "Select all on this page",
}: {
  ids: string[];
  selection: ReturnType<typeof useSelection>;
  label?: string;
}) {
  const { checked, setChecked } = selection;
  return (
    <input
      type="checkbox"
      aria-label={label}
      disabled={ids.length === 0}
      checked={ids.length > 0 && ids.every((id) => checked.has(id))}
      onChange={(e) => setChecked(e.currentTarget.checked ? new Set(ids) : new Set())}
    />
  );
}

/** One row's box. */
export function SelectBox({ id, selection }: { id: string; selection: ReturnType<typeof useSelection> }) {
  return (
    <input
      type="checkbox"
      aria-label={`Select ${id}`}
      checked={selection.checked.has(id)}
      onChange={() => selection.toggle(id)}
    />
  );
}
