import type { PublishForm } from "../lib/publish-request";
import { Button, Field } from "../components/ui";

const METHODS = ["POST", "PUT", "PATCH", "DELETE", "GET", "HEAD", "OPTIONS"];

/** Every option of the publish API (docs: the `<prefix>*` headers), shared by Publish and New schedule. */
export function PublishFields({
  form,
  onChange,
  prefix,
  withQueue = true,
}: {
  form: PublishForm;
  onChange: (f: PublishForm) => void;
  prefix: string;
  withQueue?: boolean;
}) {
  const text = (key: keyof PublishForm) => ({
    value: form[key] as string,
    onInput: (e: Event) => onChange({ ...form, [key]: (e.currentTarget as HTMLInputElement).value }),
    name: key,
  });
  const setHeader = (i: number, part: "name" | "value", value: string) =>
    onChange({ ...form, headers: form.headers.map((h, j) => (j === i ? { ...h, [part]: value } : h)) });
  const localNotBefore =
    form.notBefore === undefined
      ? ""
      : new Date(form.notBefore - new Date(form.notBefore).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

  return (
    <div class="form">
      <Field label="Destination" hint="A URL (https://…) or the name of a URL group.">
        <input {...text("destination")} required placeholder="https://example.com/hook" />
      </Field>
      <div class="form-grid">
        <Field label="Method">
          <select value={form.method} name="method" onChange={(e) => onChange({ ...form, method: e.currentTarget.value })}>
            {METHODS.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </Field>
        <Field label="Content-Type">
          <input {...text("contentType")} />
        </Field>
        {withQueue && (
          <Field label="Queue" hint="Enqueue instead of publish.">
            <input {...text("queue")} />
          </Field>
        )}
      </div>
      <Field label="Body">
        <textarea {...text("body")} spellcheck={false} placeholder='{"hello": "world"}' />
      </Field>
      <fieldset>
        <legend>Headers forwarded to the destination</legend>
        {form.headers.map((h, i) => (
          <div key={i} class="form-grid">
            <input
              aria-label={`Header ${i + 1} name`}
              placeholder="Name"
              value={h.name}
              onInput={(e) => setHeader(i, "name", e.currentTarget.value)}
            />
            <input
              aria-label={`Header ${i + 1} value`}
              placeholder="Value"
              value={h.value}
              onInput={(e) => setHeader(i, "value", e.currentTarget.value)}
            />
            <Button small variant="ghost" onClick={() => onChange({ ...form, headers: form.headers.filter((_, j) => j !== i) })}>
              Remove
            </Button>
          </div>
        ))}
        <Button small onClick={() => onChange({ ...form, headers: [...form.headers, { name: "", value: "" }] })}>
          Add header
        </Button>
        <p class="field-hint">Sent as {prefix}Forward-&lt;Name&gt;.</p>
      </fieldset>
      <fieldset>
        <legend>Timing and retries</legend>
        <div class="form-grid">
          <Field label="Delay" hint="e.g. 30s, 5m, 2h">
            <input {...text("delay")} disabled={form.notBefore !== undefined} />
          </Field>
          <Field label="Not before" hint="Your local time; wins over the delay.">
            <input
              type="datetime-local"
              name="notBefore"
              value={localNotBefore}
              onInput={(e) => {
                const v = e.currentTarget.value;
                onChange({ ...form, notBefore: v ? new Date(v).getTime() : undefined });
              }}
            />
          </Field>
          <Field label="Retries">
            <input {...text("retries")} inputMode="numeric" placeholder="3" />
          </Field>
          <Field label="Retry delay" hint="An expression, e.g. 1000 * pow(2, retried)">
            <input {...text("retryDelay")} />
          </Field>
          <Field label="Timeout" hint="e.g. 30s">
            <input {...text("timeout")} />
          </Field>
        </div>
      </fieldset>
      <fieldset>
        <legend>Callbacks, deduplication and labels</legend>
        <div class="form-grid">
          <Field label="Callback URL">
            <input {...text("callback")} />
          </Field>
          <Field label="Failure callback URL">
            <input {...text("failureCallback")} />
          </Field>
          <Field label="Deduplication id">
            <input {...text("deduplicationId")} />
          </Field>
          <Field label="Labels" hint="Comma-separated.">
            <input {...text("labels")} />
          </Field>
        </div>
        <label class="check">
          <input
            type="checkbox"
            name="contentBasedDeduplication"
            checked={form.contentBasedDeduplication}
            onChange={(e) => onChange({ ...form, contentBasedDeduplication: e.currentTarget.checked })}
          />
          Content-based deduplication
        </label>
      </fieldset>
      <fieldset>
        <legend>Flow control</legend>
        <div class="form-grid">
          <Field label="Flow-control key">
            <input {...text("flowControlKey")} />
          </Field>
          <Field label="Parallelism">
            <input {...text("flowParallelism")} inputMode="numeric" />
          </Field>
          <Field label="Rate">
            <input {...text("flowRate")} inputMode="numeric" />
          </Field>
          <Field label="Period" hint="e.g. 1s, 1m">
            <input {...text("flowPeriod")} />
          </Field>
        </div>
      </fieldset>
    </div>
  );
}
