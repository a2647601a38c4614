import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { request } from "undici";
import type { OutgoingRequest } from "./generator.js";
import { type Child, freePort, startChild, startNodeChild, waitForHttp } from "./proc.js";

export const BENCH_TOKEN = "bench-token-0123456789abcdef";
const CURRENT_KEY = "sig_benchCurrentKey0000000000000";
const NEXT_KEY = "sig_benchNextKey0000000000000000";

/**
 * Checkout whose `src/main.ts` is benchmarked (default: this one). `--ferry-root=<dir>` points it at another
 * checkout, e.g. a branch that has URL groups, without copying the bench there.
 */
let ferryRoot: string | undefined;
export function setFerryRoot(dir: string | undefined): void {
  ferryRoot = dir;
}

/** The checkout under test (for children that load Ferry's code themselves, such as the P4 seeder). */
export function getFerryRoot(): string | undefined {
  return ferryRoot;
}

export interface FerryProcess {
  child: Child;
  origin: string;
  dataDir: string;
  databaseUrl: string;
  stop(): Promise<string>;
}

/** The environment Ferry is started with; the P4 seeder opens the same database with it. */
export function ferryEnv(dataDir: string, port: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: `sqlite:${join(dataDir, "ferry.db")}`,
    FERRY_PORT: String(port),
    FERRY_HOST: "127.0.0.1",
    FERRY_TOKEN: BENCH_TOKEN,
    FERRY_CURRENT_SIGNING_KEY: CURRENT_KEY,
    FERRY_NEXT_SIGNING_KEY: NEXT_KEY,
    FERRY_LOG_LEVEL: "warn",
    FERRY_SHUTDOWN_GRACE_MS: "2000",
    ...extra,
  };
}

export function newDataDir(workDir: string, name: string): string {
  return mkdtempSync(join(workDir, `${name}-`));
}

/**
 * Starts `node --import tsx src/main.ts serve` as a child process on a free port: the server `npm start` runs, from
 * source rather than from dist/ so that another checkout needs no build and profiles map to .ts lines,
 * with its own SQLite file, and waits until it is ready. `nodeArgs` adds e.g. `--cpu-prof`. `compiled` runs what
 * `npm start` runs instead, `bin/ferry.mjs serve` (dist/, built first when stale), for figures such as memory that
 * tsx's loader would distort: from source, every thread also carries the loader and its hooks thread.
 */
export async function startFerry(opts: {
  workDir: string;
  name: string;
  dataDir?: string;
  env?: Record<string, string>;
  nodeArgs?: string[];
  compiled?: boolean;
}): Promise<FerryProcess> {
  const dataDir = opts.dataDir ?? newDataDir(opts.workDir, opts.name);
  const port = await freePort();
  const env = ferryEnv(dataDir, port, opts.env);
  const name = `ferry (${opts.name})`;
  const childOpts = { env, logPath: join(dataDir, "ferry.log"), cwd: ferryRoot };
  const child = opts.compiled
    ? startChild(name, process.execPath, [...(opts.nodeArgs ?? []), "bin/ferry.mjs", "serve"], childOpts)
    : startNodeChild(name, "src/main.ts", { ...childOpts, args: ["serve"], nodeArgs: opts.nodeArgs ?? [] });
  const origin = `http://127.0.0.1:${port}`;
  // /health answers as soon as the boot listener does, while the store still opens (everything else answers 503
  // "starting" then); /ready answers 200 once Ferry serves. A 404 there is a build without /ready, whose /health
  // came from the real app.
  await waitForHttp(`${origin}/ready`, child, 60_000, (status) => status < 300 || status === 404);
  return { child, origin, dataDir, databaseUrl: env.DATABASE_URL!, stop: () => child.stop(15_000) };
}

/** A publish of `body` to `destination` (a URL or a group name), with extra `Svc-*` or forwarded headers. */
export function publishRequest(
  destination: string,
  body: Buffer,
  headers: Record<string, string> = {},
): OutgoingRequest {
  return {
    path: `/v2/publish/${destination}`,
    headers: {
      authorization: `Bearer ${BENCH_TOKEN}`,
      "content-type": "application/octet-stream",
      ...headers,
    },
    body,
  };
}

/** One management call to Ferry with the bench token; returns status and text. */
export async function ferryCall(
  origin: string,
  method: "GET" | "POST" | "DELETE" | "PATCH",
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  const res = await request(`${origin}${path}`, {
    method,
    headers: { authorization: `Bearer ${BENCH_TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  return { status: res.statusCode, text: await res.body.text() };
}
