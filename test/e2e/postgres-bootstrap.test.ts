import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { admin, adminEnv, manage } from "../helpers/management.js";
import { type FreshDatabase, freshDatabase, postgresAvailable } from "../helpers/postgres.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Several nodes started together on one EMPTY PostgreSQL database (containers started at once): they must end up
 * with one default messaging account and one operator, whatever they were configured with.
 */
describe.runIf(postgresAvailable())("several nodes bootstrapping one empty PostgreSQL database", () => {
  let db: FreshDatabase;
  const servers: TestServer[] = [];

  beforeEach(async () => {
    db = await freshDatabase();
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.stop();
    await db.drop();
  });

  const startNodes = async (env: Record<string, string>) => {
    const started = await Promise.all(
      [0, 1, 2].map(() => startTestServer({ env: { DATABASE_URL: db.url, ...env } })),
    );
    servers.push(...started);
    return started;
  };

  const count = async (table: string) => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      return Number((await client.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
    } finally {
      await client.end();
    }
  };

  it("without configured credentials: one account, generated and printed by one node, used by all", async () => {
    const nodes = await startNodes({ FERRY_TOKEN: "", FERRY_CURRENT_SIGNING_KEY: "", FERRY_NEXT_SIGNING_KEY: "" });
    expect(await count("accounts")).toBe(1);
    expect(await count("customers")).toBe(1);
    const boots = nodes.map((n) => n.ferry.bootstrap);
    expect(new Set(boots.map((b) => b.account.id)).size).toBe(1);
    // The secrets shown are the ones that work: exactly one node generated (and prints) them.
    const printers = boots.filter((b) => b.generated.token !== undefined);
    expect(printers).toHaveLength(1);
    expect(printers[0]!.generated.token).toBe(boots[0]!.account.token);
    expect(boots.filter((b) => b.generated.adminApiKey !== undefined)).toHaveLength(1);
    for (const node of nodes) {
      const keys = await node.call("GET", "/v2/keys", { token: printers[0]!.generated.token! });
      expect(keys.status).toBe(200);
      expect(keys.json.current).toBe(printers[0]!.generated.currentSigningKey);
    }
  });

  it("with the same configured credentials: one account and one operator that every node authenticates", async () => {
    const nodes = await startNodes({ ...adminEnv });
    expect(await count("accounts")).toBe(1);
    expect(await count("customers")).toBe(1);
    for (const node of nodes) {
      expect(node.ferry.bootstrap.generated).toEqual({});
      expect((await node.call("GET", "/v2/keys")).status).toBe(200);
      const user = await manage(node, "GET", "/v2/msgsvc/user", { auth: admin });
      expect(user.status).toBe(200);
      expect(user.json.customer_id).toBe(admin.email);
    }
  });
});
