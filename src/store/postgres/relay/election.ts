import { randomBytes } from "node:crypto";
import { timerDelay } from "../../../domain/timers.js";
import { hostname } from "node:os";
import pg from "pg";
import type { Logger } from "pino";
import { clientConfig, type PgConnectionOptions } from "../connection.js";
import { RelayLink } from "./link.js";
import { RelayServer, type RelayTarget } from "./server.js";

/** Any fixed number (next to migrate.ts's): the session advisory lock the relay's leader holds. */
const LEADER_LOCK = 7_262_007;
/** How often a node checks who leads (and tries to lead when nobody does). */
const ELECTION_INTERVAL_MS = 1000;
/** A leader this node could not reach is not tried again before this long, unless the leader row changes. */
const UNREACHABLE_BACKOFF_MS = 5000;

export interface RelayElectionOptions {
  connection: PgConnectionOptions;
  /** Where this node listens when it leads, and what the others connect to; default: see `leaderAddress`. */
  host?: string;
  target: RelayTarget;
  log?: Logger;
}

interface LeaderRow {
  address: string;
  port: number;
  secret: string;
}

/**
 * Who commits the cluster's plain writes (docs/postgres.md "The write relay"): the node whose dedicated connection
 * holds the session advisory lock LEADER_LOCK leads; it listens for the other nodes and writes where it listens into
 * `relay_leader` (migration 071). Every other node checks that row every second and keeps one link to the leader.
 * A leader that dies loses its session, hence the lock, and the next node to try takes it. Nothing here is needed
 * for correctness: a node without a usable link writes itself, as every node did before the relay.
 */
export class RelayElection {
  private client: pg.Client | undefined;
  private server: RelayServer | undefined;
  private current: RelayLink | undefined;
  private unreachable: { row: LeaderRow; until: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();
  private closed = false;
  /** The last election check failed (logged once until one works again). */
  private failing = false;
  /** Once leading failed here (its address cannot be listened on), this node only follows. */
  private mayLead = true;

  constructor(private readonly o: RelayElectionOptions) {}

  start(): void {
    this.schedule(0);
  }

  /** The link to the leader when this node follows one it can reach; undefined: write locally. */
  link(): RelayLink | undefined {
    const link = this.current;
    if (link === undefined || !link.usable) return undefined;
    return link;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.ticking;
    this.current?.close();
    this.current = undefined;
    await this.stopLeading();
    await this.client?.end().catch(() => {});
    this.client = undefined;
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.ticking = this.tick()
        .then(() => {
          if (this.failing) this.o.log?.info("write relay: election checks work again");
          this.failing = false;
        })
        .catch((error: unknown) => {
          // Once per outage, not once a second: a database that is down says so through every other path too.
          if (!this.failing) this.o.log?.warn({ err: error }, "write relay: election check failed");
          this.failing = true;
        })
        .finally(() => this.schedule(ELECTION_INTERVAL_MS));
    }, timerDelay(delayMs));
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    const client = await this.connected();
    if (this.server !== undefined || this.closed) return;
    if (this.mayLead) {
      const [row] = (await client.query<{ got: boolean }>("SELECT pg_try_advisory_lock($1) AS got", [LEADER_LOCK])).rows;
      if (row?.got === true) {
        await this.lead(client);
        return;
      }
    }
    const [leader] = (await client.query<LeaderRow>("SELECT address, port, secret FROM relay_leader WHERE id = 1")).rows;
    this.follow(leader);
  }

  private async connected(): Promise<pg.Client> {
    if (this.client !== undefined) return this.client;
    const client = new pg.Client({ ...clientConfig(this.o.connection), application_name: "ferry-relay" });
    client.on("error", (error) => {
      this.o.log?.warn({ err: error }, "write relay: election connection lost");
      if (this.client === client) this.client = undefined;
      void this.stopLeading(); // the lock went with the session: another node may lead now
      void client.end().catch(() => {});
    });
    await client.connect();
    this.client = client;
    return client;
  }

  private follow(leader: LeaderRow | undefined): void {
    const now = Date.now();
    const link = this.current;
    if (link !== undefined && link.usable && leader !== undefined && sameLeader(link, leader)) return;
    if (link !== undefined && !link.usable && !link.connected) {
      this.unreachable = { row: { address: link.address, port: link.port, secret: link.secret }, until: now + UNREACHABLE_BACKOFF_MS };
    }
    link?.close(); // its unanswered calls fall back to local writes
    this.current = undefined;
    if (leader === undefined) return;
    const u = this.unreachable;
    if (u !== undefined && u.until > now && sameLeader(u.row, leader)) return;
    this.current = new RelayLink(leader.address, leader.port, leader.secret);
  }

  private async lead(client: pg.Client): Promise<void> {
    this.current?.close();
    this.current = undefined;
    const secret = randomBytes(24).toString("base64url");
    const address = this.o.host ?? (await leaderAddress(client));
    const server = new RelayServer(this.o.target, secret, this.o.log);
    let port: number;
    try {
      port = await server.listen(address);
    } catch (error) {
      this.o.log?.warn({ err: error, address }, "write relay: cannot listen there; this node will not lead");
      this.mayLead = false;
      await client.query("SELECT pg_advisory_unlock($1)", [LEADER_LOCK]);
      return;
    }
    try {
      await client.query(
        `INSERT INTO relay_leader (id, address, port, secret, node, since) VALUES (1, $1, $2, $3, $4, $5)
          ON CONFLICT (id) DO UPDATE SET address = $1, port = $2, secret = $3, node = $4, since = $5`,
        [address, port, secret, `${hostname()}/${process.pid}`, Date.now()],
      );
    } catch (error) {
      // Not announced: nobody would find this server. The lock goes back (the session may be gone with it already).
      await server.close();
      await client.query("SELECT pg_advisory_unlock($1)", [LEADER_LOCK]).catch(() => {});
      throw error;
    }
    this.server = server;
    this.o.log?.info({ address, port }, "write relay: this node leads");
  }

  private async stopLeading(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await server?.close();
  }
}

const sameLeader = (a: LeaderRow, b: LeaderRow) => a.address === b.address && a.port === b.port && a.secret === b.secret;

/**
 * The address the other nodes reach this one at: the one PostgreSQL sees this node's connection come from (they reach
 * the same database, so most likely this node too), or loopback when it came through a Unix socket. Set
 * FERRY_PG_RELAY_HOST where that guess is wrong (a proxy in between).
 */
async function leaderAddress(client: pg.Client): Promise<string> {
  const [row] = (await client.query<{ addr: string | null }>("SELECT host(inet_client_addr()) AS addr")).rows;
  return row?.addr ?? "127.0.0.1";
}
