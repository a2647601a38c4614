import { useApp } from "../lib/app-context";
import { enc } from "../lib/api";
import { copyText } from "../lib/clipboard";
import { messageCurl } from "../lib/message-curl";
import { href } from "../lib/router";
import type { LogEntry, MessageActions } from "../lib/types";
import { Button, Time, useAction, WriteButton } from "./ui";


/**
 * Retry, Replay and Copy as curl for one message (docs/console.md "Message"). What retry and replay would do, or
 * why they cannot, comes from the server (`GET /v2/messages/{id}/actions`): a disabled button says why on hover.
 * Copy as curl only reads, so the read-only token may use it.
 */
export function MessageActionButtons({
  id,
  actions,
  created,
  onDone,
}: {
  id: string;
  actions: MessageActions;
  created: LogEntry | undefined;
  onDone: () => void;
}) {
  const { api, notify } = useApp();
  const { run, busy } = useAction();
  const retry = actions.retry;
  const replay = actions.replay;
  const retryLabel = retry.allowed && retry.kind === "deliverNow" ? "Retry now" : "Retry";
  const retryHint = retry.allowed
    ? retry.kind === "dlq"
      ? `Retries its DLQ entry ${retry.dlqId ?? ""}: a new message with the same request`
      : "Makes its next attempt now instead of waiting out the backoff"
    : `Cannot retry: ${retry.reason}`;
  const replayHint = replay.allowed
    ? "Publishes a new message with the same request, linked to this one"
    : `Cannot replay: ${replay.reason}`;

  const doRetry = () =>
    run(
      () => api.post(`/v2/messages/${enc(id)}/retry`),
      retry.allowed && retry.kind === "deliverNow" ? "Retrying now" : "Retried: a new message is on its way",
      onDone,
    );
  const doReplay = () =>
    run(() => api.post(`/v2/messages/${enc(id)}/replay`), "Replayed: a new message with the same request is on its way", onDone);
  const copyCurl = async () => {
    if (!created) return;
    await copyText(messageCurl(location.origin, created, api.config.headerPrefix));
    notify("Copied the request as a curl command", "ok");
  };

  return (
    <>
      <WriteButton onClick={() => void doRetry()} disabled={busy || !retry.allowed} title={retryHint}>
        {retryLabel}
      </WriteButton>
      <WriteButton onClick={() => void doReplay()} disabled={busy || !replay.allowed} title={replayHint}>
        Replay
      </WriteButton>
      <Button
        onClick={() => void copyCurl()}
        disabled={!created}
        title={created ? "Copies the request as a curl command ($FERRY_TOKEN stands for the token)" : "Its request is no longer in the log"}
      >
        Copy as curl
      </Button>
    </>
  );
}

/** "Replay of …" and "Replayed as …": the links between a message and its replays, both ways. */
export function ReplayLinks({ actions }: { actions: MessageActions }) {
  if (!actions.replayOf && actions.replays.length === 0) return null;
  return (
    <section class="panel replay-links" data-testid="replay-links">
      {actions.replayOf && (
        <p>
          Replay of{" "}
          <a class="id-link" href={href("messages", actions.replayOf)} data-testid="replay-of">
            {actions.replayOf}
          </a>
        </p>
      )}
      {actions.replays.length > 0 && (
        <p>
          Replayed as{" "}
          {actions.replays.map((r, i) => (
            <span key={r.messageId}>
              {i > 0 && ", "}
              <a class="id-link" href={href("messages", r.messageId)} data-testid="replay">
                {r.messageId}
              </a>{" "}
              <span class="muted small">
                (<Time ms={r.createdAt} />)
              </span>
            </span>
          ))}
        </p>
      )}
    </section>
  );
}
