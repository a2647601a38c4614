import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createdLogEntry, type LogEntry, logEntry } from "../../src/domain/log.js";
import type { Message, NewMessage } from "../../src/domain/message.js";
import type { MessageListState } from "../../src/domain/message-list-state.js";
import type { Outcome } from "../../src/domain/records.js";
import type { LogRecord, Store } from "../../src/store/store.js";
import { adapters, type OpenedStore } from "./adapters.js";
import { aMessage, anAccount, NOW } from "./factories.js";

/**
 * The message row as the message's lifecycle (docs/states.md "The message row"): the log list derives CREATED, the
 * first ACTIVE and DELIVERED from it, in the same order and with the same content the written entries had, and
 * the row stays after it ends until retention.
 */
const account = anAccount("acc-row", { token: "t-row" });

const message = (over: Partial<NewMessage> & { at?: number } = {}): NewMessage =>
  aMessage(account.id, {
    body: Buffer.from("hello"),
    spec: { method: "PUT", headers: { "X-A": ["1"] }, retries: 3, labels: ["red"], timeoutMs: 5000 },
    ...over,
  });

/** What a page shows of an entry, seq aside. */
const shown = (e: LogRecord) => ({
  messageId: e.messageId,
  state: e.state,
  time: e.time,
  url: e.url,
  labels: e.labels,
  details: e.details,
  created: e.created,
});

/** The entries the layout before migration 060 wrote, as the log list showed them. */
const written = (entries: LogEntry[], created: Map<string, LogEntry>) =>
  entries.map((e) => ({
    messageId: e.messageId,
    state: e.state,
    time: e.time,
    url: e.url,
    labels: e.labels,
    details: e.details,
    created: e.state === "CREATED" ? undefined : created.get(e.messageId)!.details,
  }));

for (const adapter of adapters) {
  describe(`the message row: ${adapter.name}`, () => {
    let opened: OpenedStore;
    let store: Store;
    beforeEach(async () => {
      opened = await adapter.open();
      store = opened.store;
      await store.accountInsert({ account });
    });
    afterEach(() => opened.dispose());

    const insert = (m: NewMessage, now: number, leaseOwner?: string) =>
      store.messageInsertMany({
        items: [{ message: m, ...(leaseOwner ? { leaseOwner, leaseUntil: now + 60_000 } : {}) }],
        now,
        dedupWindowMs: 0,
      });
    const lease = async (now: number) =>
      (await store.messageLeaseDue({ now, limit: 1, owner: "A", leaseUntil: now + 60_000 }))[0]!;
    const finish = (m: Message, now: number, outcome: Outcome, logs: LogEntry[]) =>
      store.messageFinish({ message: m, owner: "A", now, outcome, logs, newMessages: [] });
    const list = async (order: "latestFirst" | "earliestFirst", filter = {}, count = 100) =>
      (await store.logList({ accountId: account.id, filter, count, order })).logs;
    const row = async (id: string) => {
      const [r] = await opened.sql<Record<string, unknown>>(
        "SELECT state, outcome, last_status, attempts, first_leased_at, finished_at FROM messages WHERE id = $1",
        [id],
      );
      // BIGINTs come back as strings from a raw PostgreSQL connection.
      return r && Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === "string" && /^\d+$/.test(v) ? Number(v) : v]));
    };

    /** Two messages, one retried once, interleaved; returns the entries the old layout wrote, in order. */
    const lifecycle = async () => {
      // Every insert path stamps createdAt with the insert's clock, which is the CREATED entry's time.
      const [a, b] = [message(), message({ at: NOW + 1, spec: { method: "POST", headers: {}, retries: 0 } })];
      const [ra] = await insert(a, NOW);
      const [rb] = await insert(b, NOW + 1);
      const la = await lease(NOW + 2);
      const lb = await lease(NOW + 3);
      expect([la.id, lb.id]).toEqual([a.id, b.id]);
      const bDelivered = logEntry(lb, "DELIVERED", NOW + 4, { responseStatus: 200 });
      expect(await finish(lb, NOW + 4, { kind: "delivered" }, [bDelivered])).toBe(true);
      const error = logEntry(la, "ERROR", NOW + 5, {
        responseStatus: 500,
        responseHeaders: { "Content-Type": ["text/plain"] },
        responseBody: Buffer.from("no").toString("base64"),
        error: "destination answered 500",
      });
      const retry = logEntry(la, "RETRY", NOW + 5, { nextDeliveryTime: NOW + 6 });
      expect(await finish(la, NOW + 5, { kind: "retry", dueAt: NOW + 6 }, [error, retry])).toBe(true);
      const again = await lease(NOW + 6);
      expect(again.id).toBe(a.id);
      const aDelivered = logEntry(again, "DELIVERED", NOW + 7, { responseStatus: 201 });
      expect(await finish(again, NOW + 7, { kind: "delivered" }, [aDelivered])).toBe(true);
      const createdA = createdLogEntry(ra!.message!, NOW);
      const createdB = createdLogEntry(rb!.message!, NOW + 1);
      const entries = [
        createdA,
        createdB,
        logEntry(la, "ACTIVE", NOW + 2),
        logEntry(lb, "ACTIVE", NOW + 3),
        bDelivered,
        error,
        retry,
        logEntry(again, "ACTIVE", NOW + 6),
        aDelivered,
      ];
      return { a, b, entries, created: new Map([[a.id, createdA], [b.id, createdB]]) };
    };

    it("shows the entries the old layout wrote, in the same order, with the CREATED details merged in", async () => {
      const { entries, created } = await lifecycle();
      expect((await list("earliestFirst")).map(shown)).toEqual(written(entries, created));
      expect((await list("latestFirst")).map(shown)).toEqual(written(entries, created).reverse());
    });

    it("pages through the union with the cursor, each entry once", async () => {
      const { entries } = await lifecycle();
      for (const order of ["latestFirst", "earliestFirst"] as const) {
        const seen: LogRecord[] = [];
        let cursor: string | undefined;
        for (let i = 0; i < 20; i++) {
          const page = await store.logList({ accountId: account.id, filter: {}, count: 2, order, ...(cursor ? { cursor } : {}) });
          seen.push(...page.logs);
          cursor = page.cursor;
          if (cursor === undefined) break;
        }
        expect(seen).toEqual(await list(order));
        expect(new Set(seen.map((e) => e.seq)).size).toBe(entries.length);
      }
    });

    it("applies the log filters to the derived entries too", async () => {
      const { a, b, entries, created } = await lifecycle();
      const expected = written(entries, created);
      const only = (pick: (e: (typeof expected)[number]) => boolean) => expected.filter(pick);
      expect((await list("earliestFirst", { state: ["DELIVERED"] })).map(shown)).toEqual(
        only((e) => e.state === "DELIVERED"),
      );
      expect((await list("earliestFirst", { state: ["CREATED", "ERROR"] })).map(shown)).toEqual(
        only((e) => e.state === "CREATED" || e.state === "ERROR"),
      );
      expect((await list("earliestFirst", { messageIds: [a.id] })).map(shown)).toEqual(only((e) => e.messageId === a.id));
      expect((await list("earliestFirst", { fromDate: NOW + 3, toDate: NOW + 6 })).map(shown)).toEqual(
        only((e) => e.time >= NOW + 3 && e.time <= NOW + 6),
      );
      expect((await list("earliestFirst", { label: ["red"] })).map(shown)).toEqual(only((e) => e.messageId === a.id));
      expect((await list("earliestFirst", { messageIds: [b.id], state: ["ACTIVE"] })).map((e) => e.time)).toEqual([
        NOW + 3,
      ]);
    });

    it("keeps the row after delivery with its lifecycle, out of every read of live messages", async () => {
      const { a, b } = await lifecycle();
      expect(await store.messageGet({ accountId: account.id, id: a.id })).toBeUndefined();
      expect(await row(a.id)).toMatchObject({
        state: "DELIVERED",
        outcome: "DELIVERED",
        last_status: 201,
        attempts: 2,
        first_leased_at: NOW + 2,
        finished_at: NOW + 7,
      });
      expect(await row(b.id)).toMatchObject({ state: "DELIVERED", last_status: 200, attempts: 1 });
      expect(await store.messageLeaseDue({ now: NOW + 100, limit: 10, owner: "A", leaseUntil: NOW + 1000 })).toEqual([]);
      expect(await store.messageCancel({ accountId: account.id, now: NOW + 100, filter: {} })).toBe(0);
      expect((await store.accountActivity({ accountId: account.id, day: 0 })).inFlight).toBe(0);
    });

    it("lists one row per message with its state, attempts and last status, paged by arrival", async () => {
      const { a, b } = await lifecycle();
      const later = message({ at: NOW + 10, dueAt: NOW + 3_600_000 });
      await insert(later, NOW + 10);
      const all = await store.messageRowList({ now: NOW + 100, accountId: account.id, filter: {}, count: 10, order: "earliestFirst" });
      expect(all.cursor).toBeUndefined();
      expect(all.rows.map((r) => [r.id, r.state, r.outcome, r.attempts, r.lastStatus, r.finishedAt])).toEqual([
        [a.id, "DELIVERED", "DELIVERED", 2, 201, NOW + 7],
        [b.id, "DELIVERED", "DELIVERED", 1, 200, NOW + 4],
        [later.id, "CREATED", undefined, 0, undefined, undefined],
      ]);
      expect(all.rows[0]).toMatchObject({ url: a.url, labels: ["red"], firstLeasedAt: NOW + 2, bodySize: 5, createdAt: NOW });
      expect(all.rows[0]).not.toHaveProperty("body");
      const first = await store.messageRowList({ now: NOW + 100, accountId: account.id, filter: {}, count: 2, order: "latestFirst" });
      expect(first.rows.map((r) => r.id)).toEqual([later.id, b.id]);
      const second = await store.messageRowList({
        now: NOW + 100,
        accountId: account.id,
        filter: {},
        count: 2,
        order: "latestFirst",
        cursor: first.cursor!,
      });
      expect(second.rows.map((r) => r.id)).toEqual([a.id]);
      expect(second.cursor).toBeUndefined();
      const live = await store.messageRowList({ now: NOW + 100, accountId: account.id, filter: { state: ["CREATED"] }, count: 10, order: "latestFirst" });
      expect(live.rows.map((r) => r.id)).toEqual([later.id]);
      // The list's states (src/domain/message-list-state.ts): a created row due later waits for its delay.
      const byListState = async (listState: MessageListState[], now: number) =>
        (await store.messageRowList({ now, accountId: account.id, filter: { listState }, count: 10, order: "earliestFirst" })).rows.map((r) => r.id);
      expect(await byListState(["DELAYED"], NOW + 100)).toEqual([later.id]);
      expect(await byListState(["CREATED"], NOW + 100)).toEqual([]);
      expect(await byListState(["CREATED"], NOW + 3_600_010)).toEqual([later.id]);
      expect(await byListState(["DELIVERED", "FAILED"], NOW + 100)).toEqual([a.id, b.id]);
      expect(all.rows.every((r) => r.cancelRequested === false)).toBe(true);
      const other = await store.messageRowList({ now: NOW + 100, accountId: "other", filter: {}, count: 10, order: "latestFirst" });
      expect(other.rows).toEqual([]);
    });

    it("derives CREATED and ACTIVE of a fast-path publish at one time, CREATED first", async () => {
      const m = message();
      const [r] = await insert(m, NOW, "A");
      expect(r!.message!.state).toBe("ACTIVE");
      const delivered = logEntry(r!.message!, "DELIVERED", NOW + 1, { responseStatus: 204 });
      expect(await finish(r!.message!, NOW + 1, { kind: "delivered" }, [delivered])).toBe(true);
      const createdEntry = createdLogEntry(r!.message!, NOW);
      expect((await list("earliestFirst")).map(shown)).toEqual(
        written([createdEntry, logEntry(r!.message!, "ACTIVE", NOW), delivered], new Map([[m.id, createdEntry]])),
      );
    });

    it("keeps failed and cancelled rows too, with their written FAILED and CANCELED entries", async () => {
      const f = message({ spec: { method: "POST", headers: {}, retries: 0 } });
      const c = message({ dueAt: NOW + 60_000 });
      await insert(f, NOW);
      await insert(c, NOW);
      const lf = await lease(NOW + 1);
      const failed = logEntry(lf, "FAILED", NOW + 2, { responseStatus: 400, error: "destination answered 400", dlqId: "dlq_1" });
      const outcome: Outcome = {
        kind: "failed",
        dlqId: "dlq_1",
        response: { status: 400, headers: {}, body: Buffer.from("bad") },
      };
      expect(await finish(lf, NOW + 2, outcome, [failed])).toBe(true);
      expect(await store.messageCancel({ accountId: account.id, now: NOW + 3, filter: { messageIds: [c.id] } })).toBe(1);
      expect(await row(f.id)).toMatchObject({ state: "FAILED", outcome: "FAILED", last_status: 400, attempts: 1 });
      expect(await row(c.id)).toMatchObject({ state: "CANCELED", outcome: "CANCELED", attempts: 0, finished_at: NOW + 3 });
      const dlq = await store.dlqList({ accountId: account.id, filter: {}, count: 10, order: "earliestFirst" });
      expect(dlq.entries.map((e) => e.message.id)).toEqual([
        f.id,
      ]);
      expect((await list("earliestFirst", { messageIds: [c.id] })).map((e) => e.state)).toEqual([
        "CREATED",
        "CANCEL_REQUESTED",
        "CANCELED",
      ]);
    });

    it("retention deletes ended rows only, and hides derived entries older than the last log cutoff", async () => {
      const { a, b } = await lifecycle();
      const live = message({ at: NOW + 1, dueAt: NOW + 3_600_000 });
      await insert(live, NOW + 1);
      expect(await store.retentionDelete({ table: "messages", before: NOW + 5, limit: 100 })).toBe(1); // b
      expect(await row(b.id)).toBeUndefined();
      expect(await store.retentionDelete({ table: "messages", before: NOW + 7, limit: 100 })).toBe(0);
      expect(await store.retentionDelete({ table: "messages", before: NOW + 8, limit: 100 })).toBe(1); // a
      expect(await row(a.id)).toBeUndefined();
      expect(await store.retentionDelete({ table: "messages", before: NOW + 1_000_000, limit: 100 })).toBe(0);
      expect(await store.messageGet({ accountId: account.id, id: live.id })).toBeDefined();
      // The ended rows' derived entries went with them; their written ones go with log retention (same cutoff).
      const states = async () => (await list("earliestFirst")).map((e) => [e.messageId === a.id ? "a" : "live", e.state]);
      expect(await states()).toEqual([
        ["a", "ERROR"],
        ["a", "RETRY"],
        ["a", "ACTIVE"],
        ["live", "CREATED"],
      ]);
      // The live message's CREATED entry (at NOW + 1) is past a cutoff after it, as a written entry would be.
      await store.retentionDelete({ table: "logs", before: NOW + 2, limit: 100 });
      expect(await states()).toEqual([
        ["a", "ERROR"],
        ["a", "RETRY"],
        ["a", "ACTIVE"],
      ]);
      await store.retentionDelete({ table: "logs", before: NOW + 8, limit: 100 });
      expect(await list("earliestFirst")).toEqual([]);
      expect(await store.messageGet({ accountId: account.id, id: live.id })).toBeDefined();
    });

    it("writes the entries of a message with Svc-Redact-Fields out, redacted, and lets its row go when it ends", async () => {
      const m = message({
        spec: { method: "POST", headers: { "X-A": ["1"] }, retries: 0, redact: { body: true, allHeaders: true, headers: [] } },
      });
      const [r] = await insert(m, NOW, "A");
      const delivered = logEntry(r!.message!, "DELIVERED", NOW + 1, { responseStatus: 200 });
      expect(await finish(r!.message!, NOW + 1, { kind: "delivered" }, [delivered])).toBe(true);
      expect(await row(m.id)).toBeUndefined();
      const logs = await list("earliestFirst");
      expect(logs.map((e) => e.state)).toEqual(["CREATED", "ACTIVE", "DELIVERED"]);
      expect(logs[0]!.details.body).not.toBe(Buffer.from("hello").toString("base64"));
      expect(logs[0]!.details).toEqual(createdLogEntry(r!.message!, NOW).details);
    });
  });
}
