import { mkdtempSync, rmSync } from "node:fs";
import Database from "better-sqlite3";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { type FerryProcess, spawnFerry } from "../helpers/process.js";

/**
 * Crash rounds (docs/reliability.md, "Crash rounds"): a real `ferry serve` on one SQLite file is killed with SIGKILL
 * at a random moment under a mixed load, then restarted on the same data, again and again. After every restart the
 * ledger must hold: every acknowledged message delivered at least once (and its callback sent), no message stuck,
 * and no more duplicates in total than the deliveries in flight at the kills.
 */
export interface ChaosOptions {
  rounds: number;
  seed: number;
  log?: (line: string) => void;
  /** Bound on the wait for the ledger to balance after a restart. */
  settleMs?: number;
}

export interface ChaosReport {
  rounds: number;
  messages: number;
  lost: number;
  duplicates: number;
  inFlightAtKills: number;
  callbacksMissing: number;
  failures: string[];
}

type Kind = "immediate" | "delayed" | "queued" | "flow" | "callback" | "fanout";
const KINDS: Kind[] = ["immediate", "immediate", "delayed", "queued", "flow", "callback", "fanout"];

const TOKEN = "chaos-token-0123456789";

/** Deterministic pseudo-random numbers (mulberry32), so a seed replays the same kill moments and kinds. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The destination: answers after a short random delay, counts deliveries per message and callbacks per source. */
class ChaosReceiver {
  readonly deliveries = new Map<string, number>();
  readonly callbacks = new Set<string>();
  inProgress = 0;
  private constructor(private readonly server: Server) {}

  static async start(rand: () => number): Promise<ChaosReceiver> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      receiver.inProgress++;
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("error", () => {});
      req.on("end", () => {
        setTimeout(() => {
          receiver.inProgress--;
          if (req.url?.startsWith("/cb")) {
            try {
              const source = (JSON.parse(Buffer.concat(chunks).toString()) as { sourceMessageId?: string }).sourceMessageId;
              if (source) receiver.callbacks.add(source);
            } catch {
              // not a callback body: ignored
            }
          } else {
            const id = String(req.headers["svc-message-id"]);
            receiver.deliveries.set(id, (receiver.deliveries.get(id) ?? 0) + 1);
          }
          res.end("ok");
        }, Math.floor(rand() * 30));
      });
    });
    server.keepAliveTimeout = 60_000;
    const receiver = new ChaosReceiver(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return receiver;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

interface Acked {
  id: string;
  kind: Kind;
}

async function call(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  const res = await request(`${base}${path}`, {
    method: method as "POST",
    headers: { authorization: `Bearer ${TOKEN}`, ...headers },
    body,
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  const text = await res.body.text();
  return { status: res.statusCode, text };
}

/** One publish of the given kind; the acknowledged message ids (several for a fan-out). */
async function publish(base: string, receiver: ChaosReceiver, kind: Kind, n: number): Promise<string[]> {
  const h: Record<string, string> = { "Svc-Retries": "5", "Svc-Retry-Delay": "200" };
  let path = `/v2/publish/${receiver.url(`/${kind}/${n}`)}`;
  if (kind === "delayed") h["Svc-Delay"] = `${1 + (n % 2)}s`;
  if (kind === "queued") path = `/v2/enqueue/chaos-q/${receiver.url(`/queued/${n}`)}`;
  if (kind === "flow") Object.assign(h, { "Svc-Flow-Control-Key": "chaos-key", "Svc-Flow-Control-Value": "parallelism=2" });
  if (kind === "callback") h["Svc-Callback"] = receiver.url(`/cb/${n}`);
  if (kind === "fanout") path = "/v2/publish/chaos-group";
  const res = await call(base, "POST", path, h, `chaos ${n}`);
  if (res.status !== 200) return [];
  const parsed = JSON.parse(res.text) as { messageId: string } | { messageId: string }[];
  return (Array.isArray(parsed) ? parsed : [parsed]).map((m) => m.messageId);
}

function env(dataDir: string): Record<string, string> {
  return {
    DATABASE_URL: `sqlite:${join(dataDir, "ferry.db")}`,
    FERRY_TOKEN: TOKEN,
    FERRY_CURRENT_SIGNING_KEY: "sig_chaosCurrentKey00000000000",
    FERRY_NEXT_SIGNING_KEY: "sig_chaosNextKey0000000000000",
    FERRY_LEASE_MS: "2000",
    FERRY_POLL_INTERVAL_MS: "200",
    FERRY_LOG_LEVEL: "info",
  };
}

/** Messages of the killed node that hold a lease: attempts started and not finished when it died. */
function leasedAtKill(dataDir: string): number {
  const db = new Database(join(dataDir, "ferry.db"), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM messages WHERE lease_owner IS NOT NULL").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => {});
  const settleMs = options.settleMs ?? 60_000;
  const rand = random(options.seed);
  const receiver = await ChaosReceiver.start(random(options.seed ^ 0x5bd1e995));
  const dataDir = mkdtempSync(join(tmpdir(), "ferry-chaos-"));
  const acked: Acked[] = [];
  const report: ChaosReport = {
    rounds: 0,
    messages: 0,
    lost: 0,
    duplicates: 0,
    inFlightAtKills: 0,
    callbacksMissing: 0,
    failures: [],
  };
  let ferry: FerryProcess | undefined;
  let n = 0;

  /** Waits (bounded) until every acknowledged message arrived and every callback was sent; then takes the books. */
  const balance = async (round: number) => {
    const deadline = Date.now() + settleMs;
    const missing = () => acked.filter((a) => !receiver.deliveries.has(a.id));
    const missingCallbacks = () => acked.filter((a) => a.kind === "callback" && !receiver.callbacks.has(a.id));
    while ((missing().length > 0 || missingCallbacks().length > 0) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    // Let in-flight duplicates land before counting them.
    while (receiver.inProgress > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    report.messages = acked.length;
    report.lost = missing().length;
    report.callbacksMissing = missingCallbacks().length;
    report.duplicates = [...receiver.deliveries.values()].reduce((sum, count) => sum + count - 1, 0);
    log(`chaos: books after round ${round}: ${report.messages} messages, ${report.lost} lost, ${report.duplicates} duplicates (allowed ${report.inFlightAtKills})`);
    if (report.lost > 0) {
      report.failures.push(`round ${round}: ${report.lost} acknowledged messages not delivered (stuck or lost), e.g. ${JSON.stringify(missing().slice(0, 3))}`);
    }
    if (report.callbacksMissing > 0) report.failures.push(`round ${round}: ${report.callbacksMissing} callbacks missing`);
    if (report.duplicates > report.inFlightAtKills) {
      report.failures.push(`round ${round}: ${report.duplicates} duplicates, above the ${report.inFlightAtKills} deliveries in flight at the kills`);
    }
  };

  try {
    for (let round = 1; round <= options.rounds && report.failures.length === 0; round++) {
      ferry = await spawnFerry(env(dataDir), 60_000);
      if (round === 1) {
        const group = await call(ferry.url, "POST", "/v2/topics/chaos-group/endpoints", { "content-type": "application/json" },
          JSON.stringify({ endpoints: [{ url: receiver.url("/fanout/a") }, { url: receiver.url("/fanout/b") }] }));
        if (group.status !== 200) throw new Error(`creating the URL group answered ${group.status}: ${group.text}`);
      } else {
        await balance(round - 1);
        if (report.failures.length > 0) break;
      }
      // Load: 8 publishers, each one request at a time, until the kill at a random moment.
      const base = ferry.url;
      let killed = false;
      const publisher = async () => {
        while (!killed) {
          const kind = KINDS[Math.floor(rand() * KINDS.length)]!;
          const id = n++;
          try {
            for (const messageId of await publish(base, receiver, kind, id)) acked.push({ id: messageId, kind });
          } catch {
            return; // the node is gone: this publish was never acknowledged
          }
        }
      };
      const publishers = Array.from({ length: 8 }, publisher);
      await new Promise((r) => setTimeout(r, 100 + Math.floor(rand() * 900)));
      ferry.child.kill("SIGKILL");
      killed = true;
      await ferry.exited;
      // In flight at the kill, as Ferry's own data says: messages leased for an attempt whose outcome was not
      // recorded. Only these can be delivered again after the restart.
      report.inFlightAtKills += leasedAtKill(dataDir);
      await Promise.all(publishers);
      report.rounds = round;
      log(`chaos: round ${round}: killed; ${acked.length} acknowledged so far, ${report.inFlightAtKills} in flight at the kills`);
    }
    // The last restart: the books must balance once more, then a graceful stop.
    if (report.failures.length === 0) {
      ferry = await spawnFerry(env(dataDir), 60_000);
      await balance(report.rounds);
      ferry.child.kill("SIGTERM");
      await ferry.exited;
    }
  } finally {
    if (ferry && ferry.child.exitCode === null && ferry.child.signalCode === null) {
      ferry.child.kill("SIGKILL");
      await ferry.exited;
    }
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return report;
}
