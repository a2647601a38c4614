import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";

/** docs/errors.md `method_not_allowed`: a known path with a method it does not serve is a 405 with `Allow`. */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

describe("405 Method Not Allowed", () => {
  it.each([
    ["PUT", "/v2/publish/http://127.0.0.1:9/x?a=b", "POST"],
    ["GET", "/v2/batch", "POST"],
    ["PATCH", "/v2/messages/msg_x", "DELETE, GET, HEAD"],
    ["POST", "/v2/keys", "GET, HEAD"],
    ["PUT", "/V2/Topics/orders/", "DELETE, GET, HEAD, PATCH"],
    ["GET", "/v2/flowControl/k/pause", "POST"],
    ["PUT", "/v2/msgsvc/users", "GET, HEAD"],
  ])("%s %s answers 405 with Allow: %s", async (method, path, allow) => {
    const res = await server.call(method, path, { body: method === "GET" ? undefined : "{}" });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.json.error).toMatch(new RegExp(`^method ${method} not allowed on `));
  });

  it("answers 405 before authentication, and still 404 for a path no route serves", async () => {
    const noToken = await server.call("DELETE", "/v2/batch", { token: null });
    expect(noToken.status).toBe(405);
    expect(noToken.headers.allow).toBe("POST");
    const unknown = await server.call("GET", "/v2/nothing-here");
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toBe("route GET /v2/nothing-here not found");
    expect(unknown.headers.allow).toBeUndefined();
    // A route of the request's own method that hands it to the not-found handler (GET / for an API client, which
    // only browsers are redirected from) is a 404, not a 405.
    expect((await server.call("GET", "/", { token: null })).status).toBe(404);
    const post = await server.call("POST", "/", { token: null, body: "{}" });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe("GET, HEAD");
  });
});
