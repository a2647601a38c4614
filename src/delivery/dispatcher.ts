import type { Logger } from "pino";
import type { Config } from "../config.js";
import type { Clock } from "../domain/clock.js";
import { RateLimitedLog } from "../logger.js";
import { logFailedAttempt } from "./failure-lines.js";
import type { DlqIdMinter } from "../domain/dlq-id.js";
import { canonicalHeaderName } from "../domain/headers.js";
import type { Message } from "../domain/message.js";
import type { DialectName, Dialects } from "../domain/dialect.js";
import type { PlanBook } from "../domain/plans.js";
import type { Account } from "../domain/records.js";
import type { StepDelivery } from "../domain/workflow.js";
import type { Store } from "../store/store.js";
import { recordAttempt } from "../metrics/delivery-metrics.js";
import { workflowSteps } from "../metrics/metrics.js";
import { DestinationGate } from "./destination-gate.js";
import { DestinationLoad } from "./destination-load.js";
import type { HttpClient } from "./http-client.js";
import { type CallbackBuilder, decideOutcome } from "./outcome.js";
import { deliveryHeaders } from "./request-headers.js";
import { timerDelay } from "../domain/timers.js";
import { failedRunEnd, prepareWorkflowAttempt, restTriggerAnswer, workflowAttempt } from "./workflow-delivery.js";
import { logEntry } from "../domain/log.js";

export interface DispatcherDeps {
  store: Store;
  clock: Clock;
  config: Pick<Config, "deliveryConcurrency" | "pollIntervalMs" | "leaseMs" | "destinationConcurrency">;
  /** A message is delivered in the dialect it was published in (`spec.dialect`; docs/messaging.md "Dialects"). */
  dialects: Dialects;
  /** The plan table in force: an attempt's timeout and response size come from the account's plan. */
  plans: PlanBook;
  log: Logger;
  nodeId: string;
  http: HttpClient;
  callbacks: CallbackBuilder;
  /** This process's DLQ id minter, numbered by the store (domain/dlq-id.ts). */
  dlqIds: DlqIdMinter;
}

/** Attempts that may wait for a busy destination, per slot of delivery concurrency. */
const WAITING_PER_SLOT = 4;

/**
 * A destination's share of the node's attempts, in units of its concurrency bound: as many waiting as sending, so
 * that a finishing attempt hands its slot to a waiting one without a claim, and a claim refills it in one go
 * (src/delivery/destination-load.ts).
 */
const DESTINATION_SHARE = 2;

/** Largest claim in one statement: keeps each group-commit transaction short. */
const MAX_CLAIM = 500;

/**
 * The delivery engine of one node: lease due messages, attempt them, record the outcome.
 * Push, then poll: publishes hand their messages over right after commit (deliverLeased / nudge), a timer is armed
 * for the next due message, and a poll every `pollIntervalMs` finds messages that other nodes wrote.
 * It keeps the loop contract of src/maintenance/loop.ts (start, stop, runOnce, running) without importing it, so that
 * delivery depends on nothing above it (docs/architecture.md); src/server.ts holds it as a `Loop`.
 */
export class Dispatcher {
  private reserved = 0;
  /** Attempts running on this node, by message id: the only leases this node renews. */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Attempts given up at the end of the shutdown grace: their outcome is never written (see stop). */
  private readonly abandoned = new Set<string>();
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private renewTimer: NodeJS.Timeout | undefined;
  /** Failed attempts and DLQ moves, one `info` line each, rate-limited per destination host (failure-lines.ts). */
  private failureLines: RateLimitedLog | undefined;
  private nudgeScheduled = false;
  private claiming: Promise<void> | undefined;
  private claimAgain = false;
  /** A claim stopped at capacity: the next completion must look for more work. */
  private starved = false;
  /** The response header that stops retries, per dialect (docs/messaging.md "Retries" and "Dialects"). */
  private readonly nonRetryableHeader = new Map<DialectName, string>();

  /** Attempts waiting here for a slot of their destination do not use the node's delivery concurrency. */
  private readonly gate: DestinationGate;
  /** Attempts held per destination: the claim gives none past a destination's share. */
  private readonly load: DestinationLoad;
  private readonly share: number;

  constructor(private readonly deps: DispatcherDeps) {
    const perDestination = deps.config.destinationConcurrency;
    this.gate = new DestinationGate(perDestination);
    // Refilled when half its waiting attempts are left: the claim has that many completions' time to come back
    // before a slot of the destination goes unused.
    const refillAt = perDestination + Math.floor(perDestination / 2);
    this.share = DESTINATION_SHARE * perDestination;
    this.load = new DestinationLoad(this.share, refillAt, () => this.nudge());
    for (const d of deps.dialects.all) {
      this.nonRetryableHeader.set(d.name, canonicalHeaderName(d.header("NonRetryable-Error")));
    }
  }

  get owner(): string {
    return this.deps.nodeId;
  }

  /** True between start() and stop(): claiming and renewing leases. */
  get running(): boolean {
    return !this.stopped;
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const { leaseMs } = this.deps.config;
    this.renewTimer = setInterval(() => void this.renewLeases(), timerDelay(Math.max(250, Math.floor(leaseMs / 3))));
    this.nudge();
  }

  /**
   * Stops claiming, then waits for in-flight attempts up to `graceMs`. What is still in flight then is abandoned
   * (docs/operations.md, "Stop"): its outcome is never written, not even as a failed attempt, and its lease ends now,
   * so it is delivered again after the restart (SQLite: the next start releases it; PostgreSQL: any node's rescuer
   * does) — at least once, nothing lost. The caller then closes the HTTP client, which aborts those requests.
   * Logs what it abandoned (count and up to 100 message ids).
   */
  async stop(graceMs = 0): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.renewTimer);
    await this.claiming;
    if (this.inFlight.size > 0) {
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.inFlight.values()]),
        new Promise((resolve) => {
          timeout = setTimeout(resolve, timerDelay(graceMs));
        }),
      ]);
      clearTimeout(timeout);
    }
    const ids = [...this.inFlight.keys()];
    if (ids.length === 0) return;
    for (const id of ids) this.abandoned.add(id);
    const { store, clock, log } = this.deps;
    await store.messageRenewLeases({ owner: this.owner, ids, leaseUntil: clock.now() }).catch((error: unknown) => {
      // They keep their lease until it expires (FERRY_LEASE_MS), then come back the same way.
      log.error({ err: error }, "ending the leases of abandoned deliveries failed");
    });
    log.warn(
      { abandoned: ids.length, messageIds: ids.slice(0, 100), graceMs },
      `shutdown grace of ${graceMs} ms ended: ${ids.length} in-flight deliveries abandoned; they are delivered again after the restart`,
    );
  }

  /**
   * Asks for a claim soon; many nudges in one turn become one claim. (Not a flow-control "wake", which releases a
   * key's wait list: docs/glossary.md.)
   */
  nudge(): void {
    if (this.stopped || this.nudgeScheduled) return;
    this.nudgeScheduled = true;
    setImmediate(() => {
      this.nudgeScheduled = false;
      void this.runOnce();
    });
  }

  /** A message becomes due at `at` (a delayed publish, for instance): make sure the timer fires by then. */
  noteDue(at: number): void {
    if (at < this.timerAt) this.arm(at);
  }

  /** Capacity for the publish fast path: up to `n` messages may be inserted already leased to this node. */
  reserve(n: number): number {
    if (this.stopped) return 0;
    const k = Math.max(0, Math.min(n, this.freeSlots()));
    this.reserved += k;
    return k;
  }

  /**
   * Hands over messages inserted leased to this node, and returns the reservations that went unused. `account`:
   * theirs, as the publish just read it, so the attempts need not read it again.
   */
  deliverLeased(
    messages: Message[],
    reservedCount: number,
    account?: Account,
    steps?: ReadonlyMap<string, StepDelivery>,
  ): void {
    this.reserved -= reservedCount;
    for (const m of messages) this.launch(m, account, steps?.get(m.id));
    if (messages.length < reservedCount) this.nudge();
  }

  runOnce(): Promise<void> {
    if (this.claiming) {
      this.claimAgain = true;
      return this.claiming;
    }
    this.claiming = this.claim().finally(() => {
      this.claiming = undefined;
    });
    return this.claiming;
  }

  private async claim(): Promise<void> {
    const { store, clock, config, log } = this.deps;
    let atCapacity = false;
    /** The destination share of the last claim (smaller while the waiting room is full). */
    let share = this.share;
    try {
      do {
        this.claimAgain = false;
        const free = this.freeSlots();
        const sendable = this.sendableSlots();
        if (sendable <= 0 || this.stopped) {
          this.starved = true;
          atCapacity = true;
          break;
        }
        // With the waiting room full, a claim still takes what can be sent at once: a destination then gets no more
        // than its concurrency bound, so nothing more waits, and a room full of one destination's attempts never
        // stops the others (docs/reliability.md "Isolation").
        const roomToWait = free > 0;
        share = roomToWait ? this.share : config.destinationConcurrency;
        // As at capacity, the next completion (which may free the waiting room) looks for more work.
        if (!roomToWait) this.starved = true;
        const now = clock.now();
        const limit = Math.min(roomToWait ? free : sendable, MAX_CLAIM);
        const batch = await store.messageLeaseDue({
          now,
          limit,
          owner: this.owner,
          leaseUntil: now + config.leaseMs,
          destinations: this.load.shares(share),
          ...(clock.liveOffsetMs ? { liveClockOffsetMs: clock.liveOffsetMs() } : {}),
        });
        const accounts = await this.accountsOf(batch);
        for (const m of batch) this.launch(m, accounts.get(m.accountId));
        if (batch.length === limit) this.claimAgain = true;
      } while (this.claimAgain && !this.stopped);
      // At capacity the next completion claims again (see launch): asking for the due time now would only spin.
      // A claim that walked past destinations at their share left their due messages on purpose: only later ones
      // arm the timer; those are claimed when their destination refills (DestinationLoad), or at the poll.
      const now = clock.now();
      const after = this.load.full(share).length > 0 ? { after: now } : {};
      const next = atCapacity ? undefined : await store.messageNextDueAt({ now, ...after });
      this.arm(Math.min(next ?? Number.POSITIVE_INFINITY, now + config.pollIntervalMs));
    } catch (error) {
      log.error({ err: error }, "claiming due messages failed; retrying after the poll interval");
      this.arm(clock.now() + config.pollIntervalMs);
    }
  }

  /**
   * Slots for new attempts: the delivery concurrency minus the attempts sending now and the reservations. Attempts
   * waiting for their destination (DestinationGate) are bounded apart, at WAITING_PER_SLOT times the concurrency,
   * so memory stays bounded (docs/reliability.md, "Isolation").
   */
  private freeSlots(): number {
    const { deliveryConcurrency } = this.deps.config;
    const waiting = this.gate.waiting;
    const sending = this.inFlight.size - waiting;
    return Math.min(deliveryConcurrency - sending, WAITING_PER_SLOT * deliveryConcurrency - waiting) - this.reserved;
  }

  /** Slots for attempts that can be sent at once: the delivery concurrency minus the attempts sending and reserved. */
  private sendableSlots(): number {
    const sending = this.inFlight.size - this.gate.waiting;
    return this.deps.config.deliveryConcurrency - sending - this.reserved;
  }

  private arm(at: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    // A message due in a year gets a timer of at most ~24.8 days; when it fires early, the claim finds nothing
    // due and arms again for what remains (src/domain/timers.ts).
    this.timer = setTimeout(() => {
      this.timerAt = Number.POSITIVE_INFINITY;
      void this.runOnce();
    }, timerDelay(at - this.deps.clock.now()));
  }

  /**
   * The accounts of a claimed batch, one read each, right after the claim: the attempts then go out without another
   * round trip to the database each, so a claim's starts reach their destinations together (a rate limit's window is
   * decided at the claim). An account that cannot be read now is read again by its attempt.
   */
  private async accountsOf(batch: Message[]): Promise<Map<string, Account>> {
    const ids = [...new Set(batch.map((m) => m.accountId))];
    const found = await Promise.all(ids.map((id) => this.deps.store.accountGet({ id }).catch(() => undefined)));
    return new Map(found.flatMap((a) => (a ? [[a.id, a] as const] : [])));
  }

  private launch(m: Message, account?: Account, step?: StepDelivery): void {
    // Counted against its destination's share until its request ends (or the attempt fails before sending): an
    // outcome still being written holds no connection, so it does not hold the destination's share either.
    this.load.add(m.url);
    let counted = true;
    const leave = () => {
      if (!counted) return;
      counted = false;
      this.load.remove(m.url);
    };
    const run: Promise<void> = this.attempt(m, leave, account, step)
      // The lease is no longer renewed: the rescuer makes the message due again once it expires.
      .catch((error: unknown) => this.deps.log.error({ err: error, messageId: m.id }, "delivery attempt failed"))
      .finally(() => {
        this.inFlight.delete(m.id);
        leave();
        if (this.starved) {
          this.starved = false;
          this.nudge();
        }
      });
    this.inFlight.set(m.id, run);
  }

  private async attempt(m: Message, leave: () => void, known?: Account, step?: StepDelivery): Promise<void> {
    const { store, clock, http } = this.deps;
    const dialect = this.deps.dialects.of(m.spec.dialect);
    const account = known ?? (await store.accountGet({ id: m.accountId }));
    if (!account) throw new Error(`account ${m.accountId} of message ${m.id} not found`);
    const limits = this.deps.plans.limitsOf(account);
    const timeoutMs = Math.min(m.spec.timeoutMs ?? Number.POSITIVE_INFINITY, limits.timeout * 1000);
    // A run's step carries the run's history instead of its stored body (docs/workflows.md "Deliveries").
    // Checked here so a plain message's attempt does not wait on a promise (the hot path, docs/threading.md). A step
    // this node appended and leased to itself comes with its run and history (deliverLeased): nothing to read.
    const workflow = step
      ? workflowAttempt(step, m, dialect)
      : m.spec.workflow
        ? await prepareWorkflowAttempt(store, m, dialect, clock.now())
        : undefined;
    if (workflow === "drop") return this.drop(m);
    const headers = deliveryHeaders({ message: m, dialect });
    if (workflow) Object.assign(headers, workflow.headers);
    const release = await this.gate.acquire(m.url);
    if (this.abandoned.has(m.id)) {
      release(); // abandoned while waiting for its destination: never sent
      return;
    }
    // Measured from when the destination's slot is held: the attempt, not the wait for its bound.
    const startedAt = clock.now();
    const response = await http
      .send({
        url: m.url,
        method: m.spec.method,
        headers,
        sign: {
          header: dialect.header("Signature"),
          key: account.currentSigningKey,
          issuer: dialect.issuer,
          nowMs: clock.now(),
        },
        body: workflow ? workflow.body : m.body,
        timeoutMs,
        maxBodyBytes: limits.max_message_size,
        // A success needs its answer's headers and body only for a callback (callbacks.ts) or a workflow step.
        statusOnlyOnSuccess: !workflow && m.spec.callback === undefined,
      })
      .finally(() => {
        release();
        leave();
      });
    // Abandoned at shutdown (stop): the request was aborted, and the message is delivered again after the restart.
    if (this.abandoned.has(m.id)) return;
    const now = clock.now();
    const decision = decideOutcome({
      message: m,
      response: workflow ? restTriggerAnswer(workflow, m, response, dialect) : response,
      now,
      nonRetryableHeader: this.nonRetryableHeader.get(dialect.name)!,
      callbacks: this.deps.callbacks,
      dlqIds: this.deps.dlqIds,
      ...(workflow ? { workflow: workflow.run } : {}),
    });
    const o = decision.outcome;
    const failureId = decision.newMessages.find((n) => n.kind === "failure_callback")?.id;
    const workflowEnd =
      workflow && o.kind === "failed" ? { workflowEnd: failedRunEnd(workflow.run, o.dlqId, now, failureId) } : {};
    const applied = await store.messageFinish({ message: m, owner: this.owner, now, ...decision, ...workflowEnd });
    if (!applied) this.deps.log.warn({ messageId: m.id }, "lease lost during the attempt; outcome dropped");
    else {
      recordAttempt(m, decision.outcome.kind, startedAt, now);
      if (workflow) workflowSteps.inc({ outcome: decision.outcome.kind });
    }
    if (decision.outcome.kind === "retry") this.noteDue(decision.outcome.dueAt);
    if (applied) {
      this.failureLines ??= new RateLimitedLog(this.deps.log);
      logFailedAttempt(this.failureLines, { message: m, response, outcome: decision.outcome, now });
    }
    // New callbacks are due now; a finished queue message (or the last callback of a HELD one) frees a queue slot;
    // the finish freed a slot of the message's flow-control key and of its account, so messages waiting for either
    // are released by the next claim. Claim now instead of at the next poll when such a bound can bind on this node.
    const mayReleaseWaiting =
      m.spec.flowControl !== undefined || limits.max_global_parallelism <= this.deps.config.deliveryConcurrency;
    if (decision.newMessages.length > 0 || m.queueName !== undefined || m.parentId !== undefined || mayReleaseWaiting) {
      this.nudge();
    }
  }

  /** A run's message whose run ended (or whose wait was notified): it ends without reaching the endpoint. */
  private async drop(m: Message): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.store.messageFinish({
      message: m,
      owner: this.owner,
      now,
      outcome: { kind: "canceled" },
      logs: [logEntry(m, "CANCELED", now)],
      newMessages: [],
    });
  }

  private async renewLeases(): Promise<void> {
    if (this.inFlight.size === 0) return;
    const now = this.deps.clock.now();
    try {
      await this.deps.store.messageRenewLeases({
        owner: this.owner,
        ids: [...this.inFlight.keys()],
        leaseUntil: now + this.deps.config.leaseMs,
      });
    } catch (error) {
      this.deps.log.error({ err: error }, "renewing leases failed");
    }
  }
}
