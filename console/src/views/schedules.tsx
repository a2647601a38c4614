import { useState } from "preact/hooks";
import { useApp } from "../lib/app-context";
import { enc } from "../lib/api";
import { cronPreview } from "../lib/cron";
import { buildPublishRequest, emptyPublishForm, type PublishForm } from "../lib/publish-request";
import type { Schedule } from "../lib/types";
import { PauseDeleteActions } from "../components/pause-delete-actions";
import { useAsync } from "../lib/use-async";
import {
  Badge,
  Button,
  Dialog,
  Empty,
  Field,
  ListStatus,
  PageHead,
  StateBadge,
  Time,
  useAction,
  useConfirm,
  WriteButton,
} from "../components/ui";
import { PublishFields } from "./publish-fields";

export function Schedules() {
  const { api } = useApp();
  const action = useAction();
  const confirm = useConfirm();
  const [creating, setCreating] = useState(false);
  const list = useAsync(() => api.get<Schedule[]>("/v2/schedules"), [api]);
  const reload = () => list.reload(true);
  const schedules = [...(list.data ?? [])].sort((a, b) => b.createdAt - a.createdAt);

  return (
    <>
      {confirm.dialog}
      <PageHead title="Schedules" sub="Messages published on a cron.">
        <WriteButton variant="primary" onClick={() => setCreating(true)}>
          New schedule
        </WriteButton>
      </PageHead>
      <section class="panel flush">
        <ListStatus
          state={list}
          count={schedules.length}
          empty={
            <Empty title="No schedules yet">Create one with “New schedule”: a cron expression and a destination.</Empty>
          }
        />
        {schedules.length > 0 && (
          <div class="table-wrap">
            <table class="table" data-testid="schedules-table">
              <thead>
                <tr>
                  <th>Schedule</th>
                  <th>Cron</th>
                  <th>Destination</th>
                  <th>Next run</th>
                  <th>Last run</th>
                  <th>Last states</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {schedules.map((s) => (
                  <tr key={s.scheduleId} data-schedule-id={s.scheduleId}>
                    <td>
                      <span class="mono small">{s.scheduleId}</span>
                      {s.isPaused && (
                        <>
                          {" "}
                          <Badge kind="warn">paused</Badge>
                        </>
                      )}
                    </td>
                    <td class="mono nowrap">{s.cron}</td>
                    <td class="cell-url" title={s.destination}>
                      {s.destination}
                    </td>
                    <td>{s.isPaused ? <span class="muted">paused</span> : <Time ms={s.nextScheduleTime} />}</td>
                    <td>
                      <Time ms={s.lastScheduleTime} />
                    </td>
                    <td>
                      {Object.keys(s.lastScheduleStates ?? {}).length === 0 && !s.error && <span class="muted">–</span>}
                      {Object.values(s.lastScheduleStates ?? {}).map((st, i) => (
                        <StateBadge key={i} state={st} />
                      ))}
                      {s.error && <div class="error-text small">{s.error}</div>}
                    </td>
                    <td>
                      <div class="row-actions">
                        <PauseDeleteActions
                          path={`/v2/schedules/${enc(s.scheduleId)}`}
                          paused={s.isPaused === true}
                          deleteQuestion={`Delete schedule ${s.scheduleId}?`}
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
      <Dialog title="New schedule" open={creating} onClose={() => setCreating(false)} wide>
        <NewSchedule
          onCreated={() => {
            setCreating(false);
            reload();
          }}
        />
      </Dialog>
    </>
  );
}

function NewSchedule({ onCreated }: { onCreated: () => void }) {
  const { api, config } = useApp();
  const { run, busy } = useAction();
  const [form, setForm] = useState<PublishForm>(() => ({ ...emptyPublishForm(), cron: "*/5 * * * *" }));
  const preview = cronPreview(form.cron ?? "");
  const submit = async (e: Event) => {
    e.preventDefault();
    const request = buildPublishRequest(form, config.headerPrefix);
    await run(() => api.post(request.path, { headers: request.headers, body: request.body }), "Schedule created", onCreated);
  };
  return (
    <form onSubmit={(e) => void submit(e)} class="form">
      <Field label="Cron" hint="5 fields in UTC, or a CRON_TZ=<zone> prefix.">
        <input
          name="cron"
          class="mono"
          value={form.cron}
          onInput={(e) => setForm({ ...form, cron: e.currentTarget.value })}
          required
        />
      </Field>
      {preview.ok ? (
        <div>
          <span class="field-hint">Next runs (your time zone):</span>
          <ol class="cron-preview" data-testid="cron-preview">
            {preview.runs.map((d) => (
              <li key={d.getTime()}>
                <Time ms={d.getTime()} />
              </li>
            ))}
          </ol>
        </div>
      ) : (
        <div class="error-text small" data-testid="cron-error">
          {preview.error}
        </div>
      )}
      <PublishFields form={form} onChange={setForm} prefix={config.headerPrefix} />
      <div class="actions">
        <Button type="submit" variant="primary" disabled={busy || !preview.ok || !form.destination.trim()}>
          Create schedule
        </Button>
      </div>
    </form>
  );
}
