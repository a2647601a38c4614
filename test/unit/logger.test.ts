import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";

describe("the service logger", () => {
  it("logs an error's message, code and stack, but not the connection object a pg error carries", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    // What pg emits for a dropped connection: the error carries its client, connection parameters included.
    const error = Object.assign(new Error("Connection terminated unexpectedly"), {
      code: "ECONNRESET",
      client: { connectionParameters: { user: "ferry", password: "s3cret-db-password", host: "db" } },
    });
    createLogger("info", sink).warn({ err: error }, "idle database connection lost");
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0]!);
    expect(entry.err).toMatchObject({ type: "Error", message: "Connection terminated unexpectedly", code: "ECONNRESET" });
    expect(entry.err.stack).toContain("logger.test.ts");
    expect(lines[0]).not.toContain("s3cret-db-password");
    expect(entry.err.client).toBeUndefined();
  });
});
