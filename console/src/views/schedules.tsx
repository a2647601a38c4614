import { useState } from "preact/hooks";
import { useApp } from "../lib/app-context";
import { enc } from "../lib/api";
import { cronPreview } from "../lib/cron";
import { cronWords } from "../lib/cron-words";
import { buildPublishRequest, emptyPublishForm, type PublishForm } from "../lib/publish-request";
import { href } from "../lib/router";
import { scheduleEditLosses, scheduleToForm } from "../lib/schedule-form";
import type { Schedule, ScheduleTriggered } from "../lib/types";
import { relative, utcTime } from "../lib/format";
import { tableTime } from "../lib/when";
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

/** A time of the table, in the one format the table uses, with how far it is on a second line. */
function When({ ms }: { ms: number | undefined }) {
  if (!ms) return <span class="muted">–</span>;
  return (
    <time dateTime={new Date(ms).toISOString()} title={utcTime(ms)} class="when">
      <span class="nowrap">{tableTime(ms)}</span>
      <span class="muted small nowrap">{relative(ms)}</span>
    </time>
  );
}

export function Schedules() {
  const { api } = useApp();
  const action = useAction();
  const confirm = useConfirm();
  const [editing, setEditing] = useState<{ schedule?: Schedule }>();
  const list = useAsync(() => api.get<Schedule[]>("/v2/schedules"), [api]);
  const reload = () => list.reload(true);
  const schedules = [...(list.data ?? [])].sort((a, b) => b.createdAt - a.createdAt);

  const runNow = (s: Schedule) =>
    action.run(async () => {
      const res = await api.post<ScheduleTriggered>(`/v2/schedules/${enc(s.scheduleId)}/trigger`);
      return res.messages;
    }, `Published ${s.scheduleId}'s message now`, reload);

  return (
    <>
      {confirm.dialog}
      <PageHead title="Schedules" sub="Messages published on a cron. Times are in your time zone.">
        <WriteButton variant="primary" onClick={() => setEditing({})}>
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
            <table class="table schedules-table" data-testid="schedules-table">
              <thead>
                <tr>
                  <th>Schedule and destination</th>
                  <th>Runs</th>
                  <th>Next run</th>
                  <th>Last run</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {schedules.map((s) => {
                  const words = cronWords(s.cron);
                  return (
                    <tr key={s.scheduleId} data-schedule-id={s.scheduleId}>
                      <td class="schedule-cell">
                        <span class="mono small">{s.scheduleId}</span>
                        {s.isPaused && (
                          <>
                            {" "}
                            <Badge kind="warn">paused</Badge>
                          </>
                        )}
                        <div class="cell-url muted small" title={s.destination}>
                          {s.destination}
                        </div>
                        <div class="small">
                          <a href={href("messages", undefined, { schedule: s.scheduleId })}>Its messages</a>
                        </div>
                      </td>
                      <td>
                        {words && <div data-testid="cron-words">{words}</div>}
                        <div class={words ? "mono small muted nowrap" : "mono nowrap"}>{s.cron}</div>
                      </td>
                      <td>{s.isPaused ? <span class="muted">paused</span> : <When ms={s.nextScheduleTime} />}</td>
                      <td>
                        <When ms={s.lastScheduleTime} />
                        {Object.values(s.lastScheduleStates ?? {}).map((st, i) => (
                          <StateBadge key={i} state={st} />
                        ))}
                        {s.error && <div class="error-text small">{s.error}</div>}
                      </td>
                      <td>
                        <div class="row-actions schedule-actions">
                          <WriteButton small onClick={() => void runNow(s)} disabled={action.busy}>
                            Run now
                          </WriteButton>
                          <WriteButton small onClick={() => setEditing({ schedule: s })}>
                            Edit
                          </WriteButton>
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
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <Dialog
        title={editing?.schedule ? `Edit schedule ${editing.schedule.scheduleId}` : "New schedule"}
        open={editing !== undefined}
        onClose={() => setEditing(undefined)}
        wide
      >
        {editing && (
          <ScheduleForm
            schedule={editing.schedule}
            onSaved={() => {
              setEditing(undefined);
              reload();
            }}
          />
        )}
      </Dialog>
    </>
  );
}

/**
 * A new schedule, or an existing one to edit: saving an edit sends the whole form again with the schedule's id,
 * which the API takes as an overwrite of every field (docs/schedules.md "Overwrite").
 */
function ScheduleForm({ schedule, onSaved }: { schedule?: Schedule; onSaved: () => void }) {
  const { api, config } = useApp();
  const { run, busy } = useAction();
  const [form, setForm] = useState<PublishForm>(() =>
    schedule ? scheduleToForm(schedule) : { ...emptyPublishForm(), cron: "*/5 * * * *" },
  );
  const preview = cronPreview(form.cron ?? "");
  const words = cronWords(form.cron ?? "");
  const losses = schedule ? scheduleEditLosses(schedule) : [];
  const submit = async (e: Event) => {
    e.preventDefault();
    const request = buildPublishRequest(form, config.headerPrefix);
    if (schedule) request.headers[`${config.headerPrefix}Schedule-Id`] = schedule.scheduleId;
    await run(
      () => api.post(request.path, { headers: request.headers, body: request.body }),
      schedule ? "Schedule saved" : "Schedule created",
      onSaved,
    );
  };
  return (
    <form onSubmit={(e) => void submit(e)} class="form">
      {schedule && (
        <p class="field-hint" data-testid="edit-note">
          Saving replaces every field of this schedule; it is resumed if paused, and its last runs are cleared.
          {losses.length > 0 && ` The form cannot keep ${losses.join(" or ")}.`}
        </p>
      )}
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
          {words && (
            <p class="cron-words" data-testid="cron-words-preview">
              Runs {words}.
            </p>
          )}
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
          {schedule ? "Save schedule" : "Create schedule"}
        </Button>
      </div>
    </form>
  );
}
