import type { ComponentChildren, JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { useApp } from "../lib/app-context";
import { copyText } from "../lib/clipboard";
import { stateTone } from "../lib/timeline";
import type { AsyncState } from "../lib/use-async";
import { localTime, relative, utcTime } from "../lib/format";

/** A time in the browser's zone; the exact UTC instant on hover. */
export function Time({ ms, rel }: { ms: number | undefined; rel?: boolean }) {
  if (!ms) return <span class="muted">–</span>;
  return (
    <time dateTime={new Date(ms).toISOString()} title={utcTime(ms)}>
      {rel ? relative(ms) : localTime(ms)}
    </time>
  );
}

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <div class="loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function ErrorBox({ error, retry }: { error: Error; retry?: () => void }) {
  return (
    <div class="error-box" role="alert">
      <strong>Something went wrong.</strong> <span class="error-text">{error.message}</span>
      {retry && (
        <button type="button" class="btn small" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <div class="empty-title">{title}</div>
      {children && <div class="empty-hint">{children}</div>}
    </div>
  );
}

/**
 * What a list's panel shows instead of its rows: the error (with "Try again"), the first load, or, once loaded with
 * no rows (`count` 0), `empty`. Renders nothing once there are rows: the view draws them.
 */
export function ListStatus({
  state,
  count,
  empty,
}: {
  state: AsyncState<unknown>;
  count: number;
  empty: ComponentChildren;
}) {
  return (
    <>
      {state.error && <ErrorBox error={state.error} retry={() => state.reload()} />}
      {state.loading && !state.data && <Loading />}
      {state.data !== undefined && count === 0 && empty}
    </>
  );
}

export function StateBadge({ state }: { state: string }) {
  return <span class={`badge ${stateTone(state)}`}>{state}</span>;
}

export function Badge({ kind, children }: { kind: string; children: ComponentChildren }) {
  return <span class={`badge ${kind}`}>{children}</span>;
}

type ButtonProps = JSX.HTMLAttributes<HTMLButtonElement> & {
  variant?: "primary" | "danger" | "ghost" | "";
  small?: boolean;
  disabled?: boolean;
  type?: "button" | "submit";
};

export function Button({ variant = "", small, class: className, type = "button", ...rest }: ButtonProps) {
  const cls = ["btn", variant, small ? "small" : "", (className as string) ?? ""].filter(Boolean).join(" ");
  return <button type={type} class={cls} {...rest} />;
}

/** A button that changes something: disabled, with the reason on hover, for the read-only token. */
export function WriteButton(props: ButtonProps) {
  const { readOnly } = useApp();
  if (!readOnly) return <Button {...props} />;
  return <Button {...props} disabled title="Read-only token: this action is not allowed" aria-disabled="true" />;
}

/** Copies `text` to the clipboard; falls back to selecting it where the clipboard is not available. */
export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    await copyText(text);
    setDone(true);
    setTimeout(() => setDone(false), 1500);
  };
  return (
    <Button small variant="ghost" onClick={() => void copy()} aria-label={`${label} to clipboard`}>
      {done ? "Copied" : label}
    </Button>
  );
}

/** A secret shown as dots until revealed, with a copy button. */
export function Secret({ value, label }: { value: string; label: string }) {
  const [shown, setShown] = useState(false);
  return (
    <div class="secret">
      <code class="secret-value" aria-label={label}>
        {shown ? value : "•".repeat(Math.min(32, value.length))}
      </code>
      <Button small variant="ghost" onClick={() => setShown(!shown)}>
        {shown ? "Hide" : "Reveal"}
      </Button>
      <CopyButton text={value} />
    </div>
  );
}

/** Previous/next over the API's cursors: the cursors of the pages seen so far are kept to go back. */
export function usePager() {
  const [stack, setStack] = useState<(string | undefined)[]>([undefined]);
  const cursor = stack[stack.length - 1];
  return {
    cursor,
    page: stack.length,
    next: (c: string) => setStack([...stack, c]),
    prev: () => setStack(stack.length > 1 ? stack.slice(0, -1) : stack),
    reset: () => setStack([undefined]),
  };
}

export function Pager({
  page,
  nextCursor,
  onNext,
  onPrev,
}: {
  page: number;
  nextCursor: string | undefined;
  onNext: (c: string) => void;
  onPrev: () => void;
}) {
  if (page === 1 && !nextCursor) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <Button small onClick={onPrev} disabled={page === 1}>
        ← Newer
      </Button>
      <span class="muted">Page {page}</span>
      <Button small onClick={() => nextCursor && onNext(nextCursor)} disabled={!nextCursor}>
        Older →
      </Button>
    </nav>
  );
}

/** A modal built on <dialog>: focus moves into it and Escape closes it. */
export function Dialog({
  title,
  open,
  onClose,
  children,
  wide,
}: {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} class={wide ? "dialog wide" : "dialog"} onClose={onClose} aria-label={title}>
      <header class="dialog-head">
        <h2>{title}</h2>
        <button type="button" class="icon-btn" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </header>
      {open && <div class="dialog-body">{children}</div>}
    </dialog>
  );
}

/** A confirm step for destructive actions, in a dialog of the console's own (not the browser's confirm()). */
export function useConfirm() {
  const [pending, setPending] = useState<{ text: string; action: string; dismiss: string; resolve: (ok: boolean) => void }>();
  // `dismiss` names the way out when "Cancel" would read as the action itself (cancelling messages).
  const ask = (text: string, action = "Confirm", dismiss = "Cancel") =>
    new Promise<boolean>((resolve) => setPending({ text, action, dismiss, resolve }));
  const finish = (ok: boolean) => {
    pending?.resolve(ok);
    setPending(undefined);
  };
  const dialog = (
    <Dialog title="Are you sure?" open={pending !== undefined} onClose={() => finish(false)}>
      <p>{pending?.text}</p>
      <div class="actions">
        <Button onClick={() => finish(false)}>{pending?.dismiss ?? "Cancel"}</Button>
        <Button variant="danger" onClick={() => finish(true)} autoFocus>
          {pending?.action}
        </Button>
      </div>
    </Dialog>
  );
  return { ask, dialog };
}

/** Runs an action, reports its outcome as a toast, and calls `after` on success. */
export function useAction() {
  const { notify } = useApp();
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<unknown>, success: string, after?: () => void) => {
    setBusy(true);
    try {
      await action();
      notify(success, "ok");
      after?.();
      return true;
    } catch (error) {
      notify(error instanceof Error ? error.message : String(error), "error");
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, run };
}

export function PageHead({ title, sub, children }: { title: string; sub?: string; children?: ComponentChildren }) {
  return (
    <header class="page-head">
      <div>
        <h1>{title}</h1>
        {sub && <p class="sub">{sub}</p>}
      </div>
      {children && <div class="page-actions">{children}</div>}
    </header>
  );
}

export function Field({
  label,
  hint,
  wide,
  children,
}: {
  label: string;
  hint?: ComponentChildren;
  wide?: boolean;
  children: ComponentChildren;
}) {
  // The hint sits outside the <label>, so a field's accessible name is its label alone.
  return (
    <div class={wide ? "field wide" : "field"}>
      <label class="field-control">
        <span class="field-label">{label}</span>
        {children}
      </label>
      {hint && <span class="field-hint">{hint}</span>}
    </div>
  );
}

export function KeyValues({ rows }: { rows: [string, ComponentChildren][] }) {
  return (
    <dl class="kv">
      {rows.map(([k, v]) => (
        <div key={k} class="kv-row">
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

export function HeadersTable({ headers }: { headers: Record<string, string[] | string> | undefined }) {
  const entries = Object.entries(headers ?? {});
  if (entries.length === 0) return <p class="muted">No headers.</p>;
  return (
    <table class="table compact">
      <tbody>
        {entries.map(([name, values]) => (
          <tr key={name}>
            <th scope="row" class="mono">
              {name}
            </th>
            <td class="mono break">{Array.isArray(values) ? values.join(", ") : values}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
