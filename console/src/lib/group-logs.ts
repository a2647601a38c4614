import type { LogEntry } from "./types.js";

/** One message of a page of logs, with its transitions oldest first. */
export interface MessageGroup {
  messageId: string;
  /** The newest entry's state: where the message is now (as far as this page shows). */
  state: string;
  url: string;
  labels: string[];
  queueName?: string;
  topicName?: string;
  scheduleId?: string;
  firstTime: number;
  lastTime: number;
  states: string[];
}

/**
 * Groups a page of log entries (newest first, as `GET /v2/logs` answers by default) by message, keeping the order
 * in which messages first appear, i.e. the most recently active message first.
 */
export function groupLogs(entries: LogEntry[]): MessageGroup[] {
  const groups = new Map<string, MessageGroup>();
  for (const e of entries) {
    let g = groups.get(e.messageId);
    if (!g) {
      g = {
        messageId: e.messageId,
        state: e.state,
        url: e.url,
        labels: e.labels ?? [],
        firstTime: e.time,
        lastTime: e.time,
        states: [],
      };
      if (e.queueName) g.queueName = e.queueName;
      if (e.topicName) g.topicName = e.topicName;
      if (e.scheduleId) g.scheduleId = e.scheduleId;
      groups.set(e.messageId, g);
    }
    g.states.unshift(e.state);
    g.firstTime = Math.min(g.firstTime, e.time);
    // Entries of one message may come in either order: the latest transition is the current state.
    if (e.time > g.lastTime) {
      g.lastTime = e.time;
      g.state = e.state;
    }
  }
  return [...groups.values()];
}

export const FINAL_STATES = new Set(["DELIVERED", "FAILED", "CANCELED"]);
