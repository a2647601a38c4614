import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { OffsetClock } from "../../src/domain/clock.js";
import { type ReceivedRequest, Receiver } from "../helpers/receiver.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/** What callbacks.test.ts and callbacks-validation.test.ts share: their setup, hooks and helpers. */

export const clock = new OffsetClock();
export let server: TestServer;
export const receivers: Receiver[] = [];

beforeAll(async () => {
  server = await startTestServer({ clock });
});
afterAll(async () => {
  await server.stop();
});
afterEach(async () => {
  clock.offsetMs = 0;
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

export async function receiver(): Promise<Receiver> {
  const r = await Receiver.start();
  receivers.push(r);
  return r;
}

export const b64 = (s: string | Buffer) => Buffer.from(s).toString("base64");
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- callback bodies are asserted field by field
export const json = (r: ReceivedRequest): any => JSON.parse(r.text);

export function publish(s: TestServer, destination: string, headers: Record<string, string>, body = "payload") {
  return s.call("POST", `/v2/publish/${destination}`, { headers, body });
}

/** Skips a retry backoff without sleeping: moves the injected clock, then asks the dispatcher to look for work. */
export function skip(s: TestServer, c: OffsetClock, ms: number): void {
  c.offsetMs += ms;
  s.ferry.services.dispatcher.nudge();
}

export async function logStates(s: TestServer, messageId: string): Promise<string[]> {
  const res = await s.call("GET", `/v2/events?messageId=${messageId}&order=earliestFirst`);
  expect(res.status).toBe(200);
  return res.json.events.map((e: { state: string }) => e.state);
}
