/**
 * The thin client: one method per SQL function of the `ai` schema that a TypeScript service
 * needs, over node-postgres. Every method is one round trip, `select * from ai.<function>(...)`:
 * the only work done here is encoding (arguments to parameters, rows to typed objects, SQLSTATEs
 * to typed errors). The logic lives in the database.
 *
 * The client holds no connection of its own: give it a `pg.Pool` (each call borrows a
 * connection for one statement) or a `pg.Client` / `PoolClient` (calls run on it, in the
 * caller's transaction if one is open).
 *
 * Poolers: statements are sent unnamed (node-postgres prepares a named statement only when a
 * query is given a `name`, which this client never does), and no session state is kept, so the
 * client works through PgBouncer in transaction pooling as it is.
 */
import { createHash, randomUUID } from "node:crypto";
import pg from "pg";
import { OutcomeUnknown, isConnectionError, translate } from "./errors.js";
import { injectHeaders } from "./tracing.js";
import type {
  AppendResult,
  Approval,
  ArchivedSession,
  CheckpointSummary,
  CheckpointRow,
  ChannelValue,
  ContextWindow,
  LineageStep,
  RetrievalRecord,
  TurnContext,
  EvalRun,
  Event,
  Fork,
  Job,
  JobAttempt,
  JobKeyStatus,
  Json,
  MemoryItem,
  MemoryOp,
  MemoryRestore,
  Message,
  MessageRole,
  NewJob,
  NewMessage,
  PendingWriteRow,
  PruneBatch,
  QueueStats,
  QueueThroughput,
  RenewedLease,
  Session,
  SessionStatus,
  SideEffect,
  SideEffectBegin,
  StreamChunk,
  StreamState,
  TrajectoryStep,
  UsageRecord,
  UsageSummaryRow,
} from "./models.js";

/** What a Client runs its statements on. */
export type Source = pg.Pool | pg.PoolClient | pg.Client;

/** How a Client over a pool retries (every field optional; see the Client constructor). */
export interface RetryPolicy {
  timeoutMs?: number;
  firstDelayMs?: number;
  maxDelayMs?: number;
}

const DEFAULT_RETRY: Required<RetryPolicy> = { timeoutMs: 120_000, firstDelayMs: 50, maxDelayMs: 1000 };

const always = () => true;
const given = (position: number) => (values: unknown[]) => values.length > position && values[position] !== null && values[position] !== undefined;

/** The calls that only read, as Python's `agent_state.retry.READS`. */
export const READS: ReadonlySet<string> = new Set([
  "now", "ulid", "ulid_time", "get_session", "get_messages", "get_events", "context_window", "trajectory",
  "get_eval_runs", "get_checkpoint", "list_checkpoints", "checkpoint_lineage", "checkpoints_between",
  "get_job", "queue_stats", "get_side_effect", "idempotency_key", "pending_approvals", "get_approval",
  "visible_messages", "usage_summary", "get_turn_context", "get_stream", "read_stream", "job_attempts",
  "delta_channel_history", "queue_throughput", "session_status_counts", "list_streams", "list_forks",
  "current_owner", "list_jobs", "job_key_status",
]);

/** SQL function -> whether a call with these arguments is safe to retry, as Python's `agent_state.retry.IDEMPOTENT`. */
export const IDEMPOTENT: Readonly<Record<string, (values: unknown[]) => boolean>> = Object.freeze({
  ...Object.fromEntries([...READS].map((name) => [name, always])),
  append_message_idempotent: always,
  put_writes: always,
  renew_lease: always,
  renew_leases: always,
  create_session: given(0),
  put_checkpoint: given(2),
  enqueue_job: given(6), // the client gives one to a call without (docs/queue.md, "Lost answers")
  claim_jobs: given(4), // with a request id: a retry answers with the same jobs
  complete_job: always, // a retry under the same token answers with the completed job
  complete_jobs: always, // a retry answers with the jobs completed under the same tokens
  complete_and_claim: given(4), // both halves: the same tokens, the same request id
  append_messages: always,
  record_usage: always,
  record_retrieval: always,
  open_stream: always,
  append_stream_chunks: always,
  finish_stream: always,
  abandon_stream: always,
  finish_side_effect: always,
  enqueue_jobs: (values) => Array.isArray(values[5]) && values[5].every((key) => key !== null && key !== undefined), // every job keyed (the client keys the rest)
  set_job_key: always, // sets the same weight and limits again
  set_queue_deadlines: always, // sets the same defaults again
});

/** A fencing pair: the job a write belongs to and the token of the claim that holds it. */
export interface Fence {
  jobId?: number | null;
  fencingToken?: number | null;
}

const INT8 = 20;
const INT8_ARRAY = 1016;
const base = pg.types;
/** Type parsers of this client's queries only (the caller's pool keeps its own): bigint as number. */
const TYPES = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8) return (value: string) => Number(value);
    if (oid === INT8_ARRAY) {
      const parseArray = (base.getTypeParser as any)(INT8_ARRAY, "text") as (v: string) => (string | null)[];
      return (value: string) => parseArray(value).map((v) => (v === null ? null : Number(v)));
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return (base.getTypeParser as any)(oid, format ?? "text");
  },
} as unknown as pg.CustomTypesConfig;

/** A jsonb parameter: node-postgres would send a JS array as a Postgres array, so JSON is stringified here. */
export function jsonParam(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

/** An interval parameter from seconds. */
export function secondsParam(seconds: number | null | undefined): string | null {
  return seconds === undefined || seconds === null ? null : `${seconds} seconds`;
}

/**
 * The key `ai.idempotency_key` computes, without a round trip (the same as Python's
 * `agent_state.side_effects.idempotency_key`): sha256 (hex) over the parts, each as text and
 * length-prefixed, null distinct from "". Numbers and strings give the same key in both languages.
 */
export function idempotencyKey(...parts: unknown[]): string {
  if (parts.length === 0) throw new Error("idempotencyKey needs at least one part");
  const buf = parts
    .map((p) => {
      if (p === null || p === undefined) return "N;";
      const s = String(p);
      return `${[...s].length}:${s};`;
    })
    .join("");
  return createHash("sha256").update(buf, "utf8").digest("hex");
}

/**
 * The single-host URLs of a libpq URL that may name several hosts
 * (`postgresql://user@h1:5432,h2:5432/db?target_session_attrs=read-write`), in order, and whether
 * it asks for a writable server. node-postgres reads one host only.
 */
export function connectionTargets(connectionString: string): { targets: string[]; readWrite: boolean } {
  const match = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)(\?[^#]*)?$/.exec(connectionString);
  if (!match) return { targets: [connectionString], readWrite: false };
  const [, scheme, auth, hostList, path, query] = match;
  const params = new URLSearchParams((query ?? "").replace(/^\?/, ""));
  const attrs = params.get("target_session_attrs");
  params.delete("target_session_attrs");
  const rest = `${path ?? ""}${params.toString() ? `?${params.toString()}` : ""}`;
  const hosts = (hostList ?? "").split(",");
  return {
    targets: hosts.map((host) => `${scheme}${auth !== undefined ? `${auth}@` : ""}${host}${rest}`),
    readWrite: attrs === "read-write" || attrs === "primary",
  };
}

/**
 * A `pg.Pool` for a libpq URL, several hosts included: each new connection tries the hosts in
 * order and, with `target_session_attrs=read-write` (or `primary`), keeps the first one that is
 * writable (`transaction_read_only` off), as libpq does. After a failover the pool's next
 * connections reach the new primary (`pg.Pool` drops a connection that broke). A one-host URL
 * gives a plain `pg.Pool`. The pool logs nothing for a connection that broke while idle (an
 * `error` listener is attached: without one, node-postgres would throw it).
 */
export function poolFromConnString(connectionString: string, config: pg.PoolConfig = {}): pg.Pool {
  const { targets, readWrite } = connectionTargets(connectionString);
  const pool =
    targets.length === 1 && !readWrite
      ? new pg.Pool({ ...config, connectionString })
      : new pg.Pool({ ...config, connectionString: targets[0], Client: failoverClient(targets, readWrite) });
  pool.on("error", () => undefined); // an idle connection the server ended: the pool drops it
  return pool;
}

/** A pg.Client class whose connect() picks the first host that answers (and is writable, when asked). */
function failoverClient(targets: string[], readWrite: boolean): typeof pg.Client {
  return class FailoverClient extends pg.Client {
    private readonly baseConfig: pg.ClientConfig;

    constructor(config: pg.ClientConfig) {
      super(config);
      this.baseConfig = config;
    }

    private async pick(): Promise<void> {
      const failures: string[] = [];
      for (const target of targets) {
        const probe = new pg.Client({ ...this.baseConfig, connectionString: target });
        probe.on("error", () => undefined);
        try {
          await probe.connect();
          if (readWrite) {
            const { rows } = await probe.query("show transaction_read_only");
            if (rows[0]?.transaction_read_only === "on") {
              failures.push(`${target}: session is read-only`);
              continue;
            }
          }
          // this client connects where the probe did
          const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
          self.host = self.connectionParameters.host = (probe as unknown as { host: string }).host;
          self.port = self.connectionParameters.port = (probe as unknown as { port: number }).port;
          return;
        } catch (error) {
          failures.push(`${target}: ${String(error)}`);
        } finally {
          await probe.end().catch(() => undefined);
        }
      }
      throw new Error(`no host accepted the connection: ${failures.join("; ")}`);
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    override connect(callback?: (...args: any[]) => void): any {
      const connected = this.pick().then(() => super.connect());
      if (!callback) return connected;
      connected.then(
        () => callback(null, this),
        (error: Error) => callback(error),
      );
      return undefined;
    }
  } as unknown as typeof pg.Client;
}

function isPool(source: Source): source is pg.Pool {
  return source instanceof pg.Pool || ("totalCount" in source && "idleCount" in source);
}

/** How many times a call is sent again after a deploy changed a row type under its plan (as Python's client). */
const MAX_REPLANS = 3;

/**
 * A statement planned before a deploy changed the row type a function returns (a column added to
 * ai.agent_jobs under a live fleet), as Python's `agent_state.client._stale_plan`: the call was
 * planned with the old row type and ran after the deploy committed (it waited for the deploy's
 * lock inside the function), or a plan cached inside a PL/pgSQL function (or a prepared
 * statement) outlived the change. Postgres does not plan it again and the statement fails whole;
 * `DISCARD PLANS` and a second try plan it anew.
 */
export function isStalePlan(error: unknown): boolean {
  if (error === null || typeof error !== "object") return false;
  const code = (error as { code?: unknown }).code;
  const message = String((error as { message?: unknown }).message ?? "");
  if (code === "0A000") return message.includes("cached plan must not change result type");
  return (
    code === "42804" &&
    (message.includes("return row and query-specified return row do not match") ||
      message.includes("wrong record type supplied in RETURN NEXT"))
  );
}

/** Whether a call that failed on `source` ran in the caller's transaction (never sent again then). */
function inCallersTransaction(source: Source): boolean {
  if (isPool(source)) return false; // each call borrows a connection for its one statement
  const status = (source as { getTransactionStatus?: () => string | null }).getTransactionStatus?.();
  return status !== "I"; // after the failure: idle unless a transaction of the caller's is open (or unknown)
}

/** A call of a pool sent again: on one connection, after DISCARD PLANS (the pool's other connections may hold stale plans). */
async function replanned<T>(pool: pg.Pool, text: string, values: unknown[]): Promise<T[]> {
  const conn = await pool.connect();
  try {
    await conn.query("discard plans");
    const result = await conn.query({ text, values, types: TYPES });
    conn.release();
    return result.rows as T[];
  } catch (error) {
    conn.release(error as Error); // as pool.query does with a connection whose statement failed
    throw error;
  }
}

function appendResult(row: Record<string, unknown>): AppendResult {
  const { inserted, ...message } = row;
  return { message: message as unknown as Message, inserted: inserted as boolean };
}

function bytes(value: Uint8Array | null): Buffer | null {
  if (value === null) return null;
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

/**
 * The arguments of ai.put_checkpoint by name: the checkpoint, its new channel values (the record
 * ai.checkpoint_values), one task's held writes (ai.task_writes), messages, and how it commits
 * (ai.step_commit: the job's fence and the durability).
 */
export interface PutCheckpointArgs extends Fence {
  threadId: string;
  checkpointNs?: string;
  checkpointId?: string | null;
  parentCheckpointId?: string | null;
  type: string;
  checkpoint: Uint8Array;
  metadata?: Record<string, unknown>;
  channelVersions?: Record<string, string | number>;
  values?: ChannelValue[];
  durability?: "sync" | "async";
  /** One task's pending writes for the parent checkpoint, stored in the same transaction. */
  writes?: { taskId: string; taskPath?: string; writes: PendingWriteRow[] };
  /** Messages appended to the thread in the same transaction (as appendMessages takes them). */
  messages?: NewMessage[];
}

export class Client {
  readonly source: Source;
  /** The retry policy of a client over a pool (`{ retry: {} }` for the defaults), or null. */
  readonly retry: Required<RetryPolicy> | null;

  /**
   * `options.retry` (over a pg.Pool only), as Python's `RetryPolicy`: after a connection error a
   * call safe to retry (`IDEMPOTENT`) is tried again on another connection, and any call whose
   * tries wrote nothing (refused as read-only, 25006, or failed before it was sent) likewise,
   * for up to `timeoutMs` (120 s), sleeping from `firstDelayMs` (50) doubling to `maxDelayMs`
   * (1000). A connection refused as read-only is destroyed, so the pool's next one can reach
   * the new primary. A write that may have committed is not run again: OutcomeUnknown.
   */
  constructor(source: Source, options: { retry?: RetryPolicy } = {}) {
    this.source = source;
    this.retry = options.retry && isPool(source) ? { ...DEFAULT_RETRY, ...options.retry } : null;
  }

  /**
   * Runs one statement; rows as objects; our SQLSTATEs as typed errors. A statement planned before
   * a deploy changed the row type it returns (`isStalePlan`) is sent again after `DISCARD PLANS`,
   * at most three times, unless it ran in the caller's transaction: it failed whole, so it wrote
   * nothing (docs/operations.md, "Upgrading under a live fleet").
   */
  async query<T = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> {
    if (this.retry !== null) return this.retried<T>(text, values, this.retry);
    for (let replans = 0; ; replans += 1) {
      try {
        if (replans > 0 && isPool(this.source)) return await replanned<T>(this.source, text, values);
        if (replans > 0) await this.source.query("discard plans");
        const result = await this.source.query({ text, values, types: TYPES });
        return result.rows as T[];
      } catch (error) {
        if (replans < MAX_REPLANS && isStalePlan(error) && !inCallersTransaction(this.source)) continue;
        throw translate(error);
      }
    }
  }

  private async retried<T>(text: string, values: unknown[], policy: Required<RetryPolicy>): Promise<T[]> {
    const pool = this.source as pg.Pool;
    const name = /\bai\.([a-z_]+)\s*\(/.exec(text)?.[1] ?? "";
    const safe = IDEMPOTENT[name]?.(values) ?? false;
    const deadline = Date.now() + policy.timeoutMs;
    let mayHaveCommitted = false;
    let replans = 0;
    for (let wait = policy.firstDelayMs; ; ) {
      let conn: pg.PoolClient | undefined;
      let sent = false;
      try {
        conn = await pool.connect();
        if (replans > 0) await conn.query("discard plans");
        sent = true;
        const result = await conn.query({ text, values, types: TYPES });
        conn.release();
        return result.rows as T[];
      } catch (error) {
        const readOnly = (error as { code?: unknown }).code === "25006";
        conn?.release(readOnly || isConnectionError(error) ? (error as Error) : undefined); // a broken or read-only one is destroyed
        if (replans < MAX_REPLANS && isStalePlan(error)) {
          // planned before a deploy changed a row type: it failed whole (nothing written), sent again at once
          replans += 1;
          continue;
        }
        if (sent && !readOnly) mayHaveCommitted = true;
        const again = isConnectionError(error) && (safe || !mayHaveCommitted) && Date.now() + wait <= deadline;
        if (!again) {
          if (mayHaveCommitted && isConnectionError(error) && !READS.has(name)) {
            throw new OutcomeUnknown(
              `the connection was lost during ai.${name}(): it may or may not have committed, and it was not run again (${String(error)})`,
              { sqlstate: String((error as { code?: unknown }).code ?? ""), cause: error },
            );
          }
          throw translate(error);
        }
        await new Promise((resolve) => setTimeout(resolve, wait * (1 - 0.5 * Math.random())));
        wait = Math.min(wait * 2, policy.maxDelayMs);
      }
    }
  }

  /**
   * A call that is safe to run again by construction (a claim under its request id, a completion
   * under its token, an enqueue under its key), run again after a lost connection (or its
   * OutcomeUnknown) even without a retry policy: a pool hands out another connection (a single
   * client whose connection is gone fails again, and that error reaches the caller). Up to
   * `tries` tries, 100 ms then 200 ms apart (docs/queue.md, "Lost answers").
   */
  private async retryLostAnswer<T>(run: () => Promise<T>, tries = 3): Promise<T> {
    for (let n = 1; ; n += 1) {
      try {
        return await run();
      } catch (error) {
        if (n >= tries || !isConnectionError(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * n));
      }
    }
  }

  private async one<T>(text: string, values: unknown[]): Promise<T> {
    const rows = await this.query<T>(text, values);
    return rows[0] as T;
  }

  private async scalar<T>(text: string, values: unknown[]): Promise<T> {
    const row = await this.one<{ value: T }>(text, values);
    return row.value;
  }

  /**
   * Runs `fn` with a client bound to one transaction in which this service acts for `owner`
   * (`ai.act_as`, members of ai_service): everything `fn` calls commits together, as `owner`.
   */
  async actingAs<T>(owner: string, fn: (client: Client) => Promise<T>): Promise<T> {
    const pool = isPool(this.source) ? this.source : null;
    const conn = pool ? await pool.connect() : (this.source as pg.ClientBase);
    try {
      await conn.query("begin");
      try {
        const bound = new Client(conn as pg.PoolClient);
        await bound.scalar("select ai.act_as($1) as value", [owner]);
        const result = await fn(bound);
        await conn.query("commit");
        return result;
      } catch (error) {
        await conn.query("rollback").catch(() => undefined);
        throw error;
      }
    } finally {
      if (pool) (conn as pg.PoolClient).release();
    }
  }

  /** `ai.now()`: the database's clock (the one leases and backoff use). */
  now(): Promise<Date> {
    return this.scalar("select ai.now() as value", []);
  }

  /** `ai.current_owner()`: the tenant the caller acts as. */
  currentOwner(): Promise<string> {
    return this.scalar("select ai.current_owner() as value", []);
  }

  // -- sessions ---------------------------------------------------------------------------------

  /** `ai.create_session`: a new session (an id when `threadId` is omitted); the existing one when it is yours. */
  createSession(threadId?: string | null, config: Record<string, unknown> = {}): Promise<Session> {
    return this.one("select * from ai.create_session($1, $2)", [threadId ?? null, jsonParam(config)]);
  }

  getSession(threadId: string): Promise<Session> {
    return this.one("select * from ai.get_session($1)", [threadId]);
  }

  setSessionStatus(threadId: string, status: SessionStatus): Promise<Session> {
    return this.one("select * from ai.set_session_status($1, $2)", [threadId, status]);
  }

  listSessions(options: { status?: SessionStatus; owner?: string; maxRows?: number } = {}): Promise<Session[]> {
    return this.query("select * from ai.list_sessions($1, $2, $3)", [
      options.status ?? null,
      options.owner ?? null,
      options.maxRows ?? 100,
    ]);
  }

  // -- messages and events ----------------------------------------------------------------------

  /**
   * `ai.append_message_idempotent`: appends a message (numbered 1, 2, 3, ... per thread); a retry
   * with the same turn or idempotency key returns the stored message with `inserted` false.
   * With `jobId` + `fencingToken` the append is fenced on the job.
   */
  async appendMessage(
    threadId: string,
    role: MessageRole,
    content: unknown,
    options: { turn?: number; idempotencyKey?: string; tokenCount?: number } & Fence = {},
  ): Promise<AppendResult> {
    const row = await this.one<Record<string, unknown>>(
      "select * from ai.append_message_idempotent($1, $2, $3, $4, $5, $6, $7, $8)",
      [
        threadId,
        role,
        jsonParam(content),
        options.turn ?? null,
        options.idempotencyKey ?? null,
        options.tokenCount ?? null,
        options.jobId ?? null,
        options.fencingToken ?? null,
      ],
    );
    return appendResult(row);
  }

  /** `ai.append_messages`: several messages in one call, each idempotent. */
  async appendMessages(threadId: string, messages: NewMessage[]): Promise<AppendResult[]> {
    const rows = await this.query<Record<string, unknown>>("select * from ai.append_messages($1, $2)", [
      threadId,
      jsonParam(messages),
    ]);
    return rows.map(appendResult);
  }

  getMessages(threadId: string, options: { afterSeq?: number; maxRows?: number } = {}): Promise<Message[]> {
    return this.query("select * from ai.get_messages($1, $2, $3)", [
      threadId,
      options.afterSeq ?? 0,
      options.maxRows ?? 1000,
    ]);
  }

  /** `ai.visible_messages`: one page (maxRows null: 1,000), oldest first; the page before: `beforeSeq` = the first row's seq. */
  visibleMessages(threadId: string, maxRows?: number, beforeSeq?: number): Promise<Message[]> {
    return this.query("select * from ai.visible_messages($1, $2, $3)", [threadId, maxRows ?? null, beforeSeq ?? null]);
  }

  async hideLastMessage(threadId: string): Promise<Message | null> {
    const row = await this.one<Message>("select * from ai.hide_last_message($1)", [threadId]);
    return row.seq === null ? null : row;
  }

  hideMessages(threadId: string): Promise<number> {
    return this.scalar("select ai.hide_messages($1) as value", [threadId]);
  }

  recordEvent(threadId: string, kind: string, payload: unknown = {}): Promise<Event> {
    return this.one("select * from ai.record_event($1, $2, $3)", [threadId, kind, jsonParam(payload ?? {})]);
  }

  getEvents(
    threadId: string,
    options: { afterEventId?: number; maxRows?: number; kinds?: string[] } = {},
  ): Promise<Event[]> {
    return this.query("select * from ai.get_events($1, $2, $3, $4)", [
      threadId,
      options.afterEventId ?? 0,
      options.maxRows ?? 1000,
      options.kinds ?? null,
    ]);
  }

  // -- long sessions and retrieved context ------------------------------------------------------

  /** `ai.context_window`: the messages to send (summaries standing in for what they cover) and whether compaction is due. */
  contextWindow(threadId: string, windowTokens: number, keepLast = 20, threshold = 0.7): Promise<ContextWindow> {
    return this.one("select * from ai.context_window($1, $2, $3, $4::real)", [threadId, windowTokens, keepLast, threshold]);
  }

  /** `ai.record_compaction`: a summary of the messages through `throughSeq` (the originals are kept). */
  async recordCompaction(threadId: string, summary: string, throughSeq: number, summaryTokens?: number): Promise<AppendResult> {
    const row = await this.one<Record<string, unknown>>("select * from ai.record_compaction($1, $2, $3, $4)", [
      threadId,
      summary,
      throughSeq,
      summaryTokens ?? null,
    ]);
    return appendResult(row);
  }

  /** `ai.record_retrieval`: the documents a turn was given, once per key. */
  recordRetrieval(
    threadId: string,
    turn: number,
    documents: unknown,
    options: { idempotencyKey?: string } & Fence = {},
  ): Promise<RetrievalRecord> {
    return this.one("select * from ai.record_retrieval($1, $2, $3, $4, $5, $6)", [
      threadId,
      turn,
      jsonParam(documents ?? []),
      options.idempotencyKey ?? null,
      options.jobId ?? null,
      options.fencingToken ?? null,
    ]);
  }

  /** `ai.get_turn_context`: a turn's messages and the documents it was given. */
  getTurnContext(threadId: string, turn: number): Promise<TurnContext> {
    return this.one("select * from ai.get_turn_context($1, $2)", [threadId, turn]);
  }

  // -- the queue --------------------------------------------------------------------------------

  /**
   * `ai.enqueue_job`: a job for the thread; the same idempotency key returns the first job. Without
   * a key the call makes one (a random UUID), so that its retry after a lost answer never makes a
   * second job (docs/queue.md, "Lost answers").
   */
  async enqueueJob(
    threadId: string,
    payload: unknown = {},
    options: {
      queue?: string;
      runAt?: Date;
      priority?: number;
      maxAttempts?: number;
      idempotencyKey?: string;
      /** Each attempt's run timeout (docs/queue.md, "Deadlines"); omitted: the queue's default, else none. */
      timeoutSeconds?: number;
      /** The total deadline across attempts. */
      deadline?: Date;
      /** The start deadline: a job not started by then ends FAILED instead of running late. */
      startBy?: Date;
      /** Strings that go with the job, over the active OpenTelemetry trace context (stored too). */
      headers?: Record<string, string>;
      /** the fairness and limit key (none: the owner's own; docs/queue.md, "Fair shares and limits") */
      key?: string;
    } = {},
  ): Promise<Job> {
    const headers = await injectHeaders(options.headers);
    const args = [
      threadId,
      jsonParam(payload ?? {}),
      options.queue ?? "default",
      options.runAt ?? null,
      options.priority ?? 0,
      options.maxAttempts ?? 5,
      options.idempotencyKey ?? randomUUID(),
    ];
    // the options a job has, by name: a call without any runs on a schema of 0.1.0 too
    const named: [string, unknown][] = [
      ["timeout", secondsParam(options.timeoutSeconds)],
      ["deadline", options.deadline ?? null],
      ["start_by", options.startBy ?? null],
      ["key", options.key ?? null],
      ["headers", headers === null ? null : JSON.stringify(headers)],
    ];
    const params: unknown[] = [...args];
    let sql = "select * from ai.enqueue_job($1, $2, $3, $4, $5, $6, $7";
    for (const [name, value] of named) {
      if (value === null) continue;
      params.push(value);
      sql += `, ${name} => $${params.length}`;
    }
    sql += ")";
    return this.retryLostAnswer(() => this.one<Job>(sql, params));
  }

  /**
   * `ai.enqueue_jobs`: up to 5,000 jobs of one queue in one call (AS003, `TooLarge`, beyond), one
   * job per entry, in order, each answered as `enqueueJob` answers it (a reused key: the first job).
   * One bad job fails the call and writes nothing. A job without a key gets one (a random UUID).
   */
  async enqueueJobs(
    jobs: NewJob[],
    options: { queue?: string; maxAttempts?: number; headers?: Record<string, string> } = {},
  ): Promise<Job[]> {
    if (jobs.length === 0) return [];
    const headers = await injectHeaders(options.headers); // as enqueueJob's, for every job of the call
    return this.query<Job>(
      "select * from ai.enqueue_jobs($1::text[], $2::jsonb[], $3, $4::timestamptz[], $5::integer[], $6::text[], $7," +
        " $8::interval[], $9::timestamptz[], $10::timestamptz[], $11::text[], $12::jsonb)",
      [
        jobs.map((j) => j.thread_id),
        jobs.map((j) => JSON.stringify(j.payload ?? {})),
        options.queue ?? "default",
        jobs.map((j) => j.run_at ?? null),
        jobs.map((j) => j.priority ?? 0),
        jobs.map((j) => j.idempotency_key ?? randomUUID()), // as enqueueJob: a retry never duplicates
        options.maxAttempts ?? 5,
        jobs.map((j) => secondsParam(j.timeout_seconds)),
        jobs.map((j) => j.deadline ?? null),
        jobs.map((j) => j.start_by ?? null),
        jobs.map((j) => j.key ?? null),
        headers === null ? null : JSON.stringify(headers),
      ],
    );
  }

  /** `ai.claim_job`: the next due job of the queue with a lease and a new fencing token, or null. */
  async claimJob(workerId: string, options: { leaseSeconds?: number; queue?: string } = {}): Promise<Job | null> {
    const rows = await this.query<Job>("select * from ai.claim_job($1, $2, $3)", [
      workerId,
      secondsParam(options.leaseSeconds ?? 60),
      options.queue ?? "default",
    ]);
    return rows[0] ?? null;
  }

  /**
   * `ai.claim_jobs`: up to `maxJobs` due jobs in one call, under `requestId` (a new one when not
   * given): the same call again, with the same request id, answers with the jobs the first took,
   * under the same tokens (a retry after a lost answer; docs/queue.md, "Lost answers").
   */
  claimJobs(workerId: string, leaseSeconds: number, queue: string, maxJobs: number, requestId?: string): Promise<Job[]> {
    const args = [workerId, secondsParam(leaseSeconds), queue, maxJobs, requestId ?? randomUUID()];
    return this.retryLostAnswer(() => this.query<Job>("select * from ai.claim_jobs($1, $2, $3, $4, $5)", args));
  }

  /** `ai.renew_lease`: extends the lease; LeaseLost when the token is stale. Returns the new expiry. */
  renewLease(jobId: number, fencingToken: number, leaseSeconds = 60): Promise<Date> {
    return this.scalar("select ai.renew_lease($1, $2, $3) as value", [jobId, fencingToken, secondsParam(leaseSeconds)]);
  }

  /** `ai.renew_leases`: every lease a worker holds, in one call; the jobs it still holds. */
  renewLeases(workerId: string, jobIds: number[], fencingTokens: number[], leaseSeconds = 60): Promise<RenewedLease[]> {
    return this.query("select * from ai.renew_leases($1, $2, $3, $4)", [
      workerId,
      jobIds,
      fencingTokens,
      secondsParam(leaseSeconds),
    ]);
  }

  /** `ai.fenced_write`: LeaseLost unless the claim still holds the job (inside the caller's transaction). */
  fencedWrite(jobId: number, fencingToken: number): Promise<Date> {
    return this.scalar("select ai.fenced_write($1, $2) as value", [jobId, fencingToken]);
  }

  /** `ai.complete_job`: idempotent under the same token (a retry answers with the completed job). */
  completeJob(jobId: number, fencingToken: number, result: unknown = null): Promise<Job> {
    const args = [jobId, fencingToken, jsonParam(result)];
    return this.retryLostAnswer(() => this.one<Job>("select * from ai.complete_job($1, $2, $3)", args));
  }

  /**
   * `ai.complete_jobs`: [jobId, fencingToken, result] triples in one call; the ids completed (now,
   * or before under the same token: idempotent, so run again after a lost answer); a job whose
   * lease was lost is left out.
   */
  completeJobs(done: [number, number, unknown][]): Promise<number[]> {
    const args = [done.map((d) => d[0]), done.map((d) => d[1]), done.map((d) => jsonParam(d[2]))];
    return this.retryLostAnswer(async () =>
      (await this.query<{ value: number }>("select value from ai.complete_jobs($1, $2, $3::jsonb[]) as value", args)).map((r) => r.value),
    );
  }

  /**
   * `ai.complete_and_claim`: `done` completed as `completeJobs` does and up to `maxJobs` (0: none)
   * claimed as `claimJobs` does, in one round trip and one transaction. Under `requestId` (a new
   * one when not given) the same call again answers the same (run again after a lost answer).
   */
  async completeAndClaim(
    workerId: string,
    leaseSeconds: number,
    queue: string,
    maxJobs: number,
    done: [number, number, unknown][],
    requestId?: string,
  ): Promise<{ completed: number[]; claimed: Job[] }> {
    const args = [
      workerId,
      secondsParam(leaseSeconds),
      queue,
      maxJobs,
      requestId ?? randomUUID(),
      done.map((d) => d[0]),
      done.map((d) => d[1]),
      done.map((d) => jsonParam(d[2])),
    ];
    const rows = await this.retryLostAnswer(() =>
      this.query<Job>("select * from ai.complete_and_claim($1, $2, $3, $4, $5, $6, $7, $8::jsonb[])", args),
    );
    // a completion is a row with only job_id and status ('COMPLETED') set; the claimed jobs follow
    return {
      completed: rows.filter((r) => r.status === "COMPLETED").map((r) => r.job_id),
      claimed: rows.filter((r) => r.status !== "COMPLETED"),
    };
  }

  /** `ai.fail_job`: retried with backoff (or after `retryInSeconds`) until the attempts are spent. */
  failJob(jobId: number, fencingToken: number, error: string, retryInSeconds?: number): Promise<Job> {
    return this.one("select * from ai.fail_job($1, $2, $3, $4)", [
      jobId,
      fencingToken,
      error,
      secondsParam(retryInSeconds),
    ]);
  }

  /** `ai.release_job`: gives the job back without spending an attempt (a worker shutting down). */
  releaseJob(jobId: number, fencingToken: number): Promise<Job> {
    return this.one("select * from ai.release_job($1, $2)", [jobId, fencingToken]);
  }

  /**
   * `ai.snooze_job`: gives the job back until `until` (a Date, or seconds from the database's now:
   * a rate limit's retry_after) without spending an attempt; the token is refused from then on.
   */
  snoozeJob(jobId: number, fencingToken: number, until: Date | number): Promise<Job> {
    return typeof until === "number"
      ? this.one("select * from ai.snooze_job($1, $2, ai.now() + $3::interval)", [jobId, fencingToken, secondsParam(until)])
      : this.one("select * from ai.snooze_job($1, $2, $3)", [jobId, fencingToken, until]);
  }

  /**
   * `ai.set_queue_deadlines` (an operator: ai_service acting for nobody; PermissionDenied otherwise):
   * a queue's default deadlines for jobs enqueued later without their own; all omitted removes them.
   */
  async setQueueDeadlines(
    queue: string,
    options: { timeoutSeconds?: number; deadlineAfterSeconds?: number; startWithinSeconds?: number } = {},
  ): Promise<void> {
    await this.query("select ai.set_queue_deadlines($1, $2, $3, $4)", [
      queue,
      secondsParam(options.timeoutSeconds),
      secondsParam(options.deadlineAfterSeconds),
      secondsParam(options.startWithinSeconds),
    ]);
  }

  /**
   * `ai.set_job_key` (an operator: ai_service acting for nobody; PermissionDenied when acting for
   * an owner, no EXECUTE for a tenant): what claims hold a key of a queue to, replacing what was
   * set (docs/queue.md, "Fair shares and limits"): `weight` (1 by default), `maxInFlight`,
   * `ratePerMinute` and `burst` (omitted: no limit). The defaults clear the key.
   */
  async setJobKey(
    queue: string,
    key: string,
    options: { weight?: number; maxInFlight?: number | null; ratePerMinute?: number | null; burst?: number | null } = {},
  ): Promise<void> {
    await this.query("select (ai.set_job_key($1, $2, $3, $4, $5, $6)).queue as value", [
      queue,
      key,
      options.weight ?? 1,
      options.maxInFlight ?? null,
      options.ratePerMinute ?? null,
      options.burst ?? null,
    ]);
  }

  /**
   * `ai.job_key_status`: each key's settings, in-flight count, tokens and backlog, of one queue or
   * all, in (queue, key) order after (`afterQueue`, `afterKey`), at most `maxRows` (100); a tenant
   * sees only its own keys.
   */
  jobKeyStatus(
    queue?: string | null,
    options: { maxRows?: number; afterQueue?: string | null; afterKey?: string | null } = {},
  ): Promise<JobKeyStatus[]> {
    return this.query("select * from ai.job_key_status($1, $2, $3, $4)", [
      queue ?? null,
      options.maxRows ?? 100,
      options.afterQueue ?? null,
      options.afterKey ?? null,
    ]);
  }

  cancelJob(jobId: number): Promise<Job> {
    return this.one("select * from ai.cancel_job($1)", [jobId]);
  }

  retryDeadJob(jobId: number): Promise<Job> {
    return this.one("select * from ai.retry_dead_job($1)", [jobId]);
  }

  getJob(jobId: number): Promise<Job> {
    return this.one("select * from ai.get_job($1)", [jobId]);
  }

  listJobs(
    options: { queue?: string; status?: string; threadId?: string; maxRows?: number; beforeJobId?: number } = {},
  ): Promise<Job[]> {
    return this.query("select * from ai.list_jobs($1, $2, $3, $4, $5)", [
      options.queue ?? null,
      options.status ?? null,
      options.threadId ?? null,
      options.maxRows ?? 100,
      options.beforeJobId ?? null,
    ]);
  }

  queueStats(queue?: string): Promise<QueueStats[]> {
    return this.query("select * from ai.queue_stats($1)", [queue ?? null]);
  }

  jobAttempts(jobId: number): Promise<JobAttempt[]> {
    return this.query("select * from ai.job_attempts($1)", [jobId]);
  }

  reapExpired(queue?: string): Promise<number> {
    return this.scalar("select ai.reap_expired($1) as value", [queue ?? null]);
  }

  // -- the console's reads and evals ----------------------------------------------------------

  /**
   * `ai.queue_throughput`: per queue (or only `queue`) and bucket of `bucketSeconds` (300), the
   * jobs finished within `sinceSeconds` (3600) and their latency; a bucket without one has no row.
   */
  queueThroughput(queue?: string | null, options: { sinceSeconds?: number; bucketSeconds?: number } = {}): Promise<QueueThroughput[]> {
    return this.query("select * from ai.queue_throughput($1, $2, $3)", [
      queue ?? null,
      secondsParam(options.sinceSeconds ?? 3600),
      secondsParam(options.bucketSeconds ?? 300),
    ]);
  }

  /** `ai.session_status_counts`: how many sessions per status (of `owner` when given). */
  async sessionStatusCounts(owner?: string | null): Promise<Partial<Record<SessionStatus, number>>> {
    const rows = await this.query<{ status: SessionStatus; sessions: number }>("select * from ai.session_status_counts($1)", [owner ?? null]);
    return Object.fromEntries(rows.map((r) => [r.status, r.sessions]));
  }

  /** `ai.list_streams`: a thread's streams, oldest first, each as getStream returns it; the next page: `afterStreamKey` = the last one's key. */
  listStreams(
    threadId: string,
    options: { staleAfterSeconds?: number; maxRows?: number; afterStreamKey?: string | null } = {},
  ): Promise<StreamState[]> {
    return this.query("select * from ai.list_streams($1, $2, $3, $4)", [
      threadId,
      secondsParam(options.staleAfterSeconds ?? 30),
      options.maxRows ?? 100,
      options.afterStreamKey ?? null,
    ]);
  }

  /** `ai.list_forks`: the threads forked or copied from `threadId`, oldest first; the next page: `afterThreadId` = the last fork's id. */
  listForks(threadId: string, options: { maxRows?: number; afterThreadId?: string | null } = {}): Promise<Fork[]> {
    return this.query("select * from ai.list_forks($1, $2, $3)", [threadId, options.maxRows ?? 100, options.afterThreadId ?? null]);
  }

  /**
   * `ai.trajectory`: the recorded steps of a thread (tool calls with arguments, the final answer),
   * only those written after `afterCheckpointId` when given; at most `maxRows` (10,000), the next
   * page after `afterSeq` = the last step's seq.
   */
  trajectory(
    threadId: string,
    options: { afterCheckpointId?: string | null; checkpointNs?: string; maxRows?: number; afterSeq?: number | null } = {},
  ): Promise<TrajectoryStep[]> {
    return this.query("select * from ai.trajectory($1, $2, $3, $4, $5)", [
      threadId,
      options.afterCheckpointId ?? null,
      options.checkpointNs ?? "",
      options.maxRows ?? 10000,
      options.afterSeq ?? null,
    ]);
  }

  /** `ai.record_eval_run`: keeps one replay's outcome (its scores and diff) for later queries. */
  recordEvalRun(
    threadId: string,
    candidate: string,
    passed: boolean,
    options: { scores?: Record<string, unknown>; diff?: unknown; replayThreadId?: string | null; fromCheckpointId?: string | null } = {},
  ): Promise<EvalRun> {
    return this.one("select * from ai.record_eval_run($1, $2, $3, $4, $5, $6, $7)", [
      threadId,
      candidate,
      passed,
      jsonParam(options.scores ?? {}),
      jsonParam(options.diff ?? {}),
      options.replayThreadId ?? null,
      options.fromCheckpointId ?? null,
    ]);
  }

  /** `ai.get_eval_runs`: the caller's eval runs, newest first; the next page: `beforeThreadId`, `beforeEvalId` = the last run's. */
  getEvalRuns(
    options: { threadId?: string | null; candidate?: string | null; maxRows?: number; beforeThreadId?: string | null; beforeEvalId?: number | null } = {},
  ): Promise<EvalRun[]> {
    return this.query("select * from ai.get_eval_runs($1, $2, $3, $4, $5)", [
      options.threadId ?? null,
      options.candidate ?? null,
      options.maxRows ?? 100,
      options.beforeThreadId ?? null,
      options.beforeEvalId ?? null,
    ]);
  }

  /** `ai.archive_jobs` (ai_service): up to `maxRows` jobs finished more than `olderThanSeconds` (a day) ago moved to ai.agent_jobs_archive; how many (call until 0). */
  archiveJobs(options: { olderThanSeconds?: number; maxRows?: number } = {}): Promise<number> {
    return this.scalar("select ai.archive_jobs($1, $2) as value", [secondsParam(options.olderThanSeconds ?? 86400), options.maxRows ?? 10000]);
  }

  // -- side effects -----------------------------------------------------------------------------

  /** `ai.begin_side_effect`: reserve the key ('execute'), or its recorded result ('done'), or 'busy'. */
  beginSideEffect(
    threadId: string,
    key: string,
    request: unknown = {},
    options: Fence & { reservationSeconds?: number } = {},
  ): Promise<SideEffectBegin> {
    return this.one("select * from ai.begin_side_effect($1, $2, $3, $4, $5, $6)", [
      threadId,
      key,
      jsonParam(request ?? {}),
      options.jobId ?? null,
      options.fencingToken ?? null,
      secondsParam(options.reservationSeconds ?? 300),
    ]);
  }

  finishSideEffect(threadId: string, key: string, result: unknown, fence: Fence = {}): Promise<SideEffect> {
    return this.one("select * from ai.finish_side_effect($1, $2, $3, $4, $5)", [
      threadId,
      key,
      jsonParam(result ?? null) ?? "null",
      fence.jobId ?? null,
      fence.fencingToken ?? null,
    ]);
  }

  abandonSideEffect(threadId: string, key: string, options: Fence & { error?: string } = {}): Promise<SideEffect> {
    return this.one("select * from ai.abandon_side_effect($1, $2, $3, $4, $5)", [
      threadId,
      key,
      options.jobId ?? null,
      options.fencingToken ?? null,
      options.error ?? null,
    ]);
  }

  getSideEffect(threadId: string, key: string): Promise<SideEffect> {
    return this.one("select * from ai.get_side_effect($1, $2)", [threadId, key]);
  }

  // -- human in the loop ------------------------------------------------------------------------

  /** `ai.request_human` (fenced): the job waits for a person as AWAITING_HUMAN; returns the approval id. */
  requestHuman(jobId: number, fencingToken: number, checkpointId: string, action: unknown = {}): Promise<string> {
    return this.scalar("select ai.request_human($1, $2, $3, $4) as value", [
      jobId,
      fencingToken,
      checkpointId,
      jsonParam(action ?? {}),
    ]);
  }

  /** `ai.resolve_human`: stores the decision; the job is PENDING again, carrying it in `payload.human`. */
  resolveHuman(threadId: string, checkpointId: string, decision: unknown): Promise<Approval> {
    return this.one("select * from ai.resolve_human($1, $2, $3)", [
      threadId,
      checkpointId,
      jsonParam(decision ?? {}),
    ]);
  }

  /** `ai.pending_approvals`: oldest first; the next page: `afterApprovalId` = the last row's approval_id. */
  pendingApprovals(options: { owner?: string; maxRows?: number; afterApprovalId?: string } = {}): Promise<Approval[]> {
    return this.query("select * from ai.pending_approvals($1, $2, $3)", [
      options.owner ?? null,
      options.maxRows ?? 100,
      options.afterApprovalId ?? null,
    ]);
  }

  getApproval(approvalId: string): Promise<Approval> {
    return this.one("select * from ai.get_approval($1)", [approvalId]);
  }

  // -- usage ------------------------------------------------------------------------------------

  /** `ai.record_usage`: once per idempotency key (exactly-once billing); `cost` exact (a string or number). */
  recordUsage(
    threadId: string,
    key: string,
    usage: { model: string; inputTokens: number; outputTokens: number; cost: string | number; details?: unknown },
    fence: Fence = {},
  ): Promise<UsageRecord> {
    return this.one("select * from ai.record_usage($1, $2, $3, $4, $5, $6, $7, $8, $9)", [
      threadId,
      key,
      usage.model,
      usage.inputTokens,
      usage.outputTokens,
      String(usage.cost),
      jsonParam(usage.details ?? {}),
      fence.jobId ?? null,
      fence.fencingToken ?? null,
    ]);
  }

  usageSummary(since: Date, until: Date, groupBy: string[] = ["owner"]): Promise<UsageSummaryRow[]> {
    return this.query("select * from ai.usage_summary($1, $2, $3)", [since, until, groupBy]);
  }

  // -- streams ----------------------------------------------------------------------------------

  openStream(
    threadId: string,
    streamKey: string,
    options: { role?: MessageRole; turn?: number; durability?: "sync" | "async" } & Fence = {},
  ): Promise<StreamState> {
    return this.one("select * from ai.open_stream($1, $2, $3, $4, $5, $6, $7)", [
      threadId,
      streamKey,
      options.role ?? "assistant",
      options.turn ?? null,
      options.jobId ?? null,
      options.fencingToken ?? null,
      options.durability ?? "sync",
    ]);
  }

  /** `ai.append_stream_chunks`: chunks numbered from `firstChunk` (a retry of stored chunks is a no-op). */
  appendStreamChunks(
    threadId: string,
    streamKey: string,
    firstChunk: number,
    chunks: string[],
    options: Fence & { durability?: "sync" | "async" } = {},
  ): Promise<number> {
    return this.scalar("select ai.append_stream_chunks($1, $2, $3, $4, $5, $6, $7) as value", [
      threadId,
      streamKey,
      firstChunk,
      chunks,
      options.jobId ?? null,
      options.fencingToken ?? null,
      options.durability ?? "sync",
    ]);
  }

  async finishStream(threadId: string, streamKey: string, fence: Fence = {}): Promise<AppendResult> {
    const row = await this.one<Record<string, unknown>>("select * from ai.finish_stream($1, $2, $3, $4)", [
      threadId,
      streamKey,
      fence.jobId ?? null,
      fence.fencingToken ?? null,
    ]);
    return appendResult(row);
  }

  abandonStream(threadId: string, streamKey: string, fence: Fence = {}): Promise<StreamState> {
    return this.one("select * from ai.abandon_stream($1, $2, $3, $4)", [
      threadId,
      streamKey,
      fence.jobId ?? null,
      fence.fencingToken ?? null,
    ]);
  }

  getStream(threadId: string, streamKey: string, staleAfterSeconds = 30): Promise<StreamState> {
    return this.one("select * from ai.get_stream($1, $2, $3)", [threadId, streamKey, secondsParam(staleAfterSeconds)]);
  }

  readStream(
    threadId: string,
    streamKey: string,
    options: { afterChunk?: number; maxChunks?: number } = {},
  ): Promise<StreamChunk[]> {
    return this.query("select * from ai.read_stream($1, $2, $3, $4)", [
      threadId,
      streamKey,
      options.afterChunk ?? 0,
      options.maxChunks ?? 1000,
    ]);
  }

  // -- checkpoints ------------------------------------------------------------------------------

  /** `ai.ulid()`: a new time-ordered id. */
  ulid(): Promise<string> {
    return this.scalar("select ai.ulid() as value", []);
  }

  /** `ai.ulid_time`: the time a ULID encodes. */
  ulidTime(ulid: string): Promise<Date> {
    return this.scalar("select ai.ulid_time($1) as value", [ulid]);
  }

  /** `ai.put_checkpoint`: a durable step in one call (checkpoint, new channel values, held writes, messages). */
  putCheckpoint(args: PutCheckpointArgs): Promise<string> {
    const values = args.values ?? [];
    const w = args.writes;
    return this.scalar(
      "select ai.put_checkpoint($1, $2, $3, $4, $5, $6, $7, $8," +
        " channel_values => row($9, $10, $11, $12, $13)::ai.checkpoint_values," +
        " writes => row($14, $15, $16, $17, $18, $19)::ai.task_writes," +
        " messages => $20," +
        " step_commit => row($21, $22, $23)::ai.step_commit) as value",
      [
        args.threadId,
        args.checkpointNs ?? "",
        args.checkpointId ?? null,
        args.parentCheckpointId ?? null,
        args.type,
        bytes(args.checkpoint),
        jsonParam(args.metadata ?? {}),
        jsonParam(args.channelVersions ?? {}),
        values.map((v) => v.channel),
        values.map((v) => v.version),
        values.map((v) => v.type),
        values.map((v) => bytes(v.blob)),
        values.some((v) => v.base != null) ? values.map((v) => v.base ?? null) : null,
        w ? w.taskId : null,
        w ? (w.taskPath ?? "") : null,
        w ? w.writes.map((x) => x.idx) : null,
        w ? w.writes.map((x) => x.channel) : null,
        w ? w.writes.map((x) => x.type) : null,
        w ? w.writes.map((x) => bytes(x.blob)) : null,
        args.messages && args.messages.length > 0 ? jsonParam(args.messages) : null,
        args.jobId ?? null,
        args.fencingToken ?? null,
        args.durability ?? "sync",
      ],
    );
  }

  /** `ai.put_writes`: a task's pending writes, idempotent per (task_id, idx); returns the rows written. */
  putWrites(
    threadId: string,
    checkpointNs: string,
    checkpointId: string,
    taskId: string,
    writes: PendingWriteRow[],
    options: { taskPath?: string } & Fence = {},
  ): Promise<number> {
    return this.scalar("select ai.put_writes($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) as value", [
      threadId,
      checkpointNs,
      checkpointId,
      taskId,
      writes.map((w) => w.idx),
      writes.map((w) => w.channel),
      writes.map((w) => w.type),
      writes.map((w) => bytes(w.blob)),
      options.taskPath ?? "",
      options.jobId ?? null,
      options.fencingToken ?? null,
    ]);
  }

  /** `ai.get_checkpoint`: the given checkpoint or the newest of the namespace; null when there is none. */
  async getCheckpoint(threadId: string, checkpointNs = "", checkpointId?: string | null): Promise<CheckpointRow | null> {
    const rows = await this.query<CheckpointRow>("select * from ai.get_checkpoint($1, $2, $3)", [
      threadId,
      checkpointNs,
      checkpointId ?? null,
    ]);
    return rows[0] ?? null;
  }

  /**
   * `ai.list_checkpoints`: one page, newest first (threadId null: every thread the caller sees;
   * maxRows null: the server's page of 100). The next page: `before`, `beforeThreadId`,
   * `beforeCheckpointNs` = the last row's checkpoint_id, thread_id, checkpoint_ns.
   */
  listCheckpoints(
    threadId: string | null,
    options: {
      checkpointNs?: string | null;
      before?: string | null;
      maxRows?: number | null;
      metadataFilter?: unknown;
      beforeThreadId?: string | null;
      beforeCheckpointNs?: string | null;
    } = {},
  ): Promise<CheckpointRow[]> {
    return this.query("select * from ai.list_checkpoints($1, $2, $3, $4, $5, $6, $7)", [
      threadId,
      options.checkpointNs ?? null,
      options.before ?? null,
      options.maxRows ?? null,
      options.metadataFilter === undefined ? null : jsonParam(options.metadataFilter),
      options.beforeThreadId ?? null,
      options.beforeCheckpointNs ?? null,
    ]);
  }

  /** `ai.checkpoint_lineage`: the parent chain ('ancestors') or every branch below ('descendants'). */
  checkpointLineage(
    threadId: string,
    checkpointId: string,
    options: { checkpointNs?: string; direction?: "ancestors" | "descendants" } = {},
  ): Promise<LineageStep[]> {
    return this.query("select * from ai.checkpoint_lineage($1, $2, $3, $4)", [
      threadId,
      checkpointId,
      options.checkpointNs ?? "",
      options.direction ?? "ancestors",
    ]);
  }

  /** `ai.fork_thread`: a new thread holding the checkpoint and its ancestors; returns its id. */
  forkThread(sourceThreadId: string, checkpointId: string, newThreadId?: string | null, checkpointNs = ""): Promise<string> {
    return this.scalar("select ai.fork_thread($1, $2, $3, $4) as value", [
      sourceThreadId,
      checkpointId,
      newThreadId ?? null,
      checkpointNs,
    ]);
  }

  // -- long-term memory (docs/memory.md) --------------------------------------------------------

  /**
   * `ai.put_memory`: stores (or replaces) an item of the caller's (a tenant's, or the end user's a
   * service acts for). `indexTexts`: what full-text search ranks it by (omitted: the whole value;
   * empty: nothing); `embeddings`: field -> vector; `ttlSeconds`: it expires that long after.
   */
  putMemory(
    namespace: string[],
    key: string,
    value: Record<string, unknown>,
    options: { ttlSeconds?: number | null; indexTexts?: string[] | null; embeddings?: Record<string, number[]> | null } = {},
  ): Promise<MemoryItem> {
    return this.one("select * from ai.put_memory($1, $2, $3, $4, $5, $6)", [
      namespace,
      key,
      jsonParam(value),
      secondsParam(options.ttlSeconds),
      options.indexTexts ?? null,
      options.embeddings === undefined || options.embeddings === null ? null : jsonParam(options.embeddings),
    ]);
  }

  /** `ai.get_memory`: the live item, or null; `refreshTtl` moves its expiry to now + its ttl. */
  async getMemory(namespace: string[], key: string, refreshTtl = false): Promise<MemoryItem | null> {
    const rows = await this.query<MemoryItem>("select * from ai.get_memory($1, $2, $3)", [namespace, key, refreshTtl]);
    return rows[0] ?? null;
  }

  /** `ai.delete_memory`: true when a live item was deleted. */
  deleteMemory(namespace: string[], key: string): Promise<boolean> {
    return this.scalar("select ai.delete_memory($1, $2) as value", [namespace, key]);
  }

  /**
   * `ai.search_memory`: live items under a prefix of whole labels (`[]`: everything) that pass
   * `filter`, ranked by `queryEmbedding`, else by the full-text `query`, else newest first.
   */
  searchMemory(
    namespacePrefix: string[] = [],
    options: {
      filter?: Record<string, unknown> | null;
      query?: string | null;
      limit?: number;
      offset?: number;
      refreshTtl?: boolean;
      queryEmbedding?: number[] | null;
      distance?: "cosine" | "inner_product" | "l2";
    } = {},
  ): Promise<MemoryItem[]> {
    return this.query("select * from ai.search_memory($1, $2, $3, $4, $5, $6, $7::real[], $8)", [
      namespacePrefix,
      options.filter === undefined || options.filter === null ? null : jsonParam(options.filter),
      options.query ?? null,
      options.limit ?? 10,
      options.offset ?? 0,
      options.refreshTtl ?? false,
      options.queryEmbedding ?? null,
      options.distance ?? "cosine",
    ]);
  }

  /** `ai.list_memory_namespaces`: the namespaces of live items (`*` matches one label in a prefix or suffix). */
  async listMemoryNamespaces(
    options: { prefix?: string[] | null; suffix?: string[] | null; maxDepth?: number | null; limit?: number; offset?: number } = {},
  ): Promise<string[][]> {
    const rows = await this.query<{ n: string[] }>("select n from ai.list_memory_namespaces($1, $2, $3, $4, $5) n", [
      options.prefix ?? null,
      options.suffix ?? null,
      options.maxDepth ?? null,
      options.limit ?? 100,
      options.offset ?? 0,
    ]);
    return rows.map((r) => r.n);
  }

  /** `ai.sweep_memory` (ai_service; no EXECUTE for a tenant, 42501): deletes up to `batchSize` expired items of every owner. */
  sweepMemory(batchSize = 1000): Promise<number> {
    return this.scalar("select ai.sweep_memory($1) as value", [batchSize]);
  }

  /** Whether this role may call `ai.sweep_memory` (a member of ai_service). */
  maySweepMemory(): Promise<boolean> {
    return this.scalar("select has_function_privilege('ai.sweep_memory(integer)', 'execute') as value", []);
  }

  /**
   * `ai.archive_memory`: moves up to `maxItems` of the caller's live items under the prefix
   * (`[]`: all) to the archive, each deleted only once copied; how many. Call again until it
   * returns less than `maxItems`.
   */
  archiveMemory(namespacePrefix: string[] = [], maxItems = 1000): Promise<number> {
    return this.scalar("select ai.archive_memory($1, $2) as value", [namespacePrefix, maxItems]);
  }

  /** `ai.restore_memory`: moves up to `maxItems` archived items under the prefix back as they were (a live item written since stays: `superseded`). */
  restoreMemory(namespacePrefix: string[] = [], maxItems = 1000): Promise<MemoryRestore> {
    return this.one("select * from ai.restore_memory($1, $2)", [namespacePrefix, maxItems]);
  }

  /** `ai.batch_memory`: operations in order in one call and one transaction; their results (JSON: times as ISO 8601 text) in order. */
  batchMemory(ops: MemoryOp[]): Promise<unknown[]> {
    return this.scalar("select ai.batch_memory($1) as value", [jsonParam(ops)]);
  }

  /**
   * `ai.checkpoints_between`: a thread's checkpoints (all namespaces) saved in [from, to), oldest
   * first, one page of `maxRows` (1000); the next: `afterCheckpointNs`, `afterCheckpointId` = the last row's.
   */
  checkpointsBetween(
    threadId: string,
    from: Date,
    to: Date,
    options: { maxRows?: number; afterCheckpointNs?: string | null; afterCheckpointId?: string | null } = {},
  ): Promise<CheckpointSummary[]> {
    return this.query("select * from ai.checkpoints_between($1, $2, $3, $4, $5, $6)", [
      threadId,
      from,
      to,
      options.maxRows ?? 1000,
      options.afterCheckpointNs ?? null,
      options.afterCheckpointId ?? null,
    ]);
  }

  /** `ai.copy_thread`: every checkpoint (with its writes and values) into a new thread of the same owner; how many. */
  copyThread(sourceThreadId: string, targetThreadId: string): Promise<number> {
    return this.scalar("select ai.copy_thread($1, $2) as value", [sourceThreadId, targetThreadId]);
  }

  /** `ai.delete_for_runs`: the checkpoints whose metadata run_id is one of `runIds`; how many. */
  deleteForRuns(runIds: string[]): Promise<number> {
    return this.scalar("select ai.delete_for_runs($1) as value", [runIds]);
  }

  /** `ai.prune_checkpoints`: 'keep_latest' (the newest of each namespace, and what it is rebuilt from) or 'delete'; the checkpoints deleted. */
  pruneCheckpoints(threadIds: string[], strategy: "keep_latest" | "delete" = "keep_latest"): Promise<number> {
    return this.scalar("select ai.prune_checkpoints($1, $2) as value", [threadIds, strategy]);
  }

  /**
   * `ai.prune_idle_threads`: one bounded batch of the walk over the caller's sessions, pruning
   * those with no checkpoint newer than `idleSeconds` ago; call again with `afterThreadId` =
   * the batch's `next_thread_id` until it is null.
   */
  pruneIdleThreads(
    idleSeconds: number,
    options: { strategy?: "keep_latest" | "delete"; maxThreads?: number; afterThreadId?: string | null } = {},
  ): Promise<PruneBatch> {
    return this.one("select * from ai.prune_idle_threads($1, $2, $3, $4)", [
      secondsParam(idleSeconds),
      options.strategy ?? "keep_latest",
      options.maxThreads ?? 1000,
      options.afterThreadId ?? null,
    ]);
  }

  /**
   * `ai.archive_sessions` (ai_service): one batch of up to `batchSize` (1000) sessions finished
   * more than `olderThanSeconds` (90 days) ago moved to ai_archive, oldest first; call until it
   * returns none (docs/operations.md, "Retention").
   */
  archiveSessions(options: { olderThanSeconds?: number; batchSize?: number } = {}): Promise<ArchivedSession[]> {
    return this.query("select * from ai.archive_sessions($1, $2)", [
      secondsParam(options.olderThanSeconds ?? 90 * 86400),
      options.batchSize ?? 1000,
    ]);
  }

  /** `ai.restore_session` (ai_service): an archived session, with all archived with it, back in the hot tables. */
  restoreSession(threadId: string): Promise<Session> {
    return this.one("select * from ai.restore_session($1)", [threadId]);
  }

  /** `ai.delete_thread`: the thread and all it owns, leaving a tombstone; false when not found. */
  deleteThread(threadId: string): Promise<boolean> {
    return this.scalar("select ai.delete_thread($1) as value", [threadId]);
  }
}

export type { Json };
