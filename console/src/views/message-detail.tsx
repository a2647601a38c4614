import { useApp } from "../lib/app-context";
import { enc, type MessagingApi } from "../lib/api";
import { FINAL_STATES, groupLogs } from "../lib/group-logs";
import { href } from "../lib/router";
import { messageCurl } from "../lib/message-curl";
import { attemptTimings, duration, stateTone } from "../lib/timeline";
import type { LogEntry, MessageActions } from "../lib/types";
import { useAsync, useInterval } from "../lib/use-async";
import { BodyView } from "../components/body-view";
import { utf8Of } from "../lib/format";
import { MessageActionButtons, ReplayLinks } from "../components/message-actions";
import {
  ErrorBox,
  HeadersTable,
  KeyValues,
  Loading,
  PageHead,
  StateBadge,
  Time,
  useAction,
  useConfirm,
  WriteButton,
} from "../components/ui";

/** A callback message of this one: its own id, where it goes, and its latest state. */
interface CallbackRow {
  messageId: string;
  url: string;
  state: string;
}

/**
 * The callbacks a message produced. Logs cannot be filtered by source message, so the recent entries of each
 * callback URL (one page) are read, and a callback is recognised by the `sourceMessageId` in its body.
 */
async function callbacksOf(api: MessagingApi, id: string, urls: (string | undefined)[]): Promise<CallbackRow[]> {
  const rows: CallbackRow[] = [];
  for (const url of new Set(urls.filter((u): u is string => Boolean(u)))) {
    const { logs } = await api.get<{ logs: LogEntry[] }>("/v2/logs", { query: { url, count: 100 } });
    for (const group of groupLogs(logs)) {
      const created = logs.find((l) => l.messageId === group.messageId && l.state === "CREATED");
      const text = created?.body ? utf8Of(created.body) : undefined;
      try {
        if (text && (JSON.parse(text) as { sourceMessageId?: string }).sourceMessageId === id) {
          rows.push({ messageId: group.messageId, url: group.url, state: group.state });
        }
      } catch {
        // Not a callback body: another message to the same URL.
      }
    }
  }
  return rows;
}

/** Row states of a message still on its way (docs/states.md): it has a message record and may be cancelled. */
const LIVE_STATES = new Set(["CREATED", "ACTIVE", "RETRY", "QUEUED", "WAITING"]);

/** States that follow a delivery attempt and carry its response. */
const ATTEMPT_STATES = new Set(["ERROR", "RETRY", "DELIVERED", "FAILED"]);

/**
 * One message: its transitions from the logs (which outlive the message), its request from the CREATED entry, and,
 * while the row's state is live, a Cancel button. It reads no message record, so a message that ends between two
 * reads costs no failing call.
 */
export function MessageDetail({ id }: { id: string }) {
  const { api } = useApp();
  const { run, busy } = useAction();
  const confirm = useConfirm();
  const data = useAsync(async () => {
    const readLogs = async () =>
      (
        await api.get<{ logs: LogEntry[] }>("/v2/logs", {
          query: { messageId: id, order: "earliestFirst", count: 1000 },
        })
      ).logs;
    let logs = await readLogs();
    if (logs.length === 0) return { logs, finished: true, callbacks: [], actions: undefined };
    // What retry and replay would do, the replay links, and the row's state (docs/console.md "Message"); open to the
    // read-only token. Asked only for a message its log knows, which it answers for (no failing call).
    const actions = await api.get<MessageActions>(`/v2/messages/${enc(id)}/actions`);
    // It ended between the two reads: its end is in the log now (written in the same transaction as the row).
    if (actions.state && !LIVE_STATES.has(actions.state) && !logs.some((l) => FINAL_STATES.has(l.state))) {
      logs = await readLogs();
    }
    // Ended rows and HELD ones (ended, holding a queue slot) have no message record.
    const live = actions.state !== undefined && LIVE_STATES.has(actions.state);
    const finished = logs.some((l) => FINAL_STATES.has(l.state)) || (logs.length > 0 && !live);
    // No read of the message record (`GET /v2/messages/{id}`): a message ending between two reads would make it a 404,
    // a failing call. The CREATED entry carries the request as stored, and the row's state (from the actions) says
    // whether Cancel still applies.
    const created = logs.find((l) => l.state === "CREATED");
    const callbacks = await callbacksOf(api, id, [created?.callback, created?.failureCallback]);
    return { logs, finished, callbacks, actions };
  }, [api, id]);
  // Live while the message or one of its callbacks is still on its way.
  const settled =
    data.data !== undefined && data.data.finished && data.data.callbacks.every((c) => FINAL_STATES.has(c.state));
  useInterval(() => data.reload(true), 2000, data.data !== undefined && !settled);

  if (data.error) return <ErrorBox error={data.error} retry={() => data.reload()} />;
  if (!data.data) return <Loading />;
  const { logs, finished, callbacks, actions } = data.data;
  const timings = attemptTimings(logs);
  const created = logs.find((l) => l.state === "CREATED") ?? logs[0];
  const last = logs[logs.length - 1];

  const cancel = async () => {
    if (!(await confirm.ask(`Cancel message ${id}? It will not be delivered.`, "Cancel message"))) return;
    await run(() => api.del(`/v2/messages/${enc(id)}`), "Cancel requested", () => data.reload(true));
  };

  return (
    <>
      {confirm.dialog}
      <p>
        <a href={href("messages")}>← Messages</a>
      </p>
      <PageHead title="Message" sub={id}>
        {last && <StateBadge state={last.state} />}
        {actions && (
          <MessageActionButtons
            id={id}
            actions={actions}
            created={logs.find((l) => l.state === "CREATED")}
            onDone={() => data.reload(true)}
          />
        )}
        {!finished && (
          <WriteButton variant="danger" onClick={() => void cancel()} disabled={busy}>
            Cancel
          </WriteButton>
        )}
      </PageHead>
      {actions && <ReplayLinks actions={actions} />}
      {logs.length === 0 ? (
        <section class="panel">
          <p>
            No log entries for <code>{id}</code>. Logs are kept for the plan's retention period; an older message is
            gone.
          </p>
        </section>
      ) : (
        <div class="split">
          <div>
            <section class="panel">
              <h2>Timeline</h2>
              <ol class="timeline" data-testid="timeline">
                {logs.map((l, i) => (
                  <li key={i} data-state={l.state} data-tone={stateTone(l.state)}>
                    <div class="t-head">
                      <StateBadge state={l.state} />
                      <Time ms={l.time} />
                      {timings.has(i) && (
                        <span class="t-duration" data-testid="attempt-duration" title="From the attempt's start (ACTIVE) to its answer">
                          attempt {timings.get(i)!.attempt} · {duration(timings.get(i)!.ms)}
                        </span>
                      )}
                      {l.responseStatus !== undefined && ATTEMPT_STATES.has(l.state) && (
                        <span class="muted">HTTP {l.responseStatus}</span>
                      )}
                      {l.nextDeliveryTime && (
                        <span class="muted">
                          next try <Time ms={l.nextDeliveryTime} />
                        </span>
                      )}
                      {l.dlqId && (
                        <a href={href("dlq", l.dlqId)} class="small">
                          in the DLQ
                        </a>
                      )}
                    </div>
                    {(l.error || ATTEMPT_STATES.has(l.state)) && (
                      <div class="t-body">
                        {l.error && <div class="error-text">{l.error}</div>}
                        {(l.responseHeaders || l.responseBody) && (
                          <details>
                            <summary>Response</summary>
                            <h3>Headers</h3>
                            <HeadersTable headers={l.responseHeaders} />
                            <h3>Body</h3>
                            <BodyView base64={l.responseBody} name={`${id}-response`} />
                          </details>
                        )}
                      </div>
                    )}
                  </li>
                ))}
              </ol>
            </section>
          </div>
          <div>
            <section class="panel">
              <h2>Request</h2>
              <KeyValues
                rows={[
                  ["Destination", <span class="break">{created?.url}</span>],
                  ["Method", created?.method ?? "POST"],
                  ["Created", <Time ms={created?.time} />],
                  ["URL group", created?.topicName ?? "–"],
                  ["Queue", created?.queueName ?? "–"],
                  ["Schedule", created?.scheduleId ?? "–"],
                  ["Labels", (created?.labels ?? []).join(", ") || "–"],
                  ["Flow-control key", created?.flowControlKey ?? "–"],
                  ["Retries", String(created?.maxRetries ?? "–")],
                  ["Callback", created?.callback ?? "–"],
                  ["Failure callback", created?.failureCallback ?? "–"],
                ]}
              />
              <h3>Headers</h3>
              <HeadersTable headers={created?.header} />
              {callbacks.length > 0 && (
                <>
                  <h3>Callbacks</h3>
                  <table class="table compact" data-testid="callbacks">
                    <tbody>
                      {callbacks.map((c) => (
                        <tr key={c.messageId}>
                          <td>
                            <a class="id-link" href={href("messages", c.messageId)}>
                              {c.messageId}
                            </a>
                          </td>
                          <td class="break">{c.url}</td>
                          <td>
                            <StateBadge state={c.state} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </>
              )}
              <h3>Body</h3>
              {/* Log entries carry the body as base64. */}
              <BodyView base64={created?.body} name={id} />
              {created && created.state === "CREATED" && (
                <details class="as-curl">
                  <summary>As curl</summary>
                  <pre class="code" data-testid="message-curl">
                    {messageCurl(location.origin, created, api.config.headerPrefix)}
                  </pre>
                </details>
              )}
            </section>
          </div>
        </div>
      )}
    </>
  );
}
