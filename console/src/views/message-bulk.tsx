import type { MessagingApi } from "../lib/api";
import {
  CANCELLABLE_STATES,
  chunks,
  type MessageFilters,
  messageListQuery,
  RETRYABLE_STATES,
  splitSelection,
  statesWithin,
} from "../lib/message-list";
import type { MessageListEntry, MessageListPage } from "../lib/types";
import { useState } from "preact/hooks";
import { useApp } from "../lib/app-context";
import { useConfirm, WriteButton } from "../components/ui";
import type { useSelection } from "../components/selection";

/** Ids a bulk call carries (DELETE /v2/messages, POST /v2/dlq/retry: at most 100 entries a call). */
const IDS_PER_CALL = 100;
/** A filter's matching messages are listed 1000 a call, at most this many calls a click. */
const LIST_PAGE = 1000;
const LIST_CALLS = 10;

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

/**
 * The ids of the messages a filter matches in `states`, read from `GET /v2/messages` (bounded): a bulk action from a
 * filter acts on exactly these, so its confirm says how many it touches, counted by the API.
 */
async function matchingIds(
  api: MessagingApi,
  filters: MessageFilters,
  states: string[],
): Promise<{ ids: string[]; more: boolean }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let call = 0; call < LIST_CALLS; call++) {
    const page = await api.get<MessageListPage>("/v2/messages", {
      query: { ...messageListQuery(filters), state: states.join(","), count: LIST_PAGE, cursor },
    });
    ids.push(...page.messages.map((m) => m.messageId));
    cursor = page.cursor;
    if (!cursor) return { ids, more: false };
  }
  return { ids, more: true };
}

/** Cancels by id (docs/messaging.md: `messageIds` overrides every other filter); answers how many were cancelled. */
async function cancelIds(api: MessagingApi, ids: string[]): Promise<number> {
  let cancelled = 0;
  for (const part of chunks(ids, IDS_PER_CALL)) {
    cancelled += (await api.del<{ cancelled: number }>("/v2/messages", { body: { messageIds: part } })).cancelled;
  }
  return cancelled;
}

/** Retries the DLQ entries of failed messages (docs/dlq.md, `POST /v2/dlq/retry` by `messageIds`). */
async function retryIds(api: MessagingApi, ids: string[]): Promise<number> {
  let retried = 0;
  for (const part of chunks(ids, IDS_PER_CALL)) {
    retried += (await api.post<{ responses: unknown[] }>("/v2/dlq/retry", { body: { messageIds: part } })).responses.length;
  }
  return retried;
}

/**
 * Bulk cancel and bulk retry from the Messages view: on the checked rows, or on everything the filter matches.
 * Cancel reaches messages that have not ended; retry reaches failed messages only (their DLQ entries): a live message
 * is on its way already, and a delivered or cancelled one has nothing to retry (its page replays it). Each confirm
 * says how many messages the action touches, and how many of a selection it leaves alone.
 */
export function BulkActions({
  api,
  filters,
  entries,
  selection,
  onDone,
}: {
  api: MessagingApi;
  filters: MessageFilters;
  entries: MessageListEntry[];
  selection: ReturnType<typeof useSelection>;
  onDone: () => void;
}) {
  const confirm = useConfirm();
  const { notify } = useApp();
  const [busy, setBusy] = useState(false);
  const { checked } = selection;
  const after = () => {
    selection.clear();
    onDone();
  };

  const onSelection = async (kind: "cancel" | "retry") => {
    const { ids, skipped } = splitSelection(entries, checked, kind === "cancel" ? CANCELLABLE_STATES : RETRYABLE_STATES);
    const left =
      skipped === 0
        ? ""
        : kind === "cancel"
          ? ` ${plural(skipped, "selected message has", "selected messages have")} ended and ${skipped === 1 ? "stays" : "stay"} as ${skipped === 1 ? "it is" : "they are"}.`
          : ` ${plural(skipped, "selected message is", "selected messages are")} not failed and ${skipped === 1 ? "is" : "are"} left alone.`;
    await act(kind, ids, left, false);
  };

  const onFilter = async (kind: "cancel" | "retry") => {
    const states = statesWithin(filters.state, kind === "cancel" ? CANCELLABLE_STATES : RETRYABLE_STATES);
    setBusy(true);
    let found: { ids: string[]; more: boolean };
    try {
      found = states.length === 0 ? { ids: [], more: false } : await matchingIds(api, filters, states);
    } catch (error) {
      notify(error instanceof Error ? error.message : String(error), "error");
      return;
    } finally {
      setBusy(false);
    }
    const more = found.more ? ` Only the first ${found.ids.length.toLocaleString()}: run it again for the rest.` : "";
    await act(kind, found.ids, more, true);
  };

  const act = async (kind: "cancel" | "retry", ids: string[], note: string, matching: boolean) => {
    const what = kind === "cancel" ? "message" : "failed message";
    if (ids.length === 0) {
      const rule = kind === "cancel" ? "only a message that has not ended can be cancelled" : "only a failed message can be retried";
      notify(`${matching ? `No ${what} matches the filter` : `None of the selected messages is a ${what.replace(/^message$/, "live message")}`}: ${rule}.`, "error");
      return;
    }
    const text =
      kind === "cancel"
        ? `Cancel ${plural(ids.length, what)}${matching ? " matching the filter" : ""}? ${ids.length === 1 ? "It" : "They"} will not be delivered.${note}`
        : `Retry ${plural(ids.length, what)}${matching ? " matching the filter" : ""} from the dead letter queue? Each is published again as a new message.${note}`;
    const label = `${kind === "cancel" ? "Cancel" : "Retry"} ${plural(ids.length, "message")}`;
    if (!(await confirm.ask(text, label, kind === "cancel" ? (ids.length === 1 ? "Keep it" : "Keep them") : "Cancel"))) return;
    setBusy(true);
    try {
      // The toast says what the API did: a message may have ended, or its DLQ entry gone, since the confirm.
      if (kind === "cancel") {
        notify(`Cancelled ${plural(await cancelIds(api, ids), "message")}`);
      } else {
        const done = await retryIds(api, ids);
        notify(`Retried ${plural(done, "message")}${done < ids.length ? ` (${ids.length - done} had no DLQ entry left)` : ""}`);
      }
      after();
    } catch (error) {
      notify(error instanceof Error ? error.message : String(error), "error");
    } finally {
      setBusy(false);
    }
  };

  const selected = checked.size;
  return (
    <>
      {confirm.dialog}
      {selected > 0 ? (
        <>
          <span class="muted">{selected} selected</span>
          <WriteButton onClick={() => void onSelection("retry")} disabled={busy}>
            Retry selected
          </WriteButton>
          <WriteButton variant="danger" onClick={() => void onSelection("cancel")} disabled={busy}>
            Cancel selected
          </WriteButton>
        </>
      ) : (
        entries.length > 0 && (
          <>
            <WriteButton onClick={() => void onFilter("retry")} disabled={busy}>
              Retry matching
            </WriteButton>
            <WriteButton variant="danger" onClick={() => void onFilter("cancel")} disabled={busy}>
              Cancel matching
            </WriteButton>
          </>
        )
      )}
    </>
  );
}
