import { connect } from "node:net";
import fc from "fast-check";
import { request as httpRequest } from "node:http";
import { brokenRule } from "./invariants.js";
import type { FuzzRequest } from "./requests.js";
import { fuzzRequest, ledgerHeaders } from "./requests.js";
import { basic, type FuzzTarget, LedgerReceiver, startTarget } from "./targets.js";

/**
 * The fuzz run (docs/reliability.md, "Fuzzing"): `requests` generated requests, split over a neutral- and an
 * upstash-dialect Ferry, `concurrency` at a time. Request i is generated from its own seed (derived from the run's
 * seed), so a failure is reproduced and shrunk from that seed alone. One slot in eight is a clean publish on another
 * account, tracked by the ledger: each acknowledged one must reach the local receiver.
 */
export interface FuzzOptions {
  seed: number;
  requests: number;
  concurrency?: number;
  /** Bound on an answer's arrival; a request not answered in time breaks the rules. */
  answerBoundMs?: number;
  /** Bound on the test process's heap (Ferry runs in it), sampled every 500 requests. */
  heapBoundMb?: number;
  log?: (line: string) => void;
}

export interface FuzzFailure {
  index: number;
  requestSeed: number;
  dialect: string;
  rule: string;
  request: FuzzRequest;
  shrunk?: { request: FuzzRequest; rule: string };
}

export interface FuzzReport {
  seed: number;
  requests: number;
  byStatus: Record<string, number>;
  fiveHundreds: number;
  ledger: { acknowledged: number; delivered: number; lostIds: string[] };
  maxHeapMb: number;
  failures: FuzzFailure[];
}

const dialects = ["neutral", "upstash"] as const;

export const requestSeed = (seed: number, index: number): number => (Math.imul(seed | 0, 100_003) + index) | 0;

interface Answer {
  status: number;
  body: string;
}

/** Sends one fuzz request; a dropped connection or a late answer becomes the rule it broke. */
async function send(target: FuzzTarget, req: FuzzRequest, boundMs: number): Promise<Answer | string> {
  if (req.raw !== undefined) return sendRaw(target, req.raw, boundMs);
  const headers: [string, string][] = [...req.headers];
  let path = req.path.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
  const t = target.tokens;
  switch (req.auth) {
    case "valid":
      headers.push(["authorization", `Bearer ${t.valid}`]);
      break;
    case "malformed":
      headers.push(["authorization", "Bearer"], ["authorization", `Token ${t.valid}`]);
      break;
    case "read-only":
      headers.push(["authorization", `Bearer ${t.readOnly}`]);
      break;
    case "other-account":
      headers.push(["authorization", `Bearer ${t.other}`]);
      break;
    case "rotated":
      headers.push(["authorization", `Bearer ${t.rotated}`]);
      break;
    case "query":
      path += `${path.includes("?") ? "&" : "?"}${target.ctx.tokenQuery}=${t.valid}`;
      break;
    case "basic-valid":
      headers.push(["authorization", basic(target.creds.valid)]);
      break;
    case "basic-admin":
      headers.push(["authorization", basic(target.creds.admin)]);
      break;
    case "basic-wrong":
      headers.push(["authorization", basic({ email: target.creds.valid.email, key: "wrong-key" })]);
      break;
    case "basic-malformed":
      headers.push(["authorization", "Basic !!!not-base64"]);
      break;
    case "missing":
      break;
  }
  const b = req.body;
  const body =
    b === undefined
      ? undefined
      : b.kind === "text"
        ? b.text
        : b.kind === "bytes"
          ? Buffer.from(b.base64, "base64")
          : Buffer.alloc(b.size, b.char);
  return httpExchange(target.server.url + path, req.method, headers, body, boundMs);
}

/**
 * One request on a connection of its own (node:http, no agent): a hostile request cannot wedge a shared pool, and
 * the bound covers the whole exchange. A request node:http refuses to send is not the server's fault (status 0).
 */
function httpExchange(
  url: string,
  method: string,
  headers: [string, string][],
  body: string | Buffer | undefined,
  boundMs: number,
): Promise<Answer | string> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (value: Answer | string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    let req: ReturnType<typeof httpRequest>;
    try {
      const host: [string, string] = ["host", new URL(url).host];
      req = httpRequest(url, { method, headers: [host, ...headers].flat(), agent: false, insecureHTTPParser: true });
    } catch {
      return resolve({ status: 0, body: "" });
    }
    const timer = setTimeout(() => {
      finish(`no answer within ${boundMs} ms`);
      req.destroy();
    }, boundMs);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => finish({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", (e) => finish(`connection dropped mid-answer: ${e.message}`));
    });
    req.on("error", (e: Error & { code?: string }) => {
      // The server may answer (413, 431) and close before the whole body was written: that answer counts.
      if (e.code === "EPIPE" || e.code === "ECONNRESET") return setTimeout(() => finish(`connection dropped: ${e.code}`), 200);
      finish(`connection dropped: ${e.code ?? ""} ${e.message}`);
    });
    try {
      req.end(body);
    } catch {
      finish({ status: 0, body: "" });
      req.destroy();
    }
  });
}

function sendRaw(target: FuzzTarget, raw: string, boundMs: number): Promise<Answer | string> {
  const port = Number(new URL(target.server.url).port);
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let got = "";
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(`no answer within ${boundMs} ms (raw)`);
    }, boundMs);
    socket.on("data", (d: Buffer) => (got += d.toString("latin1")));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0);
      if (status === 0) return resolve("connection dropped without an answer (raw request)");
      resolve({ status, body: got.slice(got.indexOf("\r\n\r\n") + 4) });
    });
    socket.write(raw, "latin1");
  });
}

/** Runs one request against a target and returns the rule it broke, if any. */
export const samples = new Map<number, string[]>();

async function check(target: FuzzTarget, req: FuzzRequest, boundMs: number): Promise<{ status: number; rule?: string }> {
  const answer = await send(target, req, boundMs);
  if (process.env.FUZZ_DEBUG && typeof answer !== "string") {
    const list = samples.get(answer.status) ?? [];
    if (list.length < 12) list.push(`${req.method} ${req.path.slice(0, 80)} -> ${answer.body.slice(0, 160)}`);
    samples.set(answer.status, list);
  }
  if (typeof answer === "string") return { status: -1, rule: answer };
  if (answer.status === 0) return { status: 0 };
  const rule = brokenRule(answer.status, answer.body, req.method);
  return rule === undefined ? { status: answer.status } : { status: answer.status, rule };
}

/**
 * A publish for the ledger, on the ledger account: a clean delivery configuration (no delay, no flow control) but
 * generated forwarded headers, names that are object keys or that no request can carry among them. Either Ferry
 * refuses it with a 4xx, or it is acknowledged and must arrive.
 */
async function ledgerPublish(target: FuzzTarget, n: number, seed: number): Promise<string | undefined> {
  const p = target.ctx.prefix;
  const [generated] = fc.sample(ledgerHeaders(p), { seed, numRuns: 1 });
  const variants: [string, string][][] = [
    [],
    [[`${p}Retries`, "2"], ["content-type", "application/octet-stream"]],
    [[`${p}Method`, "PUT"], [`${p}Label`, "ledger"]],
    [[`${p}Timeout`, "5s"]],
  ];
  const headers = [...variants[n % variants.length]!, ...generated!];
  headers.push(["authorization", `Bearer ${target.tokens.ledger}`]);
  const url = `${target.server.url}/v2/publish/${target.ctx.ledgerUrl}/ledger/${n}`;
  const body = n % 2 === 0 ? `ledger ${n}` : Buffer.from([0xff, 0x00, n & 0xff]);
  const answer = await httpExchange(url, "POST", headers, body, 10_000);
  if (typeof answer === "string" || answer.status !== 200) return undefined;
  return (JSON.parse(answer.body) as { messageId: string }).messageId;
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const log = options.log ?? (() => {});
  const boundMs = options.answerBoundMs ?? 10_000;
  const heapBound = options.heapBoundMb ?? 1536;
  const concurrency = options.concurrency ?? 16;
  const ledger = await LedgerReceiver.start();
  const targets = [await startTarget("neutral", ledger), await startTarget("upstash", ledger)];
  const arbitraries = targets.map((t) => fuzzRequest(t.ctx));
  const report: FuzzReport = {
    seed: options.seed,
    requests: 0,
    byStatus: {},
    fiveHundreds: 0,
    ledger: { acknowledged: 0, delivered: 0, lostIds: [] },
    maxHeapMb: 0,
    failures: [],
  };
  const acknowledged: string[] = [];
  let next = 0;
  let ledgerN = 0;

  const worker = async () => {
    while (report.failures.length === 0) {
      const index = next++;
      if (index >= options.requests) return;
      const t = index % 2;
      const target = targets[t]!;
      if (index % 8 === 7) {
        const id = await ledgerPublish(target, ledgerN++, requestSeed(options.seed, -index));
        if (id !== undefined) acknowledged.push(id);
      }
      const seed = requestSeed(options.seed, index);
      const [req] = fc.sample(arbitraries[t]!, { seed, numRuns: 1 });
      const result = await check(target, req!, boundMs);
      report.requests++;
      report.byStatus[String(result.status)] = (report.byStatus[String(result.status)] ?? 0) + 1;
      if (result.status >= 500) report.fiveHundreds++;
      if (result.rule !== undefined) {
        report.failures.push({ index, requestSeed: seed, dialect: dialects[t]!, rule: result.rule, request: req! });
        log(`fuzz: request #${index} broke a rule (${result.rule}); shrinking it`);
      }
      if (report.requests % 500 === 0) {
        const heapMb = Math.round(process.memoryUsage().heapUsed / 1048576);
        report.maxHeapMb = Math.max(report.maxHeapMb, heapMb);
        if (heapMb > heapBound) {
          report.failures.push({ index, requestSeed: seed, dialect: dialects[t]!, rule: `heap ${heapMb} MB above ${heapBound} MB`, request: req! });
        }
        if (report.requests % 5000 === 0) log(`fuzz: ${report.requests} requests, ${JSON.stringify(report.byStatus)}, heap ${heapMb} MB`);
      }
    }
  };

  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
    log(`fuzz: ${report.requests} requests sent; checking the ledger`);
    if (process.env.FUZZ_DEBUG) for (const [status, list] of samples) log(`${status}:\n  ${list.join("\n  ")}`);
    // Shrink the first failure from its own seed (the server's state has moved on: it may not reproduce).
    const first = report.failures[0];
    if (first !== undefined) {
      const t = dialects.indexOf(first.dialect as (typeof dialects)[number]);
      const target = targets[t]!;
      let lastRule = "";
      const outcome = await fc.check(
        fc.asyncProperty(arbitraries[t]!, async (req) => {
          const r = await check(target, req, boundMs);
          if (r.rule !== undefined) lastRule = r.rule;
          return r.rule === undefined;
        }),
        // Shrinking a request that hangs costs the answer bound per step: bounded in total.
        { seed: first.requestSeed, numRuns: 1, interruptAfterTimeLimit: 60_000 },
      );
      if (outcome.failed && outcome.counterexample) first.shrunk = { request: outcome.counterexample[0], rule: lastRule };
    }
    // The ledger: every acknowledged clean publish reaches the receiver (bounded wait).
    report.ledger.acknowledged = acknowledged.length;
    const deadline = Date.now() + 60_000;
    while (acknowledged.some((id) => !ledger.seen.has(id)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    report.ledger.delivered = acknowledged.filter((id) => ledger.seen.has(id)).length;
    report.ledger.lostIds = acknowledged.filter((id) => !ledger.seen.has(id)).slice(0, 20);
  } finally {
    for (const t of targets) await t.server.stop();
    await ledger.close();
  }
  return report;
}

/** A failure as the fuzzer prints it: the seeds to reproduce it and the (shrunk) request. */
export function describeFailure(report: FuzzReport, f: FuzzFailure): string {
  return [
    `fuzz failure (run seed ${report.seed}, request #${f.index}, request seed ${f.requestSeed}, ${f.dialect} dialect): ${f.rule}`,
    `request: ${JSON.stringify(f.request).slice(0, 2000)}`,
    f.shrunk ? `shrunk: ${JSON.stringify(f.shrunk.request).slice(0, 2000)} -> ${f.shrunk.rule}` : "shrunk: did not reproduce alone",
    `reproduce: npm run fuzz -- --seed ${report.seed} --requests ${f.index + 1}`,
  ].join("\n");
}
