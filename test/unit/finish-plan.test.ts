import { describe, expect, it } from "vitest";
import { finishKind, isPlainDelivery, planFinishRecords } from "../../src/domain/finish-plan.js";
import { type LogEntry, logEntry } from "../../src/domain/log.js";
import type { Message } from "../../src/domain/message.js";
import type { Outcome } from "../../src/domain/records.js";
import { aMessage } from "../store/factories.js";

const delivered: Outcome = { kind: "delivered" };
const failed: Outcome = { kind: "failed", dlqId: "1-1", response: { status: 500, headers: {}, body: Buffer.alloc(0) } };
const plain = { message: { kind: "message" as const, parentId: undefined, queueName: undefined }, outcome: delivered, newMessages: [] };

describe("isPlainDelivery", () => {
  it("is a delivered message outside a queue, creating nothing and not a callback", () => {
    expect(isPlainDelivery(plain)).toBe(true);
  });

  it("is not when anything else must be looked at", () => {
    expect(isPlainDelivery({ ...plain, outcome: { kind: "retry", dueAt: 1 } })).toBe(false);
    expect(isPlainDelivery({ ...plain, outcome: { kind: "canceled" } })).toBe(false);
    expect(isPlainDelivery({ ...plain, newMessages: [{}] })).toBe(false); // a callback to insert
    expect(isPlainDelivery({ ...plain, message: { ...plain.message, queueName: "q" } })).toBe(false); // a queue slot
    expect(isPlainDelivery({ ...plain, message: { kind: "callback", parentId: "msg_p", queueName: undefined } })).toBe(false);
  });

  it("a callback of a queue message is outside the queue's slots, but still has a parent to release", () => {
    expect(isPlainDelivery({ ...plain, message: { kind: "callback", parentId: "msg_p", queueName: "q" } })).toBe(false);
  });
});

describe("finishKind", () => {
  it("lets a cancel recorded during the attempt win over a retry, never over a delivery or a failure", () => {
    const retry: Outcome = { kind: "retry", dueAt: 1 };
    expect(finishKind(retry, true)).toBe("canceled");
    expect(finishKind(retry, false)).toBe("retry");
    expect(finishKind(delivered, true)).toBe("delivered");
    expect(finishKind(failed, true)).toBe("failed");
  });
});

describe("planFinishRecords", () => {
  const message: Message = { ...aMessage("acc_1", { body: Buffer.from("12345") }), cancelRequested: false };
  const entry = (state: LogEntry["state"]) => logEntry(message, state, 10);

  it("writes the dispatcher's entries and counts a delivery with the body's bytes", () => {
    const logs = [entry("DELIVERED")];
    const records = planFinishRecords({ message, outcome: delivered, logs, now: 10 }, "delivered");
    expect(records.logs).toEqual(logs);
    expect(records.usage).toEqual({ accountId: message.accountId, metric: "delivered", count: 1, bytes: 5 });
  });

  it("counts a retry and a failure without bytes", () => {
    const retry: Outcome = { kind: "retry", dueAt: 20 };
    expect(planFinishRecords({ message, outcome: retry, logs: [], now: 10 }, "retry").usage).toMatchObject({
      metric: "retried",
      bytes: 0,
    });
    expect(planFinishRecords({ message, outcome: failed, logs: [], now: 10 }, "failed").usage.metric).toBe("failed");
  });

  it("a cancel that won over a retry drops the RETRY entry and logs CANCELED instead", () => {
    const retry: Outcome = { kind: "retry", dueAt: 20 };
    const records = planFinishRecords({ message, outcome: retry, logs: [entry("ERROR"), entry("RETRY")], now: 10 }, "canceled");
    expect(records.logs.map((e) => e.state)).toEqual(["ERROR", "CANCELED"]);
    expect(records.usage).toMatchObject({ metric: "canceled", bytes: 0 });
  });

  it("an outcome that was a cancel already keeps its own entries", () => {
    const canceled: Outcome = { kind: "canceled" };
    const records = planFinishRecords({ message, outcome: canceled, logs: [entry("CANCELED")], now: 10 }, "canceled");
    expect(records.logs.map((e) => e.state)).toEqual(["CANCELED"]);
  });
});
