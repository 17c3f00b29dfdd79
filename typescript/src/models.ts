/**
 * Rows of the SQL API as typed objects: the columns of each `ai` function's result, by their SQL
 * names (snake_case, as python/agent_state/models.py and docs/sql-api.md have them). bigint
 * columns arrive as JS numbers (ids and counters stay far below 2^53), numeric as strings
 * (exact costs), timestamps as Date, jsonb as parsed JSON, bytea as Buffer.
 */

export type JobStatus = "PENDING" | "IN_PROGRESS" | "COMPLETED" | "FAILED" | "CANCELLED" | "AWAITING_HUMAN";
export type SessionStatus = "active" | "waiting" | "completed" | "failed" | "cancelled";
export type MessageRole = "system" | "user" | "assistant" | "tool_call" | "tool_result";
export type SideEffectStatus = "reserved" | "done" | "abandoned";
export type SideEffectOutcome = "execute" | "done" | "busy";
export type ApprovalStatus = "pending" | "resolved" | "cancelled";
export type StreamStatus = "open" | "finished" | "abandoned";
export type JobAttemptOutcome =
  | "completed"
  | "failed"
  | "released"
  | "snoozed"
  | "cancelled"
  | "awaiting_human"
  | "expired"
  | "deadline_exceeded"
  | "in_progress";

/** JSON as the database stores it (jsonb). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface Session {
  thread_id: string;
  owner: string;
  status: SessionStatus;
  config: Record<string, Json>;
  current_checkpoint_id: string | null;
  last_seq: number;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

export interface Message {
  thread_id: string;
  seq: number;
  owner: string;
  role: MessageRole;
  content: Json;
  token_count: number;
  turn: number | null;
  idempotency_key: string;
  created_at: Date;
}

/** ai.appended_message: the message (new or the one a retry finds) and whether this call inserted it. */
export interface AppendResult {
  message: Message;
  inserted: boolean;
}

/** One message for appendMessages. */
/** One job of a batch for `enqueueJobs`: run_at (absent: now), priority and key are optional. */
export interface NewJob {
  thread_id: string;
  payload?: Json;
  run_at?: Date | null;
  priority?: number;
  idempotency_key?: string | null;
  /** As enqueueJob's deadlines (null: the queue's default, else none). */
  timeout_seconds?: number | null;
  deadline?: Date | null;
  start_by?: Date | null;
  /** the fairness and limit key (none: the owner's own) */
  key?: string | null;
}

export interface NewMessage {
  role: MessageRole;
  content: Json;
  turn?: number;
  idempotency_key?: string;
  token_count?: number;
}

export interface Event {
  thread_id: string;
  event_id: number;
  owner: string;
  kind: string;
  payload: Json;
  created_at: Date;
}

export interface Job {
  job_id: number;
  thread_id: string;
  owner: string;
  queue: string;
  status: JobStatus;
  payload: Json;
  priority: number;
  run_at: Date;
  attempts: number;
  max_attempts: number;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  fencing_token: number;
  last_error: string | null;
  result: Json;
  idempotency_key: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  available_at: Date;
  /** the job's fairness and limit key: the one enqueue named, or '@' and the owner */
  key?: string | null;
  claimed_at?: Date | null;
  /** Each attempt's run timeout: node-postgres's interval object ({ seconds, minutes, ... }) or null. */
  timeout?: unknown;
  /** The total deadline across attempts, or null. */
  deadline?: Date | null;
  /** The start deadline, or null. */
  start_by?: Date | null;
  /** What the enqueuer handed to the run (change job_headers): its W3C trace context, ... */
  headers?: Record<string, string> | null;
  /** The attempts that ended, oldest first (what ai.job_attempts reads). */
  attempt_log?: unknown[];
}

export interface JobAttempt {
  attempt: number;
  worker: string | null;
  fencing_token: number;
  claimed_at: Date | null;
  lease_expires_at: Date | null;
  ended_at: Date | null;
  outcome: JobAttemptOutcome;
  error: string | null;
}

/**
 * One row of ai.job_key_status: a key of a queue, what an operator set for it (weight,
 * max_in_flight, rate_per_minute, burst) and its figures: in_flight (running jobs whose lease
 * holds), tokens (the bucket now; null for tenants), backlog and due (PENDING; counts stop at
 * 10,000). A tenant sees only the keys of its own jobs, counted over its own jobs.
 */
export interface JobKeyStatus {
  queue: string;
  key: string;
  weight: number;
  max_in_flight: number | null;
  in_flight: number;
  rate_per_minute: number | null;
  burst: number | null;
  tokens: number | null;
  backlog: number;
  due: number;
}

export interface QueueStats {
  queue: string;
  pending: number;
  due: number;
  in_progress: number;
  expired_leases: number;
  awaiting_human: number;
  completed: number;
  failed: number;
  cancelled: number;
  /** node-postgres's interval object ({ seconds, minutes, ... }) or null. */
  oldest_due_age: unknown;
  failed_attempts?: number;
  expired_attempts?: number;
}

export interface RenewedLease {
  job_id: number;
  lease_expires_at: Date;
}

export interface SideEffect {
  thread_id: string;
  idempotency_key: string;
  owner: string;
  request: Json;
  status: SideEffectStatus;
  result: Json;
  attempt: number;
  takeovers: number;
  job_id: number | null;
  fencing_token: number | null;
  reserved_until: Date | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

export interface SideEffectBegin {
  outcome: SideEffectOutcome;
  attempt: number;
  taken_over: boolean;
  result: Json;
  holder_job_id: number | null;
  reserved_until: Date | null;
}

export interface Approval {
  approval_id: string;
  thread_id: string;
  owner: string;
  job_id: number;
  checkpoint_id: string;
  action: Json;
  status: ApprovalStatus;
  requested_by: string | null;
  requested_at: Date;
  decision: Json;
  decided_by: string | null;
  decided_for: string | null;
  decided_at: Date | null;
}

export interface UsageRecord {
  thread_id: string;
  usage_id: number;
  owner: string;
  idempotency_key: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  /** numeric: exact, as a string. */
  cost: string;
  details: Json;
  job_id: number | null;
  created_at: Date;
  inserted: boolean;
}

export interface UsageSummaryRow {
  owner: string | null;
  thread_id: string | null;
  model: string | null;
  day: Date | null;
  records: number;
  input_tokens: string;
  output_tokens: string;
  cost: string;
}

export interface StreamState {
  thread_id: string;
  stream_key: string;
  owner: string;
  role: MessageRole;
  turn: number | null;
  status: StreamStatus;
  last_chunk: number;
  total_bytes: number;
  job_id: number | null;
  opened_at: Date;
  last_chunk_at: Date | null;
  closed_at: Date | null;
  message_seq: number | null;
  stale: boolean;
  channel: string;
}

export interface StreamChunk {
  chunk_no: number;
  content: string;
  created_at: Date;
}

/** ai.checkpoint_tuple: a checkpoint with its channel values and pending writes, in the caller's serialization. */
export interface CheckpointRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  type: string;
  checkpoint: Buffer;
  metadata: Record<string, Json>;
  channel_versions: Record<string, string | number>;
  created_at: Date;
  blob_channels: string[] | null;
  blob_types: string[] | null;
  blobs: (Buffer | null)[] | null;
  write_task_ids: string[] | null;
  write_task_paths: string[] | null;
  write_idx: number[] | null;
  write_channels: string[] | null;
  write_types: string[] | null;
  write_blobs: Buffer[] | null;
}

/**
 * A channel value for putCheckpoint, stored once per (channel, version); `base`: the version of the
 * same channel whose list this value extends with its items (a delta), absent or null for a whole value.
 */
export interface ChannelValue {
  channel: string;
  version: string;
  type: string;
  blob: Uint8Array | null;
  base?: string | null;
}

/** A pending write for putWrites: (idx, channel) of one task, in the caller's serialization. */
export interface PendingWriteRow {
  idx: number;
  channel: string;
  type: string;
  blob: Uint8Array;
}

/** One message of a context window (ai.context_window). */
export interface WindowMessage {
  seq: number;
  role: MessageRole;
  content: Json;
  token_count: number;
  is_summary: boolean;
}

export interface ContextWindow {
  messages: WindowMessage[];
  total_tokens: number;
  compaction_due: boolean;
  compact_from_seq: number | null;
  compact_through_seq: number | null;
  summary_through_seq: number;
  last_seq: number;
}

export interface RetrievalRecord {
  thread_id: string;
  retrieval_id: number;
  owner: string;
  turn: number;
  idempotency_key: string;
  documents: Json;
  created_at: Date;
  inserted: boolean;
}

export interface TurnContext {
  thread_id: string;
  turn: number;
  messages: Json;
  retrievals: Json;
}

export interface LineageStep {
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  depth: number;
  created_at: Date;
  metadata: Record<string, Json>;
}

/** One bucket of one queue (ai.queue_throughput): jobs finished in it (COMPLETED, FAILED) and their enqueue-to-finish times. */
export interface QueueThroughput {
  queue: string;
  bucket_start: Date;
  completed: number;
  failed: number;
  /** node-postgres's interval objects ({ seconds, milliseconds, ... }), or null. */
  mean_latency: unknown;
  max_latency: unknown;
}

/**
 * A thread made from another (ai.list_forks) by `forkThread` (`from_checkpoint_id`: where it
 * started) or `copy_thread` (null), with the first replay job enqueued on it, if any.
 */
export interface Fork {
  fork_thread_id: string;
  owner: string;
  status: SessionStatus;
  created_at: Date;
  from_checkpoint_id: string | null;
  replay_job_id: number | null;
  replay_model: string | null;
}

/** ai.trajectory: one step of a recorded trajectory (tool calls with their arguments, the final answer). */
export interface TrajectoryStep {
  seq: number;
  role: MessageRole;
  tool_name: string | null;
  arguments: Json;
  content: Json;
  is_final: boolean;
}

/** ai.eval_runs: one replay of a recorded thread by a candidate, with its scores. */
export interface EvalRun {
  eval_id: number;
  thread_id: string;
  owner: string;
  replay_thread_id: string | null;
  from_checkpoint_id: string | null;
  candidate: string;
  passed: boolean;
  scores: Record<string, Json>;
  diff: Json;
  created_at: Date;
}

/** ai.memory_item: one item of long-term memory (docs/memory.md); `score` is its search rank (null without a query). */
export interface MemoryItem {
  namespace: string[];
  key: string;
  value: Record<string, Json>;
  created_at: Date;
  updated_at: Date;
  expires_at: Date | null;
  score: number | null;
}

/** One batch of ai.restore_memory: items restored, and archived copies dropped because a live item of the key was written since. */
export interface MemoryRestore {
  restored: number;
  superseded: number;
}

/** One operation of `batchMemory` (ai.batch_memory), by its SQL names. */
export type MemoryOp =
  | { op: "get"; namespace: string[]; key: string; refresh_ttl?: boolean }
  | {
      op: "put";
      namespace: string[];
      key: string;
      /** null deletes the item */
      value: Record<string, Json> | null;
      ttl_seconds?: number | null;
      index_texts?: string[] | null;
      embeddings?: Record<string, number[]> | null;
    }
  | {
      op: "search";
      namespace_prefix?: string[];
      filter?: Record<string, Json> | null;
      query?: string | null;
      limit?: number;
      offset?: number;
      refresh_ttl?: boolean;
      query_embedding?: number[] | null;
      distance?: "cosine" | "inner_product" | "l2";
    }
  | { op: "list_namespaces"; prefix?: string[] | null; suffix?: string[] | null; max_depth?: number | null; limit?: number; offset?: number };

/** One session ai.archive_sessions moved to the archive, with the rows moved per table. */
export interface ArchivedSession {
  thread_id: string;
  owner: string;
  status: SessionStatus;
  completed_at: Date;
  rows_moved: Record<string, number>;
}

/** One batch of ai.prune_idle_threads: the threads pruned, and where the next batch starts (null: the walk is done). */
export interface PruneBatch {
  pruned: number;
  next_thread_id: string | null;
}

/** A row of ai.checkpoints_between: a checkpoint without its blobs. */
export interface CheckpointSummary {
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  created_at: Date;
  metadata: Record<string, Json>;
}
