import { useState } from "preact/hooks";
import { useApp } from "../lib/app-context";
import { enc } from "../lib/api";
import { count } from "../lib/format";
import type { FlowKey } from "../lib/types";
import { useAsync, useInterval } from "../lib/use-async";
import { Badge, Button, Dialog, Empty, Field, ListStatus, PageHead, useAction, WriteButton } from "../components/ui";

export function FlowControl() {
  const { api } = useApp();
  const { run, busy } = useAction();
  const [search, setSearch] = useState("");
  const keys = useAsync(() => api.get<FlowKey[]>("/v2/flowControl", { query: { search } }), [api, search]);
  const global = useAsync(() => api.get<{ parallelismMax?: number; parallelismCount?: number }>("/v2/globalParallelism"), [api]);
  useInterval(
    () => {
      keys.reload(true);
      global.reload(true);
    },
    3000,
    true,
  );
  const [pin, setPin] = useState<{ key: string; parallelism: string; rate: string; period: string }>();
  const reload = () => keys.reload(true);
  const action = (key: string, verb: string, done: string, query?: Record<string, string>) =>
    void run(() => api.post(`/v2/flowControl/${enc(key)}/${verb}`, query ? { query } : {}), done, reload);

  return (
    <>
      <PageHead title="Flow control" sub="Parallelism and rate limits per flow-control key, as set by the messages that carry them." />
      <div class="grid cols-4">
        <div class="panel stat">
          <div class="stat-label">Global parallelism in use</div>
          <div class="stat-value">
            {count(global.data?.parallelismCount ?? 0)}
            <span class="muted small"> / {count(global.data?.parallelismMax)}</span>
          </div>
        </div>
      </div>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setSearch(((e.currentTarget as HTMLFormElement).elements.namedItem("search") as HTMLInputElement).value);
        }}
      >
        <Field label="Search keys" wide>
          <input name="search" defaultValue={search} />
        </Field>
        <Button type="submit">Search</Button>
      </form>
      <section class="panel flush">
        <ListStatus
          state={keys}
          count={keys.data?.length ?? 0}
          empty={
            <Empty title="No flow-control keys">
              A key appears when a message is published with a flow-control key (the Publish view has the fields).
            </Empty>
          }
        />
        {keys.data && keys.data.length > 0 && (
          <div class="table-wrap">
            <table class="table" data-testid="flow-table">
              <thead>
                <tr>
                  <th>Key</th>
                  <th class="num">Waiting</th>
                  <th class="num">Parallelism</th>
                  <th class="num">Rate</th>
                  <th>State</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {keys.data.map((k) => (
                  <tr key={k.flowControlKey} data-flow-key={k.flowControlKey}>
                    <td class="mono">{k.flowControlKey}</td>
                    <td class="num">{count(k.waitListSize ?? 0)}</td>
                    <td class="num">
                      {k.parallelismCount ?? 0} / {k.parallelismMax || "–"}
                      {k.isPinnedParallelism && <span class="tag">pinned</span>}
                    </td>
                    <td class="num">
                      {k.rateCount ?? 0} / {k.rateMax || "–"} per {k.ratePeriod ?? 1}s
                      {k.isPinnedRate && <span class="tag">pinned</span>}
                    </td>
                    <td>{k.isPaused ? <Badge kind="warn">paused</Badge> : <Badge kind="ok">active</Badge>}</td>
                    <td>
                      <div class="row-actions">
                        <WriteButton
                          small
                          disabled={busy}
                          onClick={() => action(k.flowControlKey, k.isPaused ? "resume" : "pause", k.isPaused ? "Resumed" : "Paused")}
                        >
                          {k.isPaused ? "Resume" : "Pause"}
                        </WriteButton>
                        <WriteButton
                          small
                          onClick={() =>
                            setPin({
                              key: k.flowControlKey,
                              // Records carry zeros for unset parts (docs/flow-control.md): zero means "not set".
                              parallelism: k.parallelismMax ? String(k.parallelismMax) : "",
                              rate: k.rateMax ? String(k.rateMax) : "",
                              period: `${k.ratePeriod || 1}s`,
                            })
                          }
                        >
                          Pin
                        </WriteButton>
                        {(k.isPinnedParallelism || k.isPinnedRate) && (
                          <WriteButton small disabled={busy} onClick={() => action(k.flowControlKey, "unpin", "Unpinned")}>
                            Unpin
                          </WriteButton>
                        )}
                        <WriteButton small disabled={busy} onClick={() => action(k.flowControlKey, "reset", "Rate window reset")}>
                          Reset
                        </WriteButton>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <Dialog title={`Pin ${pin?.key ?? ""}`} open={pin !== undefined} onClose={() => setPin(undefined)}>
        {pin && (
          <form
            class="form"
            onSubmit={(e) => {
              e.preventDefault();
              const query: Record<string, string> = {};
              // Empty or 0 means "not pinned"; a period only goes with a rate.
              const set = (v: string) => v.trim() !== "" && v.trim() !== "0";
              if (set(pin.parallelism)) query.parallelism = pin.parallelism.trim();
              if (set(pin.rate)) query.rate = pin.rate.trim();
              if (set(pin.rate) && set(pin.period)) query.period = pin.period.trim();
              void run(() => api.post(`/v2/flowControl/${enc(pin.key)}/pin`, { query }), "Pinned", () => {
                setPin(undefined);
                reload();
              });
            }}
          >
            <p class="muted">Pinned values hold whatever later messages of this key ask for, until unpinned.</p>
            <div class="form-grid">
              <Field label="Parallelism">
                <input name="parallelism" inputMode="numeric" value={pin.parallelism} onInput={(e) => setPin({ ...pin, parallelism: e.currentTarget.value })} />
              </Field>
              <Field label="Rate">
                <input name="rate" inputMode="numeric" value={pin.rate} onInput={(e) => setPin({ ...pin, rate: e.currentTarget.value })} />
              </Field>
              <Field label="Period" hint="e.g. 1s, 1m">
                <input name="period" value={pin.period} onInput={(e) => setPin({ ...pin, period: e.currentTarget.value })} />
              </Field>
            </div>
            <div class="actions">
              <Button onClick={() => setPin(undefined)}>Cancel</Button>
              <Button type="submit" variant="primary" disabled={busy}>
                Pin
              </Button>
            </div>
          </form>
        )}
      </Dialog>
    </>
  );
}
