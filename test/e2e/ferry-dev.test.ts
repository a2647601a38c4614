import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, Receiver as SdkReceiver } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DEV_CREDENTIALS } from "../../src/cli/dev.js";
import { type DevProcess, startDev } from "../helpers/dev-process.js";
import { Receiver } from "../helpers/receiver.js";
import { httpCall } from "../helpers/server.js";

/**
 * `ferry dev` as a real process, driven by the official SDK (@upstash/qstash 2.12.0) configured with nothing but
 * the dev URL and the well-known dev credentials. Ports are free ones: the SDK's dev mode honours QSTASH_DEV_PORT.
 */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

let cwd: string;
let receiver: Receiver;
const running: DevProcess[] = [];
beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), "ferry-dev-"));
  receiver = await Receiver.start();
});
afterAll(async () => {
  for (const dev of running) await dev.stop();
  await receiver?.close();
  rmSync(cwd, { recursive: true, force: true });
});

async function dev(args: string[]): Promise<DevProcess> {
  const started = await startDev(args, cwd);
  running.push(started);
  return started;
}

const sdkReceiver = () =>
  new SdkReceiver({ currentSigningKey: DEV_CREDENTIALS.currentSigningKey, nextSigningKey: DEV_CREDENTIALS.nextSigningKey });

describe("ferry dev", () => {
  it("prints the credentials, a sample curl and the console; answers on 127.0.0.1 and localhost; the SDK publishes and its Receiver verifies", async () => {
    const port = await freePort();
    const server = await dev(["--port", String(port)]);
    const banner = server.stdout();
    expect(banner).toContain(`QSTASH_URL=http://127.0.0.1:${port}`);
    expect(banner).toContain(`QSTASH_TOKEN=${DEV_CREDENTIALS.token}`);
    expect(banner).toContain(`QSTASH_CURRENT_SIGNING_KEY=${DEV_CREDENTIALS.currentSigningKey}`);
    expect(banner).toContain(`QSTASH_NEXT_SIGNING_KEY=${DEV_CREDENTIALS.nextSigningKey}`);
    expect(banner).toContain(`curl -X POST http://127.0.0.1:${port}/v2/publish/`);
    expect(banner).toContain(`http://localhost:${port}/console`);
    expect(banner).toContain(join(cwd, ".ferry-dev"));
    expect((await httpCall(`http://127.0.0.1:${port}`, "GET", "/ready")).status).toBe(200);
    expect((await httpCall(`http://localhost:${port}`, "GET", "/ready")).status).toBe(200);

    const client = new Client({ baseUrl: `http://127.0.0.1:${port}`, token: DEV_CREDENTIALS.token, retry: false });
    const url = receiver.url("/dev/hello");
    const res = await client.publishJSON({ url, body: { hello: "dev" } });
    const got = await receiver.next();
    expect(got.headers["upstash-message-id"]).toBe(res.messageId);
    expect(JSON.parse(got.text)).toEqual({ hello: "dev" });
    expect(await sdkReceiver().verify({ signature: String(got.headers["upstash-signature"]), body: got.text, url })).toBe(true);
    await server.stop();
  });

  it("keeps a delayed message across a restart and delivers it; --reset starts empty", async () => {
    const port = await freePort();
    const data = join(cwd, "restart-data");
    const first = await dev(["--port", String(port), "--data", data]);
    const client = new Client({ baseUrl: `http://127.0.0.1:${port}`, token: DEV_CREDENTIALS.token, retry: false });
    const url = receiver.url("/dev/delayed");
    // Five seconds: long enough that the first process is gone before it is due, even on a busy machine.
    const { messageId } = await client.publish({ url, body: "later", delay: 5 });
    await first.stop();
    expect(receiver.requests.some((r) => r.url === "/dev/delayed")).toBe(false);

    const second = await dev(["--port", String(port), "--data", data]);
    const got = await receiver.waitForPath("/dev/delayed", 30_000);
    expect(got.headers["upstash-message-id"]).toBe(messageId);
    expect(await sdkReceiver().verify({ signature: String(got.headers["upstash-signature"]), body: got.text, url })).toBe(true);
    await second.stop();

    const reset = await dev(["--port", String(port), "--data", data, "--reset"]);
    const fresh = new Client({ baseUrl: `http://127.0.0.1:${port}`, token: DEV_CREDENTIALS.token, retry: false });
    await expect(fresh.messages.get(messageId)).rejects.toThrow();
    await reset.stop();
  }, 60_000);

  it("--dialect neutral speaks the neutral names", async () => {
    const port = await freePort();
    const server = await dev(["--port", String(port), "--dialect", "neutral", "--data", join(cwd, "neutral")]);
    expect(server.stdout()).toContain(`FERRY_TOKEN=${DEV_CREDENTIALS.token}`);
    const res = await httpCall(`http://127.0.0.1:${port}`, "POST", `/v2/publish/${receiver.url("/dev/neutral")}`, { body: "n" }, DEV_CREDENTIALS.token);
    expect(res.status).toBe(200);
    const got = await receiver.waitForPath("/dev/neutral");
    expect(got.headers["svc-message-id"]).toBe(res.json.messageId);
    await server.stop();
  });

  it("is found by the SDK's own dev mode (QSTASH_DEV=true), which then downloads nothing", async () => {
    const port = await freePort();
    const server = await dev(["--port", String(port), "--data", join(cwd, "sdk-dev-mode")]);
    const saved = { dev: process.env.QSTASH_DEV, port: process.env.QSTASH_DEV_PORT };
    process.env.QSTASH_DEV = "true";
    process.env.QSTASH_DEV_PORT = String(port);
    const logs: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
      logs.push(args.map(String).join(" "));
    });
    try {
      // No baseUrl, no token: dev mode takes both from its own constants and checks /v2/keys on 127.0.0.1.
      const client = new Client({ retry: false });
      const url = receiver.url("/dev/sdk-mode");
      const res = await client.publishJSON({ url, body: { mode: "dev" } });
      const got = await receiver.waitForPath("/dev/sdk-mode");
      expect(got.headers["upstash-message-id"]).toBe(res.messageId);
      const verifier = new SdkReceiver(); // dev mode: the dev signing keys
      expect(await verifier.verify({ signature: String(got.headers["upstash-signature"]), body: got.text, url })).toBe(true);
      expect(logs.some((l) => l.includes(`Server already running at http://127.0.0.1:${port}`))).toBe(true);
      expect(logs.some((l) => l.includes("Downloading"))).toBe(false);
    } finally {
      spy.mockRestore();
      if (saved.dev === undefined) delete process.env.QSTASH_DEV;
      else process.env.QSTASH_DEV = saved.dev;
      if (saved.port === undefined) delete process.env.QSTASH_DEV_PORT;
      else process.env.QSTASH_DEV_PORT = saved.port;
    }
    await server.stop();
  });
});
