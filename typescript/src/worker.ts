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
 * - shutdown: `stop()` stops claiming and waits `graceMs` for the handlers in flight, then aborts
 *   them (their `signal`) and releases their jobs (`ai.release_job`: no attempt spent);
 * - a database error in the loop (a restart, a lost connection) is logged and retried after a backoff.
 */
import { randomUUID } from "node:crypto";
import os from "node:os";
import pg from "pg";
import { Client, idempotencyKey, type Fence } from "./client.js";
import { LeaseLost, OutcomeUnknown, SideEffectBusy, isConnectionError } from "./errors.js";
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
  /** @internal The attempt's OpenTelemetry span (src/tracing.ts), null when tracing is off. */
  trace: Attempt | null = null;

  constructor(job: Job, client: Client) {
    this.job = job;
    this.client = client;
  }

  /** Aborted when the lease is lost or the worker shuts down past its grace period. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get fence(): Required<Fence> {
    return { jobId: this.job.job_id, fencingToken: this.job.fencing_token };
  }

  /** Throws LeaseLost when the claim is gone (before a write that must not happen twice). */
  check(): void {
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
  readonly stats: WorkerStats = { claimed: 0, completed: 0, failed: 0, lost: 0, released: 0, awaitingHuman: 0 };
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
    if (this.otel !== null) ctx.trace = new Attempt(this.otel, job, this.workerId);
    const done = this.execute(job, ctx).finally(() => this.inFlight.delete(job.job_id));
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
    try {
      const trace = ctx.trace;
      result = await (trace && this.otel ? this.otel.context.with(trace.context, () => this.handler(job, ctx)) : this.handler(job, ctx));
      ctx.check();
    } catch (error) {
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
    const held = [...this.inFlight.values()].map((f) => f.ctx).filter((ctx) => !ctx.lostError);
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
