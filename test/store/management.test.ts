import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newMessageId } from "../../src/domain/ids.js";
import type { SearchIndex } from "../../src/domain/search.js";
import type { Store } from "../../src/store/store.js";
import { postgresAvailable } from "../helpers/postgres.js";
import { adapters, type OpenedStore, openPostgresTestStores } from "./adapters.js";
import { anAccount as account, NOW, seedUsage } from "./factories.js";

/** The management capability's storage (customers, account fields, search indexes, usage, daily quota). */
const DAY_MS = 86_400_000;
const DAY = NOW - (NOW % DAY_MS);

const customer = (email: string, createdAt = NOW) => ({ email, apiKeyHash: `hash-of-${email}`, createdAt });

function searchIndex(id: string, customerId: string, creationTime = NOW / 1000): SearchIndex {
  return {
    id,
    customerId,
    name: `index-${id}`,
    endpoint: `https://${id}.search.local`,
    type: "payg",
    region: "eu-west-1",
    partnerEmail: "",
    token: `tok-${id}`,
    readOnlyToken: `ro-${id}`,
    inputEnrichmentEnabled: id.endsWith("e"),
    creationTime,
  };
}

for (const adapter of adapters) {
  describe(`management store: ${adapter.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    let opened: OpenedStore;
    beforeEach(async () => {
      opened = await adapter.open();
      ({ store, dispose } = opened);
    });
    afterEach(async () => {
      await dispose();
    });

    it("picks the first account and customer by insertion order when they were created in the same millisecond", async () => {
      // Ids and e-mails sort the other way round: only the insertion order can make "z" the first.
      for (const id of ["z", "m", "a"]) await store.accountInsert({ account: account(id) });
      expect((await store.accountFirst())?.id).toBe("z");
      await store.accountInsert({ account: account("earlier", { createdAt: NOW - 1 }) });
      expect((await store.accountFirst())?.id).toBe("earlier");

      expect(await store.customerFirst()).toBeUndefined();
      for (const email of ["z@test.local", "a@test.local"]) {
        expect(await store.customerInsert({ customer: customer(email) })).toBe(true);
      }
      expect((await store.customerFirst())?.email).toBe("z@test.local");
      // Renaming the operator keeps it the first customer.
      await store.customerUpdate({ email: "z@test.local", patch: { email: "0@test.local" } });
      expect((await store.customerFirst())?.email).toBe("0@test.local");
    });

    it("inserts the default account only while no account exists", async () => {
      expect(await store.accountInsertDefault({ account: account("default") })).toBe(true);
      expect(await store.accountInsertDefault({ account: account("second") })).toBe(false);
      expect(await store.accountGet({ id: "second" })).toBeUndefined();
      expect((await store.accountFirst())?.id).toBe("default");
    });

    it("stores every management field of an account, with the defaults of a fresh account", async () => {
      await store.accountInsert({ account: account("plain") });
      expect(await store.accountGet({ id: "plain" })).toEqual({
        ...account("plain"),
        lastPlanUpgradeTime: 0,
        reservedPrice: 0,
        prodPackEnabled: false,
        prometheusEnabled: false,
        region: "eu-central-1",
        budget: 0,
        createdBy: "",
      });
      const full = account("full", {
        modifyingState: "upgrading",
        lastPlanUpgradeTime: 1_700_000_000,
        reservedPrice: 12.5,
        prodPackEnabled: true,
        prometheusEnabled: true,
        enterpriseId: "acme",
        region: "us-east-1",
        budget: 300,
        createdBy: "ops@test.local",
        readOnlyToken: "read-only-full",
      });
      await store.accountInsert({ account: full });
      expect(await store.accountGetByToken({ token: full.token })).toEqual(full);
      // Either token finds the account; the caller tells them apart by comparing with `token`.
      expect(await store.accountGetByToken({ token: "read-only-full" })).toEqual(full);
      expect(await store.accountGetByToken({ token: "read-only-other" })).toBeUndefined();
      const rotatedReadOnly = await store.accountUpdate({ id: "full", patch: { readOnlyToken: "read-only-new" } });
      expect(rotatedReadOnly.readOnlyToken).toBe("read-only-new");
      expect(await store.accountGetByToken({ token: "read-only-full" })).toBeUndefined();
      expect((await store.accountGetByToken({ token: "read-only-new" }))?.id).toBe("full");
      await store.accountUpdate({ id: "full", patch: { readOnlyToken: "read-only-full" } });

      const updated = await store.accountUpdate({
        id: "plain",
        patch: {
          customerId: "new@test.local",
          modifyingState: "downgrading",
          lastPlanUpgradeTime: 1_750_000_000,
          reservedPrice: 0.25,
          prodPackEnabled: true,
          prometheusEnabled: true,
          budget: 42,
          plan: "free",
        },
      });
      expect(updated).toMatchObject({
        customerId: "new@test.local",
        modifyingState: "downgrading",
        lastPlanUpgradeTime: 1_750_000_000,
        reservedPrice: 0.25,
        prodPackEnabled: true,
        prometheusEnabled: true,
        budget: 42,
        plan: "free",
      });
      expect(await store.accountGet({ id: "plain" })).toEqual(updated);
    });

    it("inserts a customer with its first account at once, refuses a known e-mail, and lists accounts oldest first", async () => {
      const owner = "owner@test.local";
      expect(await store.customerInsert({ customer: customer(owner), account: account("one") })).toBe(true);
      expect(await store.customerGet({ email: owner })).toEqual(customer(owner));
      // The same e-mail again: nothing is written, not even the account that came with it.
      expect(await store.customerInsert({ customer: customer(owner, NOW + 5), account: account("dup") })).toBe(false);
      expect(await store.accountGet({ id: "dup" })).toBeUndefined();
      expect(await store.customerGet({ email: owner })).toEqual(customer(owner));

      await store.accountInsert({ account: account("two", { createdAt: NOW }) });
      await store.accountInsert({ account: account("zero", { createdAt: NOW - 10 }) });
      await store.accountInsert({ account: account("other", { customerId: "else@test.local" }) });
      const listed = await store.accountListByCustomer({ customerId: owner });
      expect(listed.map((a) => a.id)).toEqual(["zero", "one", "two"]);
      expect(await store.accountListByCustomer({ customerId: "nobody@test.local" })).toEqual([]);
    });

    it("changes a customer's key, and moves its accounts and search indexes with a new e-mail", async () => {
      const old = "old@test.local";
      await store.customerInsert({ customer: customer(old), account: account("mine", { customerId: old }) });
      await store.accountInsert({ account: account("theirs", { customerId: "else@test.local" }) });
      await store.searchIndexInsert({ index: searchIndex("idx", old) });

      const rekeyed = await store.customerUpdate({ email: old, patch: { apiKeyHash: "new-hash" } });
      expect(rekeyed).toEqual({ ...customer(old), apiKeyHash: "new-hash" });

      const renamed = await store.customerUpdate({ email: old, patch: { email: "new@test.local" } });
      expect(renamed).toEqual({ email: "new@test.local", apiKeyHash: "new-hash", createdAt: NOW });
      expect(await store.customerGet({ email: old })).toBeUndefined();
      expect((await store.accountGet({ id: "mine" }))?.customerId).toBe("new@test.local");
      expect((await store.accountGet({ id: "theirs" }))?.customerId).toBe("else@test.local");
      expect(await store.searchIndexList({ customerId: old })).toEqual([]);
      expect((await store.searchIndexList({ customerId: "new@test.local" })).map((i) => i.id)).toEqual(["idx"]);
      await expect(store.customerUpdate({ email: old, patch: { apiKeyHash: "x" } })).rejects.toThrow(/not found/);
    });

    it("keeps search indexes per customer: insert, get, list in creation order, update, delete", async () => {
      const mine = "mine@test.local";
      await store.searchIndexInsert({ index: searchIndex("later", mine, 200) });
      await store.searchIndexInsert({ index: searchIndex("first-e", mine, 100) });
      await store.searchIndexInsert({ index: searchIndex("foreign", "other@test.local", 50) });

      expect(await store.searchIndexGet({ customerId: mine, id: "first-e" })).toEqual(
        searchIndex("first-e", mine, 100),
      );
      expect(await store.searchIndexGet({ customerId: mine, id: "foreign" })).toBeUndefined();
      expect((await store.searchIndexList({ customerId: mine })).map((i) => i.id)).toEqual(["first-e", "later"]);

      const renamed = await store.searchIndexUpdate({ customerId: mine, id: "later", patch: { name: "renamed" } });
      expect(renamed).toEqual({ ...searchIndex("later", mine, 200), name: "renamed" });
      const rotated = await store.searchIndexUpdate({
        customerId: mine,
        id: "later",
        patch: { token: "t2", readOnlyToken: "r2" },
      });
      expect(rotated).toMatchObject({ name: "renamed", token: "t2", readOnlyToken: "r2" });
      expect(await store.searchIndexUpdate({ customerId: mine, id: "later", patch: {} })).toEqual(rotated);
      expect(
        await store.searchIndexUpdate({ customerId: mine, id: "foreign", patch: { name: "stolen" } }),
      ).toBeUndefined();
      expect((await store.searchIndexGet({ customerId: "other@test.local", id: "foreign" }))?.name).toBe(
        "index-foreign",
      );

      expect(await store.searchIndexDelete({ customerId: mine, id: "foreign" })).toBe(false);
      expect(await store.searchIndexDelete({ customerId: mine, id: "later" })).toBe(true);
      expect(await store.searchIndexDelete({ customerId: mine, id: "later" })).toBe(false);
      expect((await store.searchIndexList({ customerId: mine })).map((i) => i.id)).toEqual(["first-e"]);
    });

    it("sums the per-minute usage counters into buckets, per metric, within the window only", async () => {
      const from = NOW - (NOW % 3_600_000);
      const add = (minute: number, metric: "requests" | "delivered", count: number, bytes: number) =>
        seedUsage(opened, { accountId: "acc", now: from + minute * 60_000 + 1234, metric, count, bytes });
      await add(0, "requests", 2, 20);
      await add(0, "requests", 1, 5);
      await add(59, "requests", 4, 40);
      await add(60, "requests", 8, 80);
      await add(61, "delivered", 3, 30);
      await add(120, "requests", 100, 1000); // outside the two buckets
      await add(-1, "requests", 100, 1000); // before the window
      await seedUsage(opened, { accountId: "other", now: from, metric: "requests", count: 7, bytes: 7 });

      const buckets = await store.usageBuckets({ accountId: "acc", from, stepMs: 3_600_000, count: 2 });
      const sorted = [...buckets].sort((x, y) => x.bucket - y.bucket || x.metric.localeCompare(y.metric));
      expect(sorted).toEqual([
        { bucket: 0, metric: "requests", count: 7, bytes: 65 },
        { bucket: 1, metric: "delivered", count: 3, bytes: 30 },
        { bucket: 1, metric: "requests", count: 8, bytes: 80 },
      ]);
    });

    it("counts an account's dead letter queue entries", async () => {
      expect(await store.accountDlqCount({ accountId: "acc" })).toBe(0);
      for (const accountId of ["acc", "acc", "other"]) {
        const id = newMessageId(NOW);
        await store.messageInsertMany({
          items: [
            {
              message: {
                id,
                accountId,
                kind: "message",
                state: "CREATED",
                url: "http://127.0.0.1:9/x",
                body: undefined,
                spec: { method: "POST", headers: {}, retries: 0 },
                createdAt: NOW,
                notBefore: 0,
                dueAt: NOW,
                retried: 0,
              },
            },
          ],
          now: NOW,
          dedupWindowMs: 0,
        });
        const [leased] = await store.messageLeaseDue({ now: NOW, limit: 1, owner: "n", leaseUntil: NOW + 1000 });
        await store.messageFinish({
          message: leased!,
          owner: "n",
          now: NOW,
          outcome: { kind: "failed", dlqId: `dlq-${id}`, response: { status: 500, headers: {}, body: Buffer.alloc(0) } },
          logs: [],
          newMessages: [],
        });
      }
      expect(await store.accountDlqCount({ accountId: "acc" })).toBe(2);
      expect(await store.accountDlqCount({ accountId: "other" })).toBe(1);
    });

    it("consumes the daily quota all-or-nothing up to the limit, per account and UTC day", async () => {
      const consume = (n: number, limit = 5, day = DAY, accountId = "acc") =>
        store.quotaConsume({ accountId, day, n, limit });
      expect(await consume(6)).toEqual({ allowed: false, used: 0 });
      expect(await consume(2)).toEqual({ allowed: true, used: 2 });
      expect(await consume(2)).toEqual({ allowed: true, used: 4 });
      // Two more would pass the limit: refused whole, nothing counted.
      expect(await consume(2)).toEqual({ allowed: false, used: 4 });
      expect(await consume(1)).toEqual({ allowed: true, used: 5 });
      expect(await consume(1)).toEqual({ allowed: false, used: 5 });
      // A higher limit (a plan upgrade) lets more in the same day.
      expect(await consume(1, 6)).toEqual({ allowed: true, used: 6 });
      // Another account and the next day count from zero.
      expect(await consume(1, 5, DAY, "other")).toEqual({ allowed: true, used: 1 });
      expect(await consume(5, 5, DAY + DAY_MS)).toEqual({ allowed: true, used: 5 });
    });

    it("counts concurrent quota calls exactly: never more allowed than the limit, refusals all-or-nothing", async () => {
      const calls = Array.from({ length: 40 }, (_, i) =>
        store.quotaConsume({ accountId: "acc", day: DAY, n: 1 + (i % 3), limit: 50 }),
      );
      const results = await Promise.all(calls);
      const allowed = results
        .map((r, i) => (r.allowed ? 1 + (i % 3) : 0))
        .reduce((sum, n) => sum + n, 0);
      expect(allowed).toBeLessThanOrEqual(50);
      // Everything asked for was 80; whatever was refused could not have fitted when it was decided.
      expect(allowed).toBeGreaterThanOrEqual(48);
      for (const r of results) expect(r.used).toBeLessThanOrEqual(50);
      const rest = 50 - allowed;
      if (rest > 0) expect(await store.quotaConsume({ accountId: "acc", day: DAY, n: rest, limit: 50 })).toEqual({
        allowed: true,
        used: 50,
      });
      expect(await store.quotaConsume({ accountId: "acc", day: DAY, n: 1, limit: 50 })).toEqual({
        allowed: false,
        used: 50,
      });
    });
  });
}

describe.runIf(postgresAvailable())("management store: several PostgreSQL nodes", () => {
  it("holds max_requests_per_day exactly when three nodes consume the same account's quota at once", async () => {
    const { store, more, dispose } = await openPostgresTestStores();
    try {
      const nodes = [store, await more(), await more()];
      const limit = 100;
      const calls = nodes.flatMap((node) =>
        Array.from({ length: 60 }, () => node.quotaConsume({ accountId: "acc", day: DAY, n: 1, limit })),
      );
      const results = await Promise.all(calls);
      expect(results.filter((r) => r.allowed)).toHaveLength(limit);
      expect(new Set(results.filter((r) => r.allowed).map((r) => r.used)).size).toBe(limit);
      expect(results.filter((r) => !r.allowed).every((r) => r.used === limit)).toBe(true);
    } finally {
      await dispose();
    }
  });

  it("creates one default account when several nodes start on an empty database at the same time", async () => {
    const { store, more, dispose } = await openPostgresTestStores();
    try {
      const nodes = [store, await more(), await more()];
      const inserted = await Promise.all(
        nodes.map((node, i) => node.accountInsertDefault({ account: account(`node-${i}`) })),
      );
      expect(inserted.filter(Boolean)).toHaveLength(1);
      for (const node of nodes) expect((await node.accountFirst())?.id).toBe(`node-${inserted.indexOf(true)}`);
      expect(await store.accountGet({ id: `node-${(inserted.indexOf(true) + 1) % 3}` })).toBeUndefined();
    } finally {
      await dispose();
    }
  });

  it("creates the operator once when several nodes bootstrap it at the same time", async () => {
    const { store, more, dispose } = await openPostgresTestStores();
    try {
      const nodes = [store, await more(), await more()];
      const inserted = await Promise.all(
        nodes.map((node, i) =>
          node.customerInsert({ customer: { email: "admin@test.local", apiKeyHash: `hash-${i}`, createdAt: NOW } }),
        ),
      );
      expect(inserted.filter(Boolean)).toHaveLength(1);
      const winner = inserted.indexOf(true);
      for (const node of nodes) expect((await node.customerFirst())?.apiKeyHash).toBe(`hash-${winner}`);
    } finally {
      await dispose();
    }
  });
});
