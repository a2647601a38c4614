import { useState } from "preact/hooks";
import { useApp } from "../lib/app-context";
import { enc } from "../lib/api";
import { count } from "../lib/format";
import { href } from "../lib/router";
import type { Queue, QueueThroughput } from "../lib/types";
import { PauseDeleteActions } from "../components/pause-delete-actions";
import { useAsync, useInterval } from "../lib/use-async";
import {
  Badge,
  Button,
  Dialog,
  Empty,
  Field,
  ListStatus,
  PageHead,
  Time,
  useAction,
  useConfirm,
  WriteButton,
} from "../components/ui";

/** The window of the throughput column. */
const THROUGHPUT_MINUTES = 5;

export function Queues() {
  const { api, account } = useApp();
  const action = useAction();
  const { run, busy } = action;
  const confirm = useConfirm();
  const list = useAsync(() => api.get<Queue[]>("/v2/queues"), [api]);
  // Delivered per minute over the last THROUGHPUT_MINUTES, from the store (docs/console.md "Queues").
  const throughput = useAsync(
    () => api.get<QueueThroughput>("/v2/account/queue-throughput", { query: { minutes: THROUGHPUT_MINUTES } }),
    [api],
  );
  useInterval(
    () => {
      list.reload(true);
      throughput.reload(true);
    },
    5000,
    true,
  );
  const rates = new Map((throughput.data?.queues ?? []).map((q) => [q.queueName, q]));
  const [editing, setEditing] = useState<{ name: string; parallelism: string; isNew: boolean }>();
  const reload = () => list.reload(true);
  const max = account.limits.max_parallelism ?? 100;

  const save = async (e: Event) => {
    e.preventDefault();
    if (!editing) return;
    const ok = await run(
      () => api.post("/v2/queues", { body: { queueName: editing.name.trim(), parallelism: Number(editing.parallelism) } }),
      editing.isNew ? "Queue created" : "Parallelism changed",
      reload,
    );
    if (ok) setEditing(undefined);
  };

  return (
    <>
      {confirm.dialog}
      <PageHead title="Queues" sub="Ordered delivery with a bounded number of messages in flight per queue.">
        <WriteButton variant="primary" onClick={() => setEditing({ name: "", parallelism: "1", isNew: true })}>
          New queue
        </WriteButton>
      </PageHead>
      <section class="panel flush">
        <ListStatus
          state={list}
          count={list.data?.length ?? 0}
          empty={
            <Empty title="No queues yet">
              Create one with “New queue”, or enqueue a message to a new queue name and it is created for you.
            </Empty>
          }
        />
        {list.data && list.data.length > 0 && (
          <div class="table-wrap">
            <table class="table" data-testid="queues-table">
              <thead>
                <tr>
                  <th>Queue</th>
                  <th class="num">Lag</th>
                  <th class="num" title={`Messages delivered per minute over the last ${THROUGHPUT_MINUTES} minutes`}>
                    Delivered / min
                  </th>
                  <th class="num">Parallelism</th>
                  <th>State</th>
                  <th>Updated</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {list.data.map((q) => (
                  <tr key={q.name} data-queue={q.name}>
                    <td>
                      <span class="mono">{q.name}</span>
                      <div class="small">
                        <a href={href("messages", undefined, { queue: q.name })}>Its messages</a>
                      </div>
                    </td>
                    <td class="num">{count(q.lag)}</td>
                    <td class="num" data-testid="throughput">
                      {throughput.data ? (
                        <span title={`${count(rates.get(q.name)?.delivered ?? 0)} delivered in ${THROUGHPUT_MINUTES} min`}>
                          {perMinute(rates.get(q.name)?.perMinute ?? 0)}
                        </span>
                      ) : (
                        <span class="muted">…</span>
                      )}
                    </td>
                    <td class="num">{q.parallelism}</td>
                    <td>{q.paused ? <Badge kind="warn">paused</Badge> : <Badge kind="ok">active</Badge>}</td>
                    <td>
                      <Time ms={q.updatedAt} />
                    </td>
                    <td>
                      <div class="row-actions">
                        <WriteButton
                          small
                          onClick={() => setEditing({ name: q.name, parallelism: String(q.parallelism), isNew: false })}
                        >
                          Parallelism
                        </WriteButton>
                        <PauseDeleteActions
                          path={`/v2/queues/${enc(q.name)}`}
                          paused={q.paused}
                          deleteQuestion={`Delete queue ${q.name}? Its waiting messages are deleted too.`}
                          action={action}
                          confirm={confirm}
                          reload={reload}
                        />
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <Dialog
        title={editing?.isNew ? "New queue" : `Parallelism of ${editing?.name ?? ""}`}
        open={editing !== undefined}
        onClose={() => setEditing(undefined)}
      >
        {editing && (
          <form class="form" onSubmit={(e) => void save(e)}>
            {editing.isNew && (
              <Field label="Name" hint="Letters, digits, -, _ and .">
                <input
                  name="queueName"
                  required
                  value={editing.name}
                  onInput={(e) => setEditing({ ...editing, name: e.currentTarget.value })}
                />
              </Field>
            )}
            <Field label="Parallelism" hint={`Messages of this queue in flight at once (1–${max}).`}>
              <input
                name="parallelism"
                type="number"
                min={1}
                max={max}
                required
                value={editing.parallelism}
                onInput={(e) => setEditing({ ...editing, parallelism: e.currentTarget.value })}
              />
            </Field>
            <div class="actions">
              <Button onClick={() => setEditing(undefined)}>Cancel</Button>
              <Button type="submit" variant="primary" disabled={busy}>
                Save
              </Button>
            </div>
          </form>
        )}
      </Dialog>
    </>
  );
}

/** Per-minute rates: whole numbers as they are, small ones with up to two decimals. */
function perMinute(rate: number): string {
  return rate >= 100 || Number.isInteger(rate) ? Math.round(rate).toLocaleString() : rate.toFixed(rate < 10 ? 2 : 1);
}
