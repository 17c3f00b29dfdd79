/**
 * Errors keyed by SQLSTATE, as python/agent_state/errors.py has them.
 *
 * Every domain failure of the SQL API raises a custom SQLSTATE of class `AS` (the table
 * `ai.error_codes` and docs/errors.md list them). The client turns those into the classes below,
 * so callers write `catch (e) { if (e instanceof NotFound) ... }` instead of parsing messages.
 * Anything else node-postgres raises passes through unchanged.
 */

/** Base class of every error the SQL API raises on purpose. */
export class AgentStateError extends Error {
  static readonly sqlstate: string = "";
  /** The SQLSTATE the server raised (`AS001`, ...). */
  readonly sqlstate: string;
  /** node-postgres's error, with `detail`, `hint`, `where`. */
  override readonly cause?: unknown;

  constructor(message: string, options: { sqlstate?: string; cause?: unknown } = {}) {
    super(message);
    this.name = new.target.name;
    this.sqlstate = options.sqlstate ?? (new.target as typeof AgentStateError).sqlstate;
    this.cause = options.cause;
  }
}

/** AS001: unknown object, or one that belongs to another tenant. */
export class NotFound extends AgentStateError {
  static override readonly sqlstate = "AS001";
}
/** AS002 (and 22P05, a NUL character in JSON): an argument is missing or malformed. */
export class InvalidArgument extends AgentStateError {
  static override readonly sqlstate = "AS002";
}
/** AS003: a value over its size limit. */
export class TooLarge extends AgentStateError {
  static override readonly sqlstate = "AS003";
}
/** AS004: a status change that is not allowed, or a write to a finished session. */
export class InvalidTransition extends AgentStateError {
  static override readonly sqlstate = "AS004";
}
/** AS005: an idempotency key reused for different content, or an id already taken. */
export class Conflict extends AgentStateError {
  static override readonly sqlstate = "AS005";
}
/** AS006: the fencing token is stale or the lease expired; the caller no longer owns the job. */
export class LeaseLost extends AgentStateError {
  static override readonly sqlstate = "AS006";
}
/**
 * AS006 as the worker knows it first: the attempt's deadline (its run timeout, or the job's total
 * deadline) has passed; the context's signal aborts with it and its writes are refused at once.
 */
export class DeadlineExceeded extends LeaseLost {}
/** AS007: the caller may not do this. */
export class PermissionDenied extends AgentStateError {
  static override readonly sqlstate = "AS007";
}
/** AS008: the calling role or the acting owner cannot log in (ai_user, ai_service, ...). */
export class NotAnOwner extends AgentStateError {
  static override readonly sqlstate = "AS008";
}
/** AS020: a checkpoint or write for a thread that was deleted. */
export class ThreadDeleted extends AgentStateError {
  static override readonly sqlstate = "AS020";
}
/** AS030: a side-effect idempotency key reused for a different request in the same thread. */
export class KeyReused extends AgentStateError {
  static override readonly sqlstate = "AS030";
}
/** AS031: finish or abandon of a side effect the caller does not hold. */
export class NotReserved extends AgentStateError {
  static override readonly sqlstate = "AS031";
}
/** AS032: resolveHuman for a thread with nothing waiting for a person. */
export class NotWaiting extends AgentStateError {
  static override readonly sqlstate = "AS032";
}
/** AS033: resolveHuman for a checkpoint whose approval was already resolved. */
export class AlreadyResolved extends AgentStateError {
  static override readonly sqlstate = "AS033";
}
/** AS034: the checkpoint named is not the one the thread waits on. */
export class StaleCheckpoint extends AgentStateError {
  static override readonly sqlstate = "AS034";
}
/** AS040: a newer compaction already covers as much of the thread. */
export class StaleCompaction extends AgentStateError {
  static override readonly sqlstate = "AS040";
}
/** AS041: the session cannot be archived or restored as asked. */
export class NotArchivable extends AgentStateError {
  static override readonly sqlstate = "AS041";
}
/** AS050: stream chunks must follow the last stored chunk. */
export class StreamGap extends AgentStateError {
  static override readonly sqlstate = "AS050";
}
/** AS051: the stream was finished or abandoned. */
export class StreamClosed extends AgentStateError {
  static override readonly sqlstate = "AS051";
}
/** AS060: a channel value stored as a delta cannot be rebuilt. */
export class BrokenDelta extends AgentStateError {
  static override readonly sqlstate = "AS060";
}
/** AS061: a channel delta extends a version that is not stored. */
export class DeltaBaseMissing extends AgentStateError {
  static override readonly sqlstate = "AS061";
}
/** AS062: a function that deletes checkpoints was called outside read committed. */
export class DeleteNeedsReadCommitted extends AgentStateError {
  static override readonly sqlstate = "AS062";
}
/** AS070: on a Citus formation, a node was reached as the schema owner without the caller's signed identity. */
export class IdentityNotCarried extends AgentStateError {
  static override readonly sqlstate = "AS070";
}
/** AS071: ai.distribute() on a Citus formation whose coordinator is not in its own metadata (nothing distributed). */
export class CoordinatorNotInMetadata extends AgentStateError {
  static override readonly sqlstate = "AS071";
}
/** AS072: on a Citus formation, a call delegated to a worker by a role that may freeze the test clock (ai_test_clock); call it in a transaction block. */
export class ClockNotCarried extends AgentStateError {
  static override readonly sqlstate = "AS072";
}

/** Another live holder has reserved this side-effect key (not a SQLSTATE: begin_side_effect said 'busy'). */
export class SideEffectBusy extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SideEffectBusy";
  }
}

/**
 * The outcome of a write is unknown: its connection was lost after it was sent (as Python's
 * `agent_state.errors.OutcomeUnknown`). `sqlstate` is the lost connection's SQLSTATE, if any.
 */
export class OutcomeUnknown extends AgentStateError {
  static override readonly sqlstate = "";
}

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ENOENT", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH"]);

/**
 * True for the errors after which the connection is gone or unusable but the server may be back
 * soon (as Python's `agent_state.retry.is_connection_error`): a lost or refused connection (no
 * SQLSTATE, or class 08), AdminShutdown / CrashShutdown / CannotConnectNow (57P01-57P03), too
 * many connections (53300), a write refused because the server is read-only (25006: a standby or
 * a node a failover has not made writable yet), a pool that could not connect in time. A domain
 * error (AS...) or a constraint violation is never one.
 */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof OutcomeUnknown) return true;
  if (error instanceof AgentStateError) return false;
  if (error === null || typeof error !== "object") return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (CONNECTION_CODES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code)) {
      return code.startsWith("08") || code.startsWith("57P") || code === "53300" || code === "25006";
    }
  }
  const message = String((error as { message?: unknown }).message ?? "");
  return /connection terminated|not queryable|connection error|timeout exceeded when trying to connect|ECONNREFUSED|ECONNRESET|ENOENT/i.test(
    message,
  );
}

type ErrorClass = new (message: string, options?: { sqlstate?: string; cause?: unknown }) => AgentStateError;

/** SQLSTATE -> class. A test reads `ai.error_codes` and checks that every code is here. */
export const ERRORS_BY_SQLSTATE: Readonly<Record<string, ErrorClass>> = Object.freeze({
  AS001: NotFound,
  AS002: InvalidArgument,
  AS003: TooLarge,
  AS004: InvalidTransition,
  AS005: Conflict,
  AS006: LeaseLost,
  AS007: PermissionDenied,
  AS008: NotAnOwner,
  AS020: ThreadDeleted,
  AS030: KeyReused,
  AS031: NotReserved,
  AS032: NotWaiting,
  AS033: AlreadyResolved,
  AS034: StaleCheckpoint,
  AS040: StaleCompaction,
  AS041: NotArchivable,
  AS050: StreamGap,
  AS051: StreamClosed,
  AS060: BrokenDelta,
  AS061: DeltaBaseMissing,
  AS062: DeleteNeedsReadCommitted,
  AS070: IdentityNotCarried,
  AS071: CoordinatorNotInMetadata,
  AS072: ClockNotCarried,
  // Postgres rejects "\u0000" inside JSON with untranslatable_character before any function runs.
  "22P05": InvalidArgument,
});

/** The typed error for a node-postgres error, or the error itself when it is not ours. */
export function translate(error: unknown): unknown {
  if (error === null || typeof error !== "object") return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string") return error;
  const cls = ERRORS_BY_SQLSTATE[code];
  if (cls === undefined) return error;
  return new cls((error as Error).message, { sqlstate: code, cause: error });
}
