import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plans } from "../../src/domain/plans.js";
import { ACCOUNT_FIELDS, adminEnv, manage } from "../helpers/management.js";
import { Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * `ferry customers create` run as a real child process (`node bin/ferry.mjs`) against the database of a running
 * server (its own DATABASE_URL: SQLite, where WAL and the busy timeout let both write, or PostgreSQL). The printed
 * credentials are then used over HTTP.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
let server: TestServer;
let receiver: Receiver;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function ferry(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(root, "bin/ferry.mjs"), ...args],
      {
        cwd: root,
        timeout: 30_000,
        // Only what the CLI needs: the server's database, nothing of the test runner's environment.
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "",
          DATABASE_URL: server.ferry.services.config.databaseUrl,
          FERRY_LOG_LEVEL: "silent",
          ...env,
        },
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

beforeAll(async () => {
  server = await startTestServer({ env: adminEnv });
  receiver = await Receiver.start();
});
afterAll(async () => {
  await server.stop();
  await receiver.close();
});

describe("ferry customers create", () => {
  it("creates a customer while the server runs and prints credentials that work over HTTP", async () => {
    const run = await ferry(["customers", "create", "--email", "cli@test.local", "--plan", "free"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const printed = JSON.parse(run.stdout);
    expect(Object.keys(printed)).toEqual(["email", "api_key", "account"]);
    expect(printed.email).toBe("cli@test.local");
    expect(printed.api_key).toMatch(/^key_\w{32}$/);
    expect(Object.keys(printed.account)).toEqual(ACCOUNT_FIELDS);
    expect(printed.account).toMatchObject({
      customer_id: "cli@test.local",
      created_by: "cli@test.local",
      active: true,
      state: "active",
      type: "free",
      prometheus_enabled: "false",
      ...plans.free,
    });
    expect(printed.account.id).toMatch(/^[0-9a-f-]{36}$/);

    // The management API knows the new customer by the printed key...
    const credentials = { email: printed.email, key: printed.api_key };
    const record = await manage(server, "GET", "/v2/msgsvc/user", { auth: credentials });
    expect(record.status).toBe(200);
    expect(record.json).toEqual(printed.account);
    expect((await manage(server, "GET", "/v2/msgsvc/users")).json).toHaveLength(1);

    // ...and the messaging API by the printed token.
    const published = await server.call("POST", `/v2/publish/${receiver.url("/cli")}`, {
      token: printed.account.token,
      body: "from the cli's account",
    });
    expect(published.status).toBe(200);
    const got = await receiver.next();
    expect(got.text).toBe("from the cli's account");
    const logs = await server.call("GET", "/v2/logs", { token: printed.account.token });
    expect(logs.json.logs.length).toBeGreaterThan(0);
    expect((await server.call("GET", "/v2/logs")).json.logs).toEqual([]);
  });

  it("defaults to FERRY_DEFAULT_PLAN and accepts --flag=value and an enterprise id", async () => {
    const run = await ferry(["customers", "create", "--email=ent@test.local", "--enterprise", "acme"], {
      FERRY_DEFAULT_PLAN: "msgsvc_fixed_1m",
    });
    expect(run.code).toBe(0);
    const { account } = JSON.parse(run.stdout);
    expect(account).toMatchObject({
      type: "paid",
      reserved_type: "enterprise:acme",
      enterprise: { enabled: true },
      ...plans.msgsvc_fixed_1m,
    });
    expect(Object.keys(account).indexOf("enterprise")).toBe(Object.keys(account).indexOf("prometheus_enabled") + 1);
  });

  it("refuses a duplicate e-mail, a bad plan and bad arguments with a non-zero exit and a message", async () => {
    const duplicate = await ferry(["customers", "create", "--email", "cli@test.local"]);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toMatch(/invalid email: a customer with e-mail "cli@test.local" already exists/);
    expect(duplicate.stdout).toBe("");

    const plan = await ferry(["customers", "create", "--email", "p@test.local", "--plan", "gold"]);
    expect(plan.code).toBe(2);
    expect(plan.stderr).toMatch(/invalid --plan: "gold" must be one of free, paid/);

    for (const args of [
      ["customers", "create"],
      ["customers", "create", "--email"],
      ["customers", "create", "--email", "x@test.local", "--colour", "red"],
      ["customers", "delete"],
    ]) {
      const run = await ferry(args);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr).toMatch(/usage: ferry customers create --email/);
    }
    const email = await ferry(["customers", "create", "--email", "not-an-email"]);
    expect(email.code).toBe(1);
    expect(email.stderr).toMatch(/invalid email/);

    // None of the refused runs created anything.
    for (const address of ["p@test.local", "x@test.local", "not-an-email"]) {
      expect(await server.ferry.services.store.customerGet({ email: address })).toBeUndefined();
    }
  });

  it("stops with the variable's name on a bad configuration", async () => {
    const run = await ferry(["customers", "create", "--email", "c@test.local"], { FERRY_PLAN_GOLD_MAX_RETRIES: "3" });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/FERRY_PLAN_GOLD_MAX_RETRIES names no plan/);
  });
});
