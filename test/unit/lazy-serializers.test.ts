import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { lazySerializers } from "../../src/http/lazy-serializers.js";
import { PublishAnswer } from "../../src/http/schemas/publish.js";
import { Queue } from "../../src/http/schemas/groups-queues.js";

const route = (schema: unknown) => ({ schema, method: "POST", url: "/v2/publish/*", httpStatus: "200" });

describe("the answer serializers (src/http/lazy-serializers.ts)", () => {
  const compile = lazySerializers()(undefined, {});

  it("writes an object-or-array answer through the branch its type picks, dropping fields the shape does not name", () => {
    const write = compile(route(PublishAnswer));
    const one = { messageId: "msg_1", url: "http://127.0.0.1/a", stray: "x" };
    expect(JSON.parse(write(one))).toEqual({ messageId: "msg_1", url: "http://127.0.0.1/a" });
    const many = [{ messageId: "msg_2", url: "http://127.0.0.1/b", deduplicated: true, stray: 1 }, { messageId: "msg_3", url: "u" }];
    expect(JSON.parse(write(many))).toEqual([
      { messageId: "msg_2", url: "http://127.0.0.1/b", deduplicated: true },
      { messageId: "msg_3", url: "u" },
    ]);
  });

  it("writes any other answer through its shape: a required field missing is the serializer's error", () => {
    const write = compile(route(Queue));
    // A required field missing is the serializer's error, raised when the first answer is written.
    expect(() => write({ name: "q" })).toThrow(/required/);
    const ok = { name: "q", createdAt: 1, updatedAt: 2, parallelism: 1, lag: 0, paused: false };
    expect(JSON.parse(write(ok))).toEqual(ok);
  });

  it("compiles a route's serializer on the route's first answer, not at start-up", async () => {
    // A shape fast-json-stringify cannot compile (a $ref to nothing): an eager compiler fails at ready().
    const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: lazySerializers() } } });
    app.get("/never", { schema: { response: { 200: { $ref: "#/definitions/missing" } } } }, async () => ({}));
    app.get("/queue", { schema: { response: { 200: Queue } } }, async () => ({
      name: "q", createdAt: 1, updatedAt: 2, parallelism: 1, lag: 0, paused: false, stray: true,
    }));
    await app.ready();
    const queue = await app.inject({ method: "GET", url: "/queue" });
    expect(queue.json()).toEqual({ name: "q", createdAt: 1, updatedAt: 2, parallelism: 1, lag: 0, paused: false });
    // The broken one fails only when it answers.
    expect((await app.inject({ method: "GET", url: "/never" })).statusCode).toBe(500);
    await app.close();
  });
});

