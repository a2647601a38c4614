import { describe, expect, it } from "vitest";
import { href, parseHash } from "../../console/src/lib/hash.js";
import {
  CANCELLABLE_STATES,
  chunks,
  LIST_STATES,
  messageFiltersFrom,
  messageFiltersQuery,
  messageListQuery,
  RETRYABLE_STATES,
  shortUrl,
  splitSelection,
  stateDetail,
  statesWithin,
} from "../../console/src/lib/message-list.js";
import type { MessageListEntry } from "../../console/src/lib/types.js";
import { MESSAGE_LIST_STATES, CANCELLABLE_LIST_STATES } from "../../src/domain/message-list-state.js";

/** The Messages view's logic (console/src/lib/message-list.ts): filters in the fragment, bulk reach, state lines. */
const entry = (over: Partial<MessageListEntry>): MessageListEntry => ({
  messageId: "msg_1",
  state: "DELIVERED",
  url: "https://example.com/a",
  attempts: 1,
  createdAt: 0,
  bodySize: 0,
  ...over,
});

describe("the Messages view's filters", () => {
  it("round-trips through the fragment with the keys other views link with", () => {
    const route = parseHash("#/messages?state=RETRY&queue=orders&label=x&schedule=scd_1&url=https%3A%2F%2Fa.b%2Fc&group=g&id=msg_9&other=1");
    const f = messageFiltersFrom(route.query);
    expect(f).toEqual({ id: "msg_9", state: "RETRY", label: "x", url: "https://a.b/c", group: "g", queue: "orders", schedule: "scd_1" });
    expect(parseHash(href("messages", undefined, messageFiltersQuery(f))).query.toString()).toBe(
      "id=msg_9&state=RETRY&label=x&url=https%3A%2F%2Fa.b%2Fc&group=g&queue=orders&schedule=scd_1",
    );
    expect(messageListQuery(f)).toEqual({
      messageId: "msg_9",
      state: "RETRY",
      label: "x",
      url: "https://a.b/c",
      topicName: "g",
      queueName: "orders",
      scheduleId: "scd_1",
    });
    expect(messageFiltersQuery(messageFiltersFrom(new URLSearchParams("label=%20&queue=q")))).toEqual({ queue: "q" });
  });

  it("knows the API's states and which a cancel reaches", () => {
    expect([...LIST_STATES]).toEqual([...MESSAGE_LIST_STATES]);
    expect([...CANCELLABLE_STATES]).toEqual([...CANCELLABLE_LIST_STATES]);
  });
});

describe("bulk actions", () => {
  it("reach the filter's states within what the action can touch", () => {
    expect(statesWithin("", CANCELLABLE_STATES)).toEqual([...CANCELLABLE_STATES]);
    expect(statesWithin("RETRY", CANCELLABLE_STATES)).toEqual(["RETRY"]);
    expect(statesWithin("DELIVERED", CANCELLABLE_STATES)).toEqual([]);
    expect(statesWithin("RETRY", RETRYABLE_STATES)).toEqual([]);
    expect(statesWithin("failed", RETRYABLE_STATES)).toEqual(["FAILED"]);
  });

  it("split a selection into the ids they act on and the ones they leave", () => {
    const entries = [
      entry({ messageId: "a", state: "FAILED" }),
      entry({ messageId: "b", state: "DELAYED" }),
      entry({ messageId: "c", state: "DELIVERED" }),
      entry({ messageId: "d", state: "RETRY" }),
    ];
    const selected = new Set(["a", "b", "c"]);
    expect(splitSelection(entries, selected, CANCELLABLE_STATES)).toEqual({ ids: ["b"], skipped: 2 });
    expect(splitSelection(entries, selected, RETRYABLE_STATES)).toEqual({ ids: ["a"], skipped: 2 });
    expect(chunks([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
  });
});

describe("a row's state line", () => {
  it("says what a message waits for, or when it is tried next", () => {
    const now = 1_000_000;
    expect(stateDetail(entry({ state: "RETRY", nextDeliveryTime: now + 90_000 }), now)).toBe("next try in 2 min");
    expect(stateDetail(entry({ state: "DELAYED", nextDeliveryTime: now - 5 }), now)).toBe("due now");
    expect(stateDetail(entry({ state: "FLOW_CONTROL", waitReason: "globalParallelism" }), now)).toBe("global parallelism");
    expect(stateDetail(entry({ state: "FLOW_CONTROL", waitReason: "flowControlKey" }), now)).toBe("its key's limits");
    expect(stateDetail(entry({ state: "QUEUED" }), now)).toBe("for a queue slot");
    expect(stateDetail(entry({ state: "ACTIVE", cancelRequested: true }), now)).toBe("cancel requested");
    expect(stateDetail(entry({ state: "DELIVERED" }), now)).toBeUndefined();
    expect(shortUrl("https://example.com/a?b=1")).toBe("example.com/a?b=1");
  });
});
