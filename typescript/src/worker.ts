/**
 * The queue worker: claim, run, renew while the handler runs, finish, as the Python `Worker`
 * does (python/agent_state/worker.py). Every finish names the claim's fencing token, so a worker
 * that lost its lease (paused, partitioned, declared dead) finishes nothing.
 *
 *     const worker = new Worker(client, async (job, ctx) => ({ ok: true }), { queue: "emails" });
 *     process.on("SIGTERM", () => worker.stop());
 *     await worker.run();                 // until stop(): claims stop, work in flight finishes
 *
 * - claim: `ai.claim_jobs` up to `concurrency` jobs, polling every `pollMs` when the queue is empty;
 * - renew: `ai.renew_leases` for every held job every third of the lease; a job missing from the
 *   answer is lost: its context's `signal` aborts and `ctx.check()` throws LeaseLost;
 * - finish: the handler's value completes the job (`ai.complete_job`), a throw fails it
 *   (`ai.fail_job`: retried with backoff until its attempts are spent), `ctx.requestHuman(...)`
 *   parks it for a person; a LeaseLost anywhere ends the attempt without a write;
 * - deadlines (docs/queue.md, "Deadlines"): at the attempt's deadline (claimed_at + the job's
 *   timeout, or its total deadline if sooner) the context's `signal` aborts with DeadlineExceeded,
 *   the worker stops waiting for the handler, never renews the lease again and writes nothing for
 *   it (the server's fence refuses what the handler still sends); the next claim retries the job,
 *   or dead-letters it after its last attempt;
 * - snooze: a handler that throws `new Snooze(seconds | Date)` (or calls `ctx.snooze(...)`) gives
 *   the job back until then without spending an attempt (`ai.snooze_job`);
 * - shutdown: `stop()` stops claiming and waits `graceMs` for the handlers in flight, then aborts
 *   them (their `signal`) and releases their jobs (`ai.release_job`: no attempt spent);
 * - a database error in the loop (a restart, a lost connection) is logged and retried after a backoff.
 */
import { randomUUID } from "node:crypto";
import os from "node:os";
import pg from "pg";
import { Client, idempotencyKey, type Fence } from "./client.js";
import { DeadlineExceeded, LeaseLost, OutcomeUnknown, SideEffectBusy, isConnectionError } from "./errors.js";
import type { AppendResult, Event, Job, MessageRole } from "./models.js";
import { Attempt, loadTracing } from "./tracing.js";

export type Handler = (job: Job, ctx: JobContext) => Promise<unknown>;

/** How long a side effect's finish lost with its connection is tried again (ms). */
export const FINISH_RETRY_MS = 120_000;
/** The longest sleep of the worker's loops while the database cannot be reached (ms): a refused
 * connection fails at once, so the worker is back within this long of the database. */
export const RECONNECT_PROBE_MS = 250;

export interface WorkerOptions {
  queue?: string;
  workerId?: string;
  leaseSeconds?: number;
  concurrency?: number;
  pollMs?: number;
  /** How long stop() waits for handlers in flight before it aborts them and releases their jobs. */
  graceMs?: number;
  log?: (message: string, error?: unknown) => void;
  /**
   * The connection of the worker's liveness hold (`ai.hold_worker_liveness`, kept open while it
   * runs): a claim takes the jobs of a worker whose hold is gone over at once, whatever their lease
   * (docs/queue.md, "Dead workers"). By default the pool's settings (a Client over a pg.Pool);
   * `false`, or a source that is no pool, takes none (the lease alone decides). It must reach the
   * server directly (or through a session pooler): through a transaction pooler no hold is taken.
   */
  liveness?: pg.ClientConfig | false;
}

export interface WorkerStats {
  claimed: number;
  completed: number;
  failed: number;
  lost: number;
  released: number;
  awaitingHuman: number;
  /** Attempts stopped at their deadline (the server retries the job, or dead-letters it). */
  timedOut: number;
  snoozed: number;
}

/**
 * Thrown by a handler to give its job back until later without spending an attempt (a rate
 * limit's retry_after): `throw new Snooze(30)` (seconds from the database's now) or
 * `throw new Snooze(date)`. The job is PENDING again, due then, and no worker takes it earlier.
 */
export class Snooze extends Error {
  readonly until: Date | number;

  constructor(until: Date | number) {
    super(`snooze until ${typeof until === "number" ? `${until} s from now` : until.toISOString()}`);
    this.name = "Snooze";
    this.until = until;
  }
}

/** Seconds of node-postgres's interval object (a month as 30 days), or null. */
export function intervalSeconds(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "number") return value;
  const v = value as Partial<Record<"years" | "months" | "days" | "hours" | "minutes" | "seconds" | "milliseconds", number>>;
  const days = (v.years ?? 0) * 360 + (v.months ?? 0) * 30 + (v.days ?? 0);
  return ((days * 24 + (v.hours ?? 0)) * 60 + (v.minutes ?? 0)) * 60 + (v.seconds ?? 0) + (v.milliseconds ?? 0) / 1000;
}

/** When a claimed job's attempt must end (database clock): claimed_at + timeout, or its deadline if sooner. */
export function attemptDeadline(job: Job): Date | null {
  const timeout = intervalSeconds(job.timeout);
  const ends = [
    job.deadline ?? null,
    timeout !== null && job.claimed_at ? new Date(job.claimed_at.getTime() + timeout * 1000) : null,
  ].filter((d): d is Date => d !== null);
  return ends.length === 0 ? null : new Date(Math.min(...ends.map((d) => d.getTime())));
}

/** What a side-effect function is given: the key to pass downstream, and whether a dead worker may have acted. */
export interface SideEffectCall {
  key: string;
  attempt: number;
  takenOver: boolean;
}

/** A claim's context: the job, its fence, an abort signal, and fenced writes for the handler. */
export class JobContext {
  readonly job: Job;
  readonly client: Client;
  private readonly controller = new AbortController();
  lostError: Error | null = null;
  humanRequested: string | null = null;
  /** When this attempt must end, on the database's clock (null: no deadline). */
  readonly deadline: Date | null;
  /** The attempt's deadline passed before the handler finished. */
  timedOut = false;
  /** The handler snoozed the job (ctx.snooze). */
  snoozed = false;
  /** The deadline on this process's monotonic clock (performance.now()), as far from the claim as the database put it. */
  private readonly deadlineAt: number | null;
  /** @internal Rejects when the signal aborts: the worker stops waiting for the handler then. */
  readonly aborted: Promise<never>;
  /** @internal The attempt's OpenTelemetry span (src/tracing.ts), null when tracing is off. */
  trace: Attempt | null = null;

  constructor(job: Job, client: Client) {
    this.job = job;
    this.client = client;
    this.deadline = attemptDeadline(job);
    this.deadlineAt =
      this.deadline && job.claimed_at ? performance.now() + (this.deadline.getTime() - job.claimed_at.getTime()) : null;
    this.aborted = new Promise<never>((_, reject) =>
      this.controller.signal.addEventListener("abort", () => reject(this.controller.signal.reason), { once: true }),
    );
    this.aborted.catch(() => undefined);
  }

  /** True once the handler should stop: the attempt's deadline passed, the lease was lost, or the worker shut down. */
  cancelled(): boolean {
    if (!this.lostError && this.pastDeadline()) this.timeOut();
    return this.controller.signal.aborted;
  }

  /** Milliseconds left until the attempt's deadline (0 once passed); null: no deadline. */
  timeLeftMs(): number | null {
    return this.deadlineAt === null ? null : Math.max(0, this.deadlineAt - performance.now());
  }

  /** @internal */
  pastDeadline(): boolean {
    return this.deadlineAt !== null && performance.now() >= this.deadlineAt;
  }

  /** @internal Aborts the signal at the attempt's deadline; returns the timer (null: no deadline). */
  armDeadline(): ReturnType<typeof setTimeout> | null {
    if (this.deadlineAt === null) return null;
    return setTimeout(() => this.timeOut(), Math.max(0, this.deadlineAt - performance.now()));
  }

  /** @internal */
  timeOut(): void {
    if (this.lostError) return;
    this.timedOut = true;
    this.abort(new DeadlineExceeded(`job ${this.job.job_id}: deadline exceeded`, { sqlstate: "AS006" }));
  }

  /** Aborted when the lease is lost or the worker shuts down past its grace period. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get fence(): Required<Fence> {
    return { jobId: this.job.job_id, fencingToken: this.job.fencing_token };
  }

  /** Throws LeaseLost when the claim is gone (before a write that must not happen twice), DeadlineExceeded past the attempt's deadline. */
  check(): void {
    if (!this.lostError && this.pastDeadline()) this.timeOut();
    if (this.lostError) throw this.lostError;
  }

  /** @internal */
  abort(error: Error): void {
    if (!this.lostError) this.lostError = error;
    if (!this.controller.signal.aborted) this.controller.abort(error);
  }

  private guard<T>(promise: Promise<T>): Promise<T> {
    return promise.catch((error: unknown) => {
      if (error instanceof LeaseLost) this.abort(error);
      throw error;
    });
  }

  /** A fenced, idempotent append to the job's thread. */
  appendMessage(
    role: MessageRole,
    content: unknown,
    options: { turn?: number; idempotencyKey?: string; tokenCount?: number } = {},
  ): Promise<AppendResult> {
    this.check();
    return this.guard(this.client.appendMessage(this.job.thread_id, role, content, { ...options, ...this.fence }));
  }

  recordEvent(kind: string, payload: unknown = {}): Promise<Event> {
    this.check();
    return this.guard(this.client.recordEvent(this.job.thread_id, kind, payload));
  }

  /**
   * The tool-call ledger: `fn` runs once per key (`idempotencyKey(...keyParts)`, the same key as
   * Python's `ctx.side_effect(*key_parts)`) in the thread, fenced on the job; a retry returns the
   * recorded result. `fn` throwing abandons the reservation (nothing happened outside) and rethrows.
   * Once `fn` returned, the reservation is never abandoned: a finish lost with its connection is
   * tried again (the same finish returns the stored row) for up to `finishRetryMs` (two minutes by
   * default), then OutcomeUnknown, the reservation left to its lease so the next attempt sees
   * `takenOver`. A tool either ran once, or its rerun is flagged.
   */
  async sideEffect<T>(
    keyParts: unknown[],
    fn: (call: SideEffectCall) => Promise<T> | T,
    request?: unknown,
    options: { finishRetryMs?: number } = {},
  ): Promise<T> {
    this.check();
    const key = idempotencyKey(...keyParts);
    const req = request ?? { key_parts: keyParts.map((p) => (p === null || p === undefined ? null : String(p))) };
    const span = this.trace?.sideEffect(String(keyParts[0]).slice(0, 100), key, this.job.thread_id, this.job.job_id);
    try {
      const begun = await this.guard(this.client.beginSideEffect(this.job.thread_id, key, req, this.fence));
      const outcome = begun.outcome === "done" ? "cached" : begun.outcome === "busy" ? "busy" : begun.taken_over ? "taken_over" : "executed";
      span?.setAttributes({ "agent_state.side_effect.outcome": outcome, "agent_state.side_effect.attempt": begun.attempt });
      return await this.runSideEffect(key, begun, fn, options);
    } catch (error) {
      if (span && this.trace) span.setStatus({ code: this.trace.api.SpanStatusCode.ERROR, message: String(error).slice(0, 500) });
      throw error;
    } finally {
      span?.end();
    }
  }

  private async runSideEffect<T>(
    key: string,
    begun: { outcome: string; attempt: number; taken_over: boolean; result: unknown },
    fn: (call: SideEffectCall) => Promise<T> | T,
    options: { finishRetryMs?: number },
  ): Promise<T> {
    if (begun.outcome === "done") return begun.result as T;
    if (begun.outcome === "busy") throw new SideEffectBusy(`side effect ${key} of thread ${this.job.thread_id} is held by a live claim`);
    let result: T;
    try {
      result = await fn({ key, attempt: begun.attempt, takenOver: begun.taken_over });
    } catch (error) {
      await this.client
        .abandonSideEffect(this.job.thread_id, key, { ...this.fence, error: String(error) })
        .catch(() => undefined);
      throw error;
    }
    const deadline = Date.now() + (options.finishRetryMs ?? FINISH_RETRY_MS);
    for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
      try {
        const row = await this.guard(this.client.finishSideEffect(this.job.thread_id, key, result ?? null, this.fence));
        return row.result as T;
      } catch (error) {
        if (!isConnectionError(error)) throw error;
        if (Date.now() + wait > deadline) {
          throw new OutcomeUnknown(
            `side effect ${key} of thread ${this.job.thread_id}: the tool ran but storing its result could not be ` +
              `confirmed (${String(error)}); the reservation is left to its lease, so the next attempt sees takenOver`,
            { sqlstate: String((error as { code?: unknown }).code ?? ""), cause: error },
          );
        }
        await delay(wait);
      }
    }
  }

  /** Parks the job for a person (`ai.request_human`); the handler should return right after. */
  async requestHuman(checkpointId: string, action: unknown = {}): Promise<string> {
    this.check();
    const approvalId = await this.guard(
      this.client.requestHuman(this.job.job_id, this.job.fencing_token, checkpointId, action),
    );
    this.humanRequested = approvalId;
    return approvalId;
  }

  /**
   * Gives the job back until `until` (a Date, or seconds from the database's now: a rate limit's
   * retry_after) without spending an attempt (`ai.snooze_job`); this claim holds it no more. The
   * handler should return right after (or throw `new Snooze(...)` instead).
   */
  async snooze(until: Date | number): Promise<void> {
    this.check();
    await this.guard(this.client.snoozeJob(this.job.job_id, this.job.fencing_token, until));
    this.snoozed = true;
    this.abort(new LeaseLost(`job ${this.job.job_id} snoozed`, { sqlstate: "AS006" }));
  }
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

export class Worker {
  readonly client: Client;
  readonly handler: Handler;
  readonly queue: string;
  readonly workerId: string;
  readonly leaseSeconds: number;
  readonly concurrency: number;
  readonly pollMs: number;
  readonly graceMs: number;
  readonly stats: WorkerStats = {
    claimed: 0,
    completed: 0,
    failed: 0,
    lost: 0,
    released: 0,
    awaitingHuman: 0,
    timedOut: 0,
    snoozed: 0,
  };
  private readonly log: (message: string, error?: unknown) => void;
  private readonly inFlight = new Map<number, { ctx: JobContext; done: Promise<void> }>();
  private readonly stopping = new AbortController();
  private releasing = false;
  private readonly closed = new AbortController();
  private readonly liveness: pg.ClientConfig | null;
  private otel: Awaited<ReturnType<typeof loadTracing>> = null;

  constructor(client: Client, handler: Handler, options: WorkerOptions = {}) {
    this.client = client;
    this.handler = handler;
    this.queue = options.queue ?? "default";
    this.workerId = options.workerId ?? `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.leaseSeconds = options.leaseSeconds ?? 60;
    this.concurrency = options.concurrency ?? 1;
    this.pollMs = options.pollMs ?? 500;
    this.graceMs = options.graceMs ?? 30_000;
    const source = client.source as { options?: pg.ClientConfig; totalCount?: number };
    this.liveness =
      options.liveness === false ? null : (options.liveness ?? (source.totalCount !== undefined ? (source.options ?? null) : null));
    this.log = options.log ?? ((message, error) => console.error(`agent-state worker ${this.workerId}: ${message}`, error ?? ""));
  }

  /** Stops claiming; run() returns once the work in flight finished (or was released after graceMs). */
  stop(): void {
    this.stopping.abort();
  }

  /**
   * Claims and runs jobs until stop() (or, with `drain`, until the queue has no due job and
   * nothing is in flight). Returns the worker's stats.
   */
  async run(options: { drain?: boolean } = {}): Promise<WorkerStats> {
    const renewal = setInterval(() => void this.renew(), Math.max(100, (this.leaseSeconds * 1000) / 3));
    const liveness = this.keepLiveness();
    this.otel = await loadTracing(); // null without @opentelemetry/api or with AGENT_STATE_OTEL=off
    let backoff = 100;
    // One request id until a claim is answered: a claim whose answer was lost is asked again under
    // it and answers with the jobs it took (docs/queue.md, "Lost answers").
    let requestId: string | null = null;
    try {
      while (!this.stopping.signal.aborted) {
        const free = this.concurrency - this.inFlight.size;
        let claimed: Job[] = [];
        if (free > 0) {
          requestId ??= randomUUID();
          try {
            claimed = await this.client.claimJobs(this.workerId, this.leaseSeconds, this.queue, free, requestId);
            requestId = null;
            backoff = 100;
          } catch (error) {
            this.log("claim failed; retrying", error);
            // A lost database is probed often (a refused connection fails at once): back within
            // RECONNECT_PROBE_MS of it, whatever the outage's length. Other errors back off to 5 s.
            await delay(isConnectionError(error) ? Math.min(backoff, RECONNECT_PROBE_MS) : backoff, this.stopping.signal);
            backoff = Math.min(backoff * 2, 5000);
            continue;
          }
        }
        for (const job of claimed) this.start(job);
        if (claimed.length > 0) continue;
        if (options.drain && this.inFlight.size === 0) break;
        const running = [...this.inFlight.values()].map((f) => f.done);
        await Promise.race([delay(this.pollMs, this.stopping.signal), ...(free > 0 ? [] : running)]);
      }
      await this.shutdown();
    } finally {
      clearInterval(renewal);
      this.closed.abort();
      await liveness;
    }
    return this.stats;
  }

  /**
   * Keeps the worker's liveness hold on a connection of its own, taken again on a new connection
   * as soon as that one is lost; given up when run() ends (see WorkerOptions.liveness).
   */
  private async keepLiveness(): Promise<void> {
    if (this.liveness === null) return;
    let backoff = 100;
    while (!this.closed.signal.aborted) {
      const conn = new pg.Client(this.liveness);
      conn.on("error", () => undefined); // a lost connection: the next query fails, and we reconnect
      try {
        await conn.connect();
        const { rows } = await conn.query<{ pid: number }>("select pg_backend_pid() as pid");
        // A pooler announces a key of its own at connect, not the pid of the server process.
        if (rows[0]?.pid !== (conn as unknown as { processID: number }).processID) {
          this.log("the liveness connection goes through a pooler: no liveness hold (the lease alone decides)");
          await conn.end();
          return;
        }
        for (;;) {
          const held = await conn.query<{ held: boolean }>("select ai.hold_worker_liveness($1) as held", [this.workerId]);
          if (held.rows[0]?.held) break;
          await delay(1000, this.closed.signal); // held elsewhere: the same workerId twice
          if (this.closed.signal.aborted) break;
        }
        backoff = 100;
        // Until run() ends, or the server closes the connection (noticed at once: the hold is
        // taken again on a new one; a claim waits half a second before it takes a free hold for dead).
        await new Promise<void>((resolve, reject) => {
          if (this.closed.signal.aborted) return resolve();
          this.closed.signal.addEventListener("abort", () => resolve(), { once: true });
          conn.once("end", () => reject(new Error("the liveness connection ended")));
          conn.once("error", (error) => reject(error));
        });
        await conn.query("select ai.release_worker_liveness($1)", [this.workerId]);
        await conn.end();
        return;
      } catch (error) {
        this.log("liveness hold failed; retrying", error);
        void conn.end().catch(() => undefined);
        await delay(backoff, this.closed.signal);
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  private async shutdown(): Promise<void> {
    if (this.inFlight.size === 0) return;
    const all = Promise.all([...this.inFlight.values()].map((f) => f.done));
    const timedOut = await Promise.race([all.then(() => false), delay(this.graceMs).then(() => true)]);
    if (!timedOut) return;
    this.releasing = true;
    for (const [, { ctx }] of this.inFlight) {
      ctx.abort(new LeaseLost("worker shutting down: job released", { sqlstate: "AS006" }));
      try {
        await this.client.releaseJob(ctx.job.job_id, ctx.job.fencing_token);
        this.stats.released += 1;
        ctx.trace?.end("released");
        ctx.trace = null;
      } catch (error) {
        this.log(`release of job ${ctx.job.job_id} failed (its lease will expire)`, error);
      }
    }
    await all;
  }

  private start(job: Job): void {
    this.stats.claimed += 1;
    const ctx = new JobContext(job, this.client);
    const timer = ctx.armDeadline(); // the signal aborts at the attempt's deadline
    if (this.otel !== null) ctx.trace = new Attempt(this.otel, job, this.workerId);
    const done = this.execute(job, ctx).finally(() => {
      if (timer !== null) clearTimeout(timer);
      this.inFlight.delete(job.job_id);
    });
    this.inFlight.set(job.job_id, { ctx, done });
  }

  private async execute(job: Job, ctx: JobContext): Promise<void> {
    const outcome = await this.attempt(job, ctx);
    ctx.trace?.end(outcome.name, outcome.error); // the attempt's span, when tracing is on
    ctx.trace = null;
  }

  /** Runs the handler (in its span's context) and finishes the job; says how the attempt ended. */
  private async attempt(job: Job, ctx: JobContext): Promise<{ name: string; error?: unknown }> {
    let result: unknown;
    // The handler is not waited for past an abort (its deadline, a lost lease, the shutdown):
    // what it still sends is refused by its context and the fence.
    const trace = ctx.trace; // the handler runs with its attempt's span current
    const running = Promise.resolve().then(() =>
      trace && this.otel ? this.otel.context.with(trace.context, () => this.handler(job, ctx)) : this.handler(job, ctx),
    );
    running.catch(() => undefined);
    try {
      result = await Promise.race([running, ctx.aborted]);
      ctx.check();
    } catch (error) {
      if (ctx.snoozed) {
        this.stats.snoozed += 1;
        return { name: "snoozed" };
      }
      if (ctx.timedOut) {
        this.stats.timedOut += 1;
        return { name: "timed_out" };
      }
      if (error instanceof Snooze && !ctx.lostError) {
        try {
          await this.client.snoozeJob(job.job_id, job.fencing_token, error.until);
          this.stats.snoozed += 1;
          return { name: "snoozed" };
        } catch (snoozeError) {
          return { name: this.finishError(job, snoozeError) };
        }
      }
      if (error instanceof LeaseLost || ctx.lostError) {
        if (!this.releasing) this.stats.lost += 1;
        return { name: this.releasing ? "released" : "lost" };
      }
      try {
        await this.client.failJob(job.job_id, job.fencing_token, error instanceof Error ? `${error.name}: ${error.message}` : String(error));
        this.stats.failed += 1;
        return { name: "failed", error };
      } catch (failError) {
        return { name: this.finishError(job, failError) };
      }
    }
    if (ctx.humanRequested !== null) {
      this.stats.awaitingHuman += 1;
      return { name: "paused" };
    }
    // Sent again after a lost connection until the database answers: a completion under the same
    // token is idempotent, and a database outage does not count against the lease (docs/queue.md,
    // "Leases and outages"). LeaseLost, or any other error, ends it.
    let backoff = 100;
    for (;;) {
      try {
        await this.client.completeJob(job.job_id, job.fencing_token, result ?? null);
        this.stats.completed += 1;
        return { name: "completed" };
      } catch (error) {
        if (!isConnectionError(error)) {
          return { name: this.finishError(job, error) };
        }
        this.log(`completing job ${job.job_id} failed; retrying`, error);
        await delay(Math.min(backoff, RECONNECT_PROBE_MS));
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  private finishError(job: Job, error: unknown): string {
    if (error instanceof LeaseLost) {
      this.stats.lost += 1;
      return "lost";
    }
    this.log(`finishing job ${job.job_id} failed (its lease will expire and the job run again)`, error);
    return "lost";
  }

  private async renew(): Promise<void> {
    // never past an attempt's deadline (the server caps the lease there anyway)
    const held = [...this.inFlight.values()].map((f) => f.ctx).filter((ctx) => !ctx.lostError && !ctx.pastDeadline());
    if (held.length === 0) return;
    try {
      const renewed = await this.client.renewLeases(
        this.workerId,
        held.map((ctx) => ctx.job.job_id),
        held.map((ctx) => ctx.job.fencing_token),
        this.leaseSeconds,
      );
      const kept = new Set(renewed.map((r) => r.job_id));
      for (const ctx of held) {
        if (!kept.has(ctx.job.job_id)) ctx.abort(new LeaseLost(`lease of job ${ctx.job.job_id} lost`, { sqlstate: "AS006" }));
      }
    } catch (error) {
      this.log("renewing leases failed; retrying at the next tick", error);
    }
  }
}
