import { describe, expect, it } from "vitest";
import type { NewMessage } from "../../src/domain/message.js";
import {
  holdsSlotAfterFinish,
  inQueue,
  parentReleasable,
  promotedState,
  type QueueRow,
  queueSlotCount,
  queuesOf,
  retryWaitsQueued,
  slotMoves,
} from "../../src/domain/queue-slots.js";

/**
 * FIFO queue slot rules (src/domain/queue-slots.ts) without a database; test/store/rules-in-sql.test.ts runs the
 * slot moves through both adapters' SQL.
 */
const row = (seq: number, state: QueueRow["state"], retried = 0): QueueRow => ({ seq, state, retried });
const queued = { kind: "message" as const, queueName: "q", id: "m1" };

describe("queue slots", () => {
  it("a queue has `parallelism` slots, none while paused, and one when it has no record", () => {
    expect(queueSlotCount({ parallelism: 3, paused: false })).toBe(3);
    expect(queueSlotCount({ parallelism: 3, paused: 1 })).toBe(0);
    expect(queueSlotCount({ parallelism: 3, paused: 0 })).toBe(3);
    expect(queueSlotCount(undefined)).toBe(1);
    expect(queueSlotCount({ parallelism: null, paused: null })).toBe(1);
  });

  it("only ordinary messages with a queue take part", () => {
    expect(inQueue(queued)).toBe(true);
    expect(inQueue({ kind: "message", queueName: undefined })).toBe(false);
    expect(inQueue({ kind: "callback", queueName: "q" })).toBe(false);
  });

  it("promotes the QUEUED rows among the first slots and demotes claimable rows behind them", () => {
    const rows = [row(1, "ACTIVE"), row(2, "QUEUED"), row(3, "CREATED"), row(4, "RETRY", 1), row(5, "QUEUED")];
    expect(slotMoves(rows, 2)).toEqual({
      promote: [row(2, "QUEUED")],
      demote: [row(3, "CREATED"), row(4, "RETRY", 1)],
    });
    expect(slotMoves(rows, 5)).toEqual({ promote: [row(2, "QUEUED"), row(5, "QUEUED")], demote: [] });
    // Paused: nothing claimable is left, but what is in flight stays.
    expect(slotMoves(rows, 0)).toEqual({ promote: [], demote: [row(3, "CREATED"), row(4, "RETRY", 1)] });
    // HELD rows keep their slot: a queue of parallelism 1 behind a HELD parent promotes nothing.
    expect(slotMoves([row(1, "HELD"), row(2, "QUEUED")], 1)).toEqual({ promote: [], demote: [] });
  });

  it("a promoted message is RETRY when it was already attempted, else CREATED", () => {
    expect(promotedState(0)).toBe("CREATED");
    expect(promotedState(2)).toBe("RETRY");
  });

  it("a finished queue message stays HELD while it has callbacks to finish, stored or created by this outcome", () => {
    const child = (parentId: string) => ({ parentId }) as Pick<NewMessage, "parentId">;
    expect(holdsSlotAfterFinish(queued, { created: [], stored: false })).toBe(false);
    expect(holdsSlotAfterFinish(queued, { created: [], stored: true })).toBe(true);
    expect(holdsSlotAfterFinish(queued, { created: [child("other")], stored: false })).toBe(false);
    let asked = false;
    const stored = () => {
      asked = true;
      return false;
    };
    expect(holdsSlotAfterFinish(queued, { created: [child("m1")], stored })).toBe(true);
    expect(asked).toBe(false);
    expect(holdsSlotAfterFinish({ ...queued, queueName: undefined }, { created: [child("m1")], stored: true })).toBe(
      false,
    );
  });

  it("a retry waits QUEUED only in a paused queue; a HELD parent goes once its last callback is gone", () => {
    expect(retryWaitsQueued(queued, 0)).toBe(true);
    expect(retryWaitsQueued(queued, 1)).toBe(false);
    expect(retryWaitsQueued({ kind: "message", queueName: undefined }, 0)).toBe(false);
    expect(parentReleasable({ state: "HELD" }, 0)).toBe(true);
    expect(parentReleasable({ state: "HELD" }, 1)).toBe(false);
    expect(parentReleasable({ state: "ACTIVE" }, 0)).toBe(false);
    expect(parentReleasable(undefined, 0)).toBe(false);
  });

  it("lists each queue of a set of messages once", () => {
    const m = (accountId: string, queueName?: string) => ({ kind: "message" as const, accountId, queueName });
    const touched = queuesOf([m("a", "q"), m("a", "q"), m("b", "q"), m("a"), m("a", "r")]);
    expect([...touched.values()]).toEqual([
      { accountId: "a", queueName: "q" },
      { accountId: "b", queueName: "q" },
      { accountId: "a", queueName: "r" },
    ]);
  });
});
