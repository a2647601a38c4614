import { describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { Receiver } from "../helpers/receiver.js";
import { TEST_CURRENT_KEY } from "../helpers/server.js";
import { verifySignature } from "../helpers/signature.js";
import { b64, clock, json, logStates, publish, receiver, server, skip } from "./callbacks-fixture.js";

describe("callback after a 2xx (seed 3.3 rule 1)", () => {
  it("calls the callback URL once with every field of seed 2.4, signed for the callback URL", async () => {
    const dest = await receiver();
    const cb = await receiver();
    const fcb = await receiver();
    dest.setDefault({ status: 201, headers: { "x-answer": "yes" }, body: "created!" });
    const before = Date.now();
    const res = await publish(server, dest.url("/ok?a=1"), {
      "content-type": "text/plain",
      "svc-forward-x-source": "s1",
      "svc-retries": "2",
      "svc-callback": cb.url("/cb?x=1"),
      "svc-failure-callback": fcb.url("/fail"),
    });
    expect(res.status).toBe(200);
    const sourceId = res.json.messageId;

    const got = await cb.next();
    const body = json(got);
    expect(body).toEqual({
      status: 201,
      header: expect.objectContaining({ "X-Answer": ["yes"] }),
      body: b64("created!"),
      retried: 0,
      maxRetries: 2,
      sourceMessageId: sourceId,
      url: dest.url("/ok?a=1"),
      method: "POST",
      sourceHeader: { "Content-Type": "text/plain", "X-Source": "s1" },
      sourceBody: b64("payload"),
      notBefore: expect.stringMatching(/^\d{13}$/),
      createdAt: expect.stringMatching(/^\d{13}$/),
      callerIP: "127.0.0.1",
    });
    expect(Number(body.createdAt)).toBeGreaterThanOrEqual(before);
    expect(body.notBefore).toBe(body.createdAt);

    expect(got.method).toBe("POST");
    expect(got.url).toBe("/cb?x=1");
    expect(got.headers["content-type"]).toBe("application/json");
    const callbackId = got.headers["svc-message-id"];
    expect(callbackId).toMatch(/^msg_/);
    expect(callbackId).not.toBe(sourceId);
    await verifySignature({
      signature: got.headers["svc-signature"],
      key: TEST_CURRENT_KEY,
      url: cb.url("/cb?x=1"),
      body: got.body,
    });

    // Once: no second callback, and no failure callback for a delivered message.
    await cb.expectQuiet(300);
    expect(fcb.requests).toHaveLength(0);
    expect(dest.requests).toHaveLength(1);
  });

  it("configures the callback with Svc-Callback-Method, -Forward-*, -Timeout; retries default to the source's", async () => {
    const dest = await receiver();
    const cb = await receiver();
    await publish(server, dest.url("/ok"), {
      "svc-retries": "2",
      "svc-callback": cb.url("/cb"),
      "svc-callback-method": "PUT",
      "svc-callback-timeout": "5s",
      "svc-callback-forward-x-token": "abc",
    });
    const got = await cb.next();
    expect(got.method).toBe("PUT");
    expect(got.headers["x-token"]).toBe("abc");
    expect(got.headers["content-type"]).toBe("application/json");

    const callbackId = String(got.headers["svc-message-id"]);
    const created = await eventually(async () => {
      const res = await server.call("GET", `/v2/events?messageId=${callbackId}&state=CREATED`);
      expect(res.json.events).toHaveLength(1);
      return res.json.events[0];
    });
    expect(created).toMatchObject({
      method: "PUT",
      timeout: 5000,
      maxRetries: 2,
      header: { "X-Token": ["abc"], "Content-Type": ["application/json"] },
    });
  });
});

describe("redaction", () => {
  it("fields named in Svc-Redact-Fields stay redacted in sourceHeader and sourceBody; the destination gets them", async () => {
    const dest = await receiver();
    const cb = await receiver();
    await publish(
      server,
      dest.url("/ok"),
      {
        "svc-redact-fields": "body,header[X-Secret]",
        "svc-forward-x-secret": "s3cret",
        "svc-forward-x-plain": "p",
        "svc-callback": cb.url("/cb"),
      },
      "private",
    );
    const c = json(await cb.next());
    expect(c.sourceHeader["X-Plain"]).toBe("p");
    expect(c.sourceHeader["X-Secret"]).toMatch(/^REDACTED:[0-9a-f]{64}$/);
    expect(Buffer.from(c.sourceBody, "base64").toString()).toMatch(/^REDACTED:[0-9a-f]{64}$/);
    expect(dest.requests[0]!.text).toBe("private");
    expect(dest.requests[0]!.headers["x-secret"]).toBe("s3cret");
  });
});

describe("a callback is a message of its own (seed 3.3 rule 6)", () => {
  it("is logged, retried by Svc-Callback-Retries / -Retry-Delay, and keeps its id across attempts", async () => {
    const dest = await receiver();
    const cb = await receiver();
    cb.respondWith({ status: 500 });
    const res = await publish(server, dest.url("/ok"), {
      "svc-callback": cb.url("/cb"),
      "svc-callback-retries": "1",
      "svc-callback-retry-delay": "0",
    });
    const first = await cb.next();
    const second = await cb.next();
    expect(first.headers["svc-retried"]).toBe("0");
    expect(second.headers["svc-retried"]).toBe("1");
    expect(second.headers["svc-message-id"]).toBe(first.headers["svc-message-id"]);
    expect(second.text).toBe(first.text);
    expect(json(second).sourceMessageId).toBe(res.json.messageId);

    const callbackId = String(first.headers["svc-message-id"]);
    await eventually(async () =>
      expect(await logStates(server, callbackId)).toEqual([
        "CREATED",
        "ACTIVE",
        "ERROR",
        "RETRY",
        "ACTIVE",
        "DELIVERED",
      ]),
    );
    expect(await logStates(server, res.json.messageId)).toEqual(["CREATED", "ACTIVE", "DELIVERED"]);
  });
});

describe("failed attempts (seed 3.3 rules 2–5)", () => {
  it("a destination that fails twice then succeeds: one callback per attempt, no failure callback", async () => {
    const dest = await receiver();
    const cb = await receiver();
    const fcb = await receiver();
    dest.respondWith({ status: 500, body: "e1" }, { status: 503, body: "e2" }).setDefault({ status: 200, body: "ok" });
    const res = await publish(server, dest.url("/flaky"), {
      "svc-retries": "3",
      "svc-callback": cb.url("/cb"),
      "svc-failure-callback": fcb.url("/fail"),
    });

    // The callback of attempt n is committed with attempt n's outcome, so the clock may move once it arrives.
    const c1 = json(await cb.next());
    expect(c1).toMatchObject({ status: 500, body: b64("e1"), retried: 0, maxRetries: 3 });
    skip(server, clock, 13_000); // default backoff before the first retry: e^2.5 s ≈ 12.2 s
    const c2 = json(await cb.next());
    expect(c2).toMatchObject({ status: 503, body: b64("e2"), retried: 1, maxRetries: 3 });
    skip(server, clock, 149_000); // e^5 s ≈ 148.4 s
    const c3 = json(await cb.next());
    expect(c3).toMatchObject({ status: 200, body: b64("ok"), retried: 2, maxRetries: 3 });
    for (const c of [c1, c2, c3]) expect(c.sourceMessageId).toBe(res.json.messageId);

    expect(dest.requests.map((r) => r.headers["svc-retried"])).toEqual(["0", "1", "2"]);
    await cb.expectQuiet(300);
    expect(fcb.requests).toHaveLength(0);
  });

  it("exhausted retries: the last callback has retried == maxRetries, then exactly one failure callback whose dlqId retrieves and retries the entry", async () => {
    const dest = await receiver();
    const cb = await receiver();
    const fcb = await receiver();
    dest.setDefault({ status: 500, headers: { "x-why": "broken" }, body: "nope" });
    const res = await publish(
      server,
      dest.url("/down"),
      {
        "svc-retries": "1",
        "svc-retry-delay": "0",
        "svc-callback": cb.url("/cb"),
        "svc-failure-callback": fcb.url("/fail"),
        "svc-failure-callback-forward-x-kind": "failure",
      },
      "original",
    );
    const sourceId = res.json.messageId;
    // Two callback messages, one per attempt: with Svc-Retry-Delay 0 both can be in flight at once, in either order.
    const [c1, c2] = [json(await cb.next()), json(await cb.next())].sort((x, y) => x.retried - y.retried);
    expect([c1.retried, c2.retried]).toEqual([0, 1]);
    expect(c2.retried).toBe(c2.maxRetries);

    const failure = await fcb.next();
    expect(failure.headers["x-kind"]).toBe("failure");
    await verifySignature({
      signature: failure.headers["svc-signature"],
      key: TEST_CURRENT_KEY,
      url: fcb.url("/fail"),
      body: failure.body,
    });
    const f = json(failure);
    expect(f).toMatchObject({
      status: 500,
      header: expect.objectContaining({ "X-Why": ["broken"] }),
      body: b64("nope"),
      retried: 1,
      maxRetries: 1,
      sourceMessageId: sourceId,
      url: dest.url("/down"),
      method: "POST",
      sourceBody: b64("original"),
      callerIP: "127.0.0.1",
    });
    expect(f.dlqId).toMatch(/^\d+-\d+$/);
    await fcb.expectQuiet(300);
    expect(fcb.requests).toHaveLength(1);
    expect(cb.requests).toHaveLength(2);

    const entry = await server.call("GET", `/v2/dlq/${f.dlqId}`);
    expect(entry.status).toBe(200);
    expect(entry.json).toMatchObject({
      dlqId: f.dlqId,
      messageId: sourceId,
      responseStatus: 500,
      responseBody: "nope",
    });

    dest.respondWith({ status: 200, body: "fixed" });
    const retried = await server.call("POST", `/v2/dlq/retry/${f.dlqId}`);
    expect(retried.status).toBe(201);
    const again = await dest.waitForCount(3);
    expect(again[2]!.headers["svc-message-id"]).toBe(retried.json.messageId);
    expect(again[2]!.text).toBe("original");
    // The retried message keeps the callback: its 2xx reaches the callback URL under the new id.
    const c3 = json(await cb.next());
    expect(c3).toMatchObject({ status: 200, sourceMessageId: retried.json.messageId, retried: 0 });
    expect((await server.call("GET", `/v2/dlq/${f.dlqId}`)).status).toBe(404);
  });

  it("a failure callback's dlqId deletes the entry (404 the second time)", async () => {
    const dest = await receiver();
    const fcb = await receiver();
    dest.setDefault({ status: 500 });
    await publish(server, dest.url("/down"), { "svc-retries": "0", "svc-failure-callback": fcb.url("/fail") });
    const { dlqId } = json(await fcb.next());
    expect((await server.call("DELETE", `/v2/dlq/${dlqId}`)).status).toBe(200);
    expect((await server.call("DELETE", `/v2/dlq/${dlqId}`)).status).toBe(404);
  });

  it("489 with Svc-NonRetryable-Error fails at once: one callback, one failure callback", async () => {
    const dest = await receiver();
    const cb = await receiver();
    const fcb = await receiver();
    dest.setDefault({ status: 489, headers: { "svc-nonretryable-error": "true" }, body: "stop" });
    await publish(server, dest.url("/stop"), {
      "svc-retries": "3",
      "svc-callback": cb.url("/cb"),
      "svc-failure-callback": fcb.url("/fail"),
    });
    const c = json(await cb.next());
    const f = json(await fcb.next());
    expect(c).toMatchObject({ status: 489, retried: 0, maxRetries: 3 });
    expect(c.dlqId).toBeUndefined();
    expect(f).toMatchObject({ status: 489, retried: 0, maxRetries: 3, body: b64("stop") });
    expect(f.dlqId).toMatch(/^\d+-\d+$/);
    await fcb.expectQuiet(300);
    expect(dest.requests).toHaveLength(1);
    expect(cb.requests).toHaveLength(1);
  });

  it("a network error reaches the callbacks with status 0 and the error", async () => {
    const gone = await Receiver.start();
    const url = gone.url("/gone");
    await gone.close();
    const cb = await receiver();
    const fcb = await receiver();
    await publish(server, url, {
      "svc-retries": "0",
      "svc-callback": cb.url("/cb"),
      "svc-failure-callback": fcb.url("/fail"),
    });
    const c = json(await cb.next());
    const f = json(await fcb.next());
    expect(c).toMatchObject({ status: 0, header: {}, body: "", retried: 0, maxRetries: 0, url });
    expect(c.error).toMatch(/ECONNREFUSED|connect/i);
    expect(f).toMatchObject({ status: 0, url });
    expect(f.dlqId).toMatch(/^\d+-\d+$/);
  });
});
