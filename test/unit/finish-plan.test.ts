import { describe, expect, it } from "vitest";
import { isPlainDelivery } from "../../src/domain/finish-plan.js";
import type { Outcome } from "../../src/domain/records.js";

const delivered: Outcome = { kind: "delivered" };
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
