import net from "node:net";

/**
 * A TCP relay between Ferry's PostgreSQL clients and the test cluster that counts **turns**: the times a client
 * sent something after the server had answered (or first on a connection). Statements sent together, without
 * waiting for an answer in between, count once, however many there are; each round trip a client waits for counts
 * once more. So it tells how many round trips a piece of work cost, without any timing.
 */
export interface PgTurnCounter {
  /** A connection URL through the relay (same database, user and parameters as `url`). */
  url: string;
  /** Turns since the last reset, over every connection. */
  turns(): number;
  /**
   * Statements the clients sent since the last reset, over every connection: simple queries ('Q', as pg sends BEGIN
   * and COMMIT) and extended-protocol queries (each ends with a Sync, 'S').
   */
  statements(): number;
  reset(): void;
  close(): Promise<void>;
}

export async function pgTurnCounter(url: string): Promise<PgTurnCounter> {
  const target = new URL(url);
  let turns = 0;
  let statements = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client);
    sockets.add(upstream);
    /** True once the server answered since this client last sent: its next send is a new turn. */
    let answered = true;
    const count = statementCounter((n) => {
      statements += n;
    });
    client.on("data", (chunk: Buffer) => {
      if (answered) turns++;
      answered = false;
      count(chunk);
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      answered = true;
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", end);
    upstream.on("close", end);
    client.on("error", end);
    upstream.on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const relayed = new URL(url);
  relayed.hostname = "127.0.0.1";
  relayed.port = String((server.address() as net.AddressInfo).port);
  return {
    url: relayed.toString(),
    turns: () => turns,
    statements: () => statements,
    reset: () => {
      turns = 0;
      statements = 0;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Reads a client's stream of protocol messages (the first one untyped: the startup message, or the SSL request the
 * server declines with one byte before the startup) and reports the statements among them.
 */
function statementCounter(report: (n: number) => void): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  let untyped = true;
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    let n = 0;
    for (;;) {
      if (untyped) {
        if (pending.length < 8) break;
        const length = pending.readInt32BE(0);
        if (pending.length < length) break;
        // An SSL request (80877103) is followed by the startup message, also untyped.
        untyped = pending.readInt32BE(4) === 80877103;
        pending = pending.subarray(length);
        continue;
      }
      if (pending.length < 5) break;
      const length = pending.readInt32BE(1);
      if (pending.length < 1 + length) break;
      const type = String.fromCharCode(pending[0]!);
      if (type === "Q" || type === "S") n++;
      pending = pending.subarray(1 + length);
    }
    if (n > 0) report(n);
  };
}
