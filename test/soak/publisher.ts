import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";
import { TEST_TOKEN } from "../helpers/server.js";
import { type Books, type Planned, publishHeaders } from "./ledger.js";

/** A Ferry node publishers may talk to; `alive` turns false once the test has killed it. */
export interface Node {
  url: string;
  alive: boolean;
}

export interface PublishStats {
  requests: number;
  /** Answers 503 "storage unavailable": the database was away. */
  unavailable: number;
  /** Connection refused or cut: the node was gone. */
  networkErrors: number;
  /** Anything else that was not a 200/202: each is a defect, and the test fails on it. */
  unexpected: string[];
}

/** Retries of one request before the test gives up on it (with 50 ms pauses: well beyond any outage here). */
const MAX_ATTEMPTS = 1200;

type Answer = { status: number; json: unknown } | "network";

async function send(node: Node, path: string, headers: Record<string, string>, body: string): Promise<Answer> {
  try {
    const res = await request(`${node.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_TOKEN}`, ...headers },
      body,
      headersTimeout: 20_000,
      bodyTimeout: 20_000,
    });
    const text = await res.body.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: res.statusCode, json };
  } catch {
    return "network";
  }
}

/**
 * Publishes one lane's messages in order, `chunk` at a time: even chunks as one batch request, odd chunks as
 * single publishes (queue messages through /v2/enqueue), round-robin over the live nodes. A 503 or a lost
 * connection is retried, on the next node, with the same deduplication ids until acknowledged.
 */
export async function publishLane(
  messages: Planned[],
  nodes: Node[],
  destination: (m: Planned) => string,
  books: Books,
  stats: PublishStats,
  chunk = 20,
): Promise<void> {
  let turn = messages[0]?.lane ?? 0;
  const sendUntilAcknowledged = async (
    path: string,
    headers: Record<string, string>,
    body: string,
    seqs: number[],
  ): Promise<unknown> => {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const live = nodes.filter((n) => n.alive);
      const node = live[turn++ % live.length]!;
      const now = Date.now();
      for (const seq of seqs) if (!books.firstSentAt.has(seq)) books.firstSentAt.set(seq, now);
      stats.requests++;
      const answer = await send(node, path, headers, body);
      if (answer === "network") stats.networkErrors++;
      else if (answer.status === 200 || answer.status === 202) return answer.json;
      else if (answer.status === 503) stats.unavailable++;
      else {
        stats.unexpected.push(`${answer.status} ${JSON.stringify(answer.json)} for ${path}`);
        throw new Error(`unexpected answer ${answer.status}: ${JSON.stringify(answer.json)}`);
      }
      await sleep(50);
    }
    throw new Error(`${path} not acknowledged after ${MAX_ATTEMPTS} attempts`);
  };
  const record = (m: Planned, answer: unknown) => {
    const id = (answer as { messageId?: unknown }).messageId;
    if (typeof id !== "string") throw new Error(`no messageId for ${m.seq}: ${JSON.stringify(answer)}`);
    books.acked.set(id, m);
  };

  for (let start = 0, n = 0; start < messages.length; start += chunk, n++) {
    const slice = messages.slice(start, start + chunk);
    if (n % 2 === 0) {
      const items = slice.map((m) => ({
        destination: destination(m),
        headers: publishHeaders(m),
        body: `ledger ${m.seq}`,
        ...(m.queue ? { queue: m.queue } : {}),
      }));
      const seqs = slice.map((m) => m.seq);
      const json = { "content-type": "application/json" };
      const answer = await sendUntilAcknowledged("/v2/batch", json, JSON.stringify(items), seqs);
      if (!Array.isArray(answer) || answer.length !== slice.length) {
        throw new Error(`batch answer does not match its ${slice.length} items: ${JSON.stringify(answer)}`);
      }
      slice.forEach((m, i) => record(m, answer[i]));
    } else {
      for (const m of slice) {
        const path = m.queue ? `/v2/enqueue/${m.queue}/${destination(m)}` : `/v2/publish/${destination(m)}`;
        record(m, await sendUntilAcknowledged(path, publishHeaders(m), `ledger ${m.seq}`, [m.seq]));
      }
    }
  }
}
