import { describe, expect, it } from "vitest";
import { planCancel } from "../../src/domain/cancel-plan.js";
import { dedupKeyLive, planInsert, wantsFastPath } from "../../src/domain/insert-plan.js";
import type { NewMessage } from "../../src/domain/message.js";

/**
 * The insert plan (src/domain/insert-plan.ts) without a database; test/store/messages.test.ts runs it on both
 * stores.
 */
const NOW = 1_800_000_000_000;
const message = (over: Partial<NewMessage> = {}): NewMessage => ({
  id: "msg_1",
  accountId: "acc",
  kind: "message",
  state: "CREATED",
  url: "http://127.0.0.1:9/x",
  body: Buffer.from("hello"),
  spec: { method: "POST", headers: {}, retries: 3 },
  createdAt: NOW,
  notBefore: 0,
  dueAt: NOW,
  retried: 0,
  ...over,
});

describe("the insert plan", () => {
  it("stores a message as built, its row deriving CREATED, and counts one request of its size", () => {
    const plan = planInsert({ message: message() }, false, NOW);
    expect(plan.message).toMatchObject({ state: "CREATED", cancelRequested: false, derivedLog: true });
    expect(plan.message).not.toHaveProperty("leaseOwner");
    expect(plan.message).not.toHaveProperty("firstLeasedAt");
    expect([plan.leaseOwner, plan.leaseUntil]).toEqual([null, null]);
    // The row stands for the CREATED entry (docs/states.md "The message row"): nothing is written to the log.
    expect(plan.logs).toEqual([]);
    expect(plan.usage).toEqual({ accountId: "acc", count: 1, bytes: 5 });
  });

  it("through the fast path: stored ACTIVE, leased to the publishing node, its start logged at once", () => {
    const item = { message: message(), leaseOwner: "node-a", leaseUntil: NOW + 60_000 };
    expect(wantsFastPath(item)).toBe(true);
    const plan = planInsert(item, true, NOW);
    expect(plan.message).toMatchObject({ state: "ACTIVE", leaseOwner: "node-a", leaseUntil: NOW + 60_000 });
    expect([plan.leaseOwner, plan.leaseUntil]).toEqual(["node-a", NOW + 60_000]);
    // Its first lease is stamped on the row, which then stands for the ACTIVE entry too.
    expect(plan.message.firstLeasedAt).toBe(NOW);
    expect(plan.logs).toEqual([]);
  });

  it("with Svc-Redact-Fields, the entries are written out (redacted) and the row does not derive them", () => {
    const redacted = message({ spec: { method: "POST", headers: {}, retries: 3, redact: { body: true, allHeaders: false, headers: [] } } });
    const plan = planInsert({ message: redacted, leaseOwner: "node-a", leaseUntil: NOW + 1 }, true, NOW);
    expect(plan.message).not.toHaveProperty("derivedLog");
    expect(plan.message).not.toHaveProperty("firstLeasedAt");
    expect(plan.logs.map((l) => [l.state, l.time])).toEqual([
      ["CREATED", NOW],
      ["ACTIVE", NOW],
    ]);
    expect(plan.logs[0]!.details.body).not.toBe(Buffer.from("hello").toString("base64"));
  });

  it("refused by the gate (or not asked for), a message waits for a claim; a queued one stays QUEUED", () => {
    const refused = planInsert({ message: message(), leaseOwner: "node-a", leaseUntil: NOW + 1 }, false, NOW);
    expect(refused.message.state).toBe("CREATED");
    expect(refused.message).not.toHaveProperty("firstLeasedAt");
    expect(wantsFastPath({ message: message() })).toBe(false);
    expect(planInsert({ message: message() }, true, NOW).message.state).toBe("CREATED");
    const queued = planInsert({ message: message({ state: "QUEUED", queueName: "q" }) }, false, NOW);
    expect(queued.message.state).toBe("QUEUED");
    expect(planInsert({ message: message({ body: undefined }) }, false, NOW).usage.bytes).toBe(0);
  });

  it("copies every field of the message it stores, and leaves absent ones absent", () => {
    // Required<>: a field added to NewMessage must be added here, and then to storedMessage (insert-plan.ts), which
    // copies field by field.
    const full: Required<NewMessage> = {
      ...message(),
      parentId: "msg_0",
      topicName: "topic",
      endpointName: "endpoint",
      queueName: "queue",
      scheduleId: "scd_1",
      callerIp: "127.0.0.1",
      dedupId: "dedup",
    };
    for (const fast of [false, true]) {
      const stored = planInsert({ message: full, leaseOwner: "node-a", leaseUntil: NOW + 1 }, fast, NOW).message;
      for (const [key, value] of Object.entries(full)) {
        expect(stored[key as keyof typeof stored], key).toBe(key === "state" && fast ? "ACTIVE" : value);
      }
    }
    const bare = planInsert({ message: message() }, false, NOW).message;
    for (const key of ["parentId", "topicName", "endpointName", "queueName", "scheduleId", "callerIp", "dedupId"]) {
      expect(bare, key).not.toHaveProperty(key);
    }
  });

  it("a deduplication key is live until it expires", () => {
    expect(dedupKeyLive(NOW + 1, NOW)).toBe(true);
    expect(dedupKeyLive(NOW, NOW)).toBe(false);
  });
});

describe("the cancel plan", () => {
  it("logs the request; a message in flight is only marked, any other is cancelled at once", () => {
    const waiting = planCancel({ ...message(), cancelRequested: false }, NOW);
    expect(waiting.inFlight).toBe(false);
    expect(waiting.logs.map((l) => l.state)).toEqual(["CANCEL_REQUESTED", "CANCELED"]);
    const active = planCancel({ ...message(), state: "ACTIVE", cancelRequested: false }, NOW);
    expect(active.inFlight).toBe(true);
    expect(active.logs.map((l) => [l.state, l.time])).toEqual([["CANCEL_REQUESTED", NOW]]);
  });
});
