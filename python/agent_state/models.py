"""Rows of the SQL API as frozen dataclasses (one per composite type the functions return)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, ClassVar, Literal, Protocol, TypeVar

# -- the enumerations of the SQL API, one alias each -------------------------------------------
# Each matches the values its CHECK constraint allows, exactly: tests/python/test_literals.py
# reads them from the catalog and compares.

#: ai.agent_jobs.status
JobStatus = Literal["PENDING", "IN_PROGRESS", "COMPLETED", "FAILED", "CANCELLED", "AWAITING_HUMAN"]
#: ai.agent_sessions.status
SessionStatus = Literal["active", "waiting", "completed", "failed", "cancelled"]
#: ai.session_messages.role and ai.message_streams.role
MessageRole = Literal["system", "user", "assistant", "tool_call", "tool_result"]
#: ai.side_effects.status
SideEffectStatus = Literal["reserved", "done", "abandoned"]
#: ai.human_approvals.status
ApprovalStatus = Literal["pending", "resolved", "cancelled"]
#: ai.message_streams.status
StreamStatus = Literal["open", "finished", "abandoned"]
#: ai.begin_side_effect's outcome (not a column: what the function answers)
SideEffectOutcome = Literal["execute", "done", "busy"]
#: ai.job_attempts' outcome (not a column: how each attempt of the job's log ended)
JobAttemptOutcome = Literal[
    "completed",
    "failed",
    "released",
    "snoozed",
    "cancelled",
    "awaiting_human",
    "expired",
    "deadline_exceeded",
    "in_progress",
]
#: the strategy argument of ai.prune_checkpoints and ai.prune_idle_threads
PruneStrategy = Literal["keep_latest", "delete"]


class _Dataclass(Protocol):
    __dataclass_fields__: ClassVar[dict[str, Any]]


T = TypeVar("T", bound=_Dataclass)


def from_row(cls: type[T], row: dict[str, Any]) -> T:
    """Builds a dataclass from a dict row, ignoring columns it does not declare (newer schema)."""
    names = cls.__dataclass_fields__.keys()
    return cls(**{k: v for k, v in row.items() if k in names})


@dataclass(frozen=True, slots=True)
class Session:
    """ai.agent_sessions: one agent run."""

    thread_id: str
    owner: str
    status: SessionStatus
    config: dict[str, Any]
    current_checkpoint_id: str | None
    last_seq: int
    created_at: datetime
    updated_at: datetime
    completed_at: datetime | None


@dataclass(frozen=True, slots=True)
class Message:
    """ai.session_messages: one message of a thread, numbered by seq from 1."""

    thread_id: str
    seq: int
    owner: str
    role: MessageRole
    content: Any
    token_count: int
    turn: int | None
    idempotency_key: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class NewMessage:
    """One message of a batch for ``append_messages``; the key and token count are optional."""

    role: MessageRole
    content: Any
    turn: int | None = None
    idempotency_key: str | None = None
    token_count: int | None = None


@dataclass(frozen=True, slots=True)
class NewJob:
    """One job of a batch for ``enqueue_jobs``: its thread and payload; run_at (None: now),
    priority and idempotency key are optional."""

    thread_id: str
    payload: Any = None
    run_at: datetime | None = None
    priority: int = 0
    idempotency_key: str | None = None
    #: as enqueue_job's (None: the queue's default, else none)
    timeout: timedelta | None = None
    deadline: datetime | None = None
    start_by: datetime | None = None
    #: The fairness and limit key (None: the owner's own); docs/queue.md, "Fair shares and limits".
    key: str | None = None


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What append_message returns: the message, and whether this call wrote it."""

    message: Message
    inserted: bool


@dataclass(frozen=True, slots=True)
class Event:
    """ai.session_events: one entry of a thread's event stream."""

    thread_id: str
    event_id: int
    owner: str
    kind: str
    payload: Any
    created_at: datetime


@dataclass(frozen=True, slots=True)
class WindowMessage:
    """One message of a context window; is_summary marks the summary at its head."""

    seq: int
    role: MessageRole
    content: Any
    token_count: int
    is_summary: bool


@dataclass(frozen=True, slots=True)
class ContextWindow:
    """ai.context_window: what to send to the model now, and whether to compact (and what)."""

    messages: list[WindowMessage]
    total_tokens: int
    compaction_due: bool
    compact_from_seq: int | None
    compact_through_seq: int | None
    summary_through_seq: int
    last_seq: int


@dataclass(frozen=True, slots=True)
class TrajectoryStep:
    """ai.trajectory: one step of a recorded trajectory."""

    seq: int
    role: MessageRole
    tool_name: str | None
    arguments: Any
    content: Any
    is_final: bool


@dataclass(frozen=True, slots=True)
class EvalRun:
    """ai.eval_runs: one replay of a recorded thread by a candidate, with its scores."""

    eval_id: int
    thread_id: str
    owner: str
    replay_thread_id: str | None
    from_checkpoint_id: str | None
    candidate: str
    passed: bool
    scores: dict[str, Any]
    diff: Any
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ArchivedSession:
    """One row of ai.archive_sessions: a session moved to ai_archive, with rows moved per table."""

    thread_id: str
    owner: str
    status: SessionStatus
    completed_at: datetime
    rows_moved: dict[str, int]


@dataclass(frozen=True, slots=True)
class PruneBatch:
    """One batch of ai.prune_idle_threads: threads pruned, and where the next batch starts (None:
    the walk is done)."""

    pruned: int
    next_thread_id: str | None


# -- queue ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Job:
    """ai.agent_jobs: one job of the durable queue."""

    job_id: int
    thread_id: str
    owner: str
    queue: str
    status: JobStatus
    payload: Any
    priority: int
    run_at: datetime
    attempts: int
    max_attempts: int
    lease_owner: str | None
    lease_expires_at: datetime | None
    fencing_token: int
    last_error: str | None
    result: Any
    idempotency_key: str | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    available_at: datetime
    claimed_at: datetime | None = None
    #: each attempt's run timeout, the total deadline, the start deadline (None: none; docs/queue.md, "Deadlines")
    timeout: timedelta | None = None
    deadline: datetime | None = None
    start_by: datetime | None = None

    @property
    def attempt_deadline(self) -> datetime | None:
        """When the current attempt must end: claimed_at + timeout, or the total deadline if sooner
        (None: no deadline). No lease of the attempt reaches past it."""
        ends = [
            d
            for d in (
                self.deadline,
                None if self.timeout is None or self.claimed_at is None else self.claimed_at + self.timeout,
            )
            if d is not None
        ]
        return min(ends) if ends else None

    #: what the enqueuer handed to the run (change job_headers): its W3C trace context, ...
    headers: dict[str, str] | None = None
    #: the attempts that ended, oldest first (what ai.job_attempts reads; the Worker's spans tell a
    #: takeover from a retry by its last entry)
    attempt_log: list[dict[str, Any]] | None = None
    #: The job's fairness and limit key: the one enqueue named, or '@' and the owner.
    key: str | None = None


@dataclass(frozen=True, slots=True)
class JobAttempt:
    """One attempt of a job (ai.job_attempts): outcome completed, failed, released, snoozed,
    cancelled, awaiting_human, expired, deadline_exceeded (its lease ran out at the attempt's
    deadline), or in_progress for the one running."""

    attempt: int
    worker: str | None
    fencing_token: int
    claimed_at: datetime | None
    lease_expires_at: datetime | None
    ended_at: datetime | None
    outcome: JobAttemptOutcome
    error: str | None


@dataclass(frozen=True, slots=True)
class JobKeyStatus:
    """One row of ai.job_key_status: a key of a queue, what an operator set for it (weight,
    max_in_flight, rate_per_minute, burst) and its figures: in_flight (running jobs whose lease
    holds), tokens (the bucket now; None for tenants), backlog and due (PENDING; counts stop at
    10,000). A tenant sees only the keys of its own jobs, counted over its own jobs."""

    queue: str
    key: str
    weight: float
    max_in_flight: int | None
    in_flight: int
    rate_per_minute: float | None
    burst: int | None
    tokens: float | None
    backlog: int
    due: int


@dataclass(frozen=True, slots=True)
class QueueStats:
    """One row of ai.queue_stats: the jobs of one queue, by status."""

    queue: str
    pending: int
    due: int
    in_progress: int
    expired_leases: int
    awaiting_human: int
    completed: int
    failed: int
    cancelled: int
    oldest_due_age: timedelta | None
    failed_attempts: int = 0
    expired_attempts: int = 0


# -- usage ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """ai.usage_records: one metered model call; inserted is False when the call was a retry."""

    thread_id: str
    usage_id: int
    owner: str
    idempotency_key: str
    model: str
    input_tokens: int
    output_tokens: int
    cost: Decimal
    details: Any
    job_id: int | None
    created_at: datetime
    inserted: bool


@dataclass(frozen=True, slots=True)
class UsageSummaryRow:
    """One row of ai.usage_summary; a dimension not grouped by is None."""

    owner: str | None
    thread_id: str | None
    model: str | None
    day: date | None
    records: int
    input_tokens: Decimal
    output_tokens: Decimal
    cost: Decimal


# -- streams --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StreamState:
    """ai.get_stream: a message being streamed; stale when open with no chunk for a while."""

    thread_id: str
    stream_key: str
    owner: str
    role: MessageRole
    turn: int | None
    status: StreamStatus
    last_chunk: int
    total_bytes: int
    job_id: int | None
    opened_at: datetime
    last_chunk_at: datetime | None
    closed_at: datetime | None
    message_seq: int | None
    stale: bool
    channel: str


@dataclass(frozen=True, slots=True)
class StreamChunk:
    """One chunk of a stream, numbered from 1."""

    chunk_no: int
    content: str
    created_at: datetime


# -- retrievals -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RetrievalRecord:
    """ai.turn_retrievals: the documents retrieved for a turn; inserted is False on a retry."""

    thread_id: str
    retrieval_id: int
    owner: str
    turn: int
    idempotency_key: str
    documents: Any
    created_at: datetime
    inserted: bool


@dataclass(frozen=True, slots=True)
class TurnContext:
    """ai.get_turn_context: a turn's messages and the documents retrieved for it (JSON lists)."""

    thread_id: str
    turn: int
    messages: Any
    retrievals: Any


# -- checkpoints ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CheckpointRow:
    """ai.checkpoint_tuple: a checkpoint with its channel values (blob_*) and pending writes (write_*).

    The bytes are in the caller's serialization (``type`` / ``blob_types`` / ``write_types`` name it).
    """

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    type: str
    checkpoint: bytes
    metadata: dict[str, Any]
    channel_versions: dict[str, Any]
    created_at: datetime
    blob_channels: list[str] | None
    blob_types: list[str] | None
    blobs: list[bytes | None] | None
    write_task_ids: list[str] | None
    write_task_paths: list[str] | None
    write_idx: list[int] | None
    write_channels: list[str] | None
    write_types: list[str] | None
    write_blobs: list[bytes] | None


@dataclass(frozen=True, slots=True)
class LineageStep:
    """One row of ai.checkpoint_lineage: a checkpoint along a parent chain, at its distance (depth)."""

    checkpoint_id: str
    parent_checkpoint_id: str | None
    depth: int
    created_at: datetime
    metadata: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CheckpointSummary:
    """One row of ai.checkpoints_between."""

    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    created_at: datetime
    metadata: dict[str, Any]


# -- side effects and human in the loop -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SideEffect:
    """ai.side_effects: one logical external action of a thread, by its idempotency key."""

    thread_id: str
    idempotency_key: str
    owner: str
    request: Any
    status: SideEffectStatus
    result: Any
    attempt: int
    takeovers: int
    job_id: int | None
    fencing_token: int | None
    reserved_until: datetime | None
    last_error: str | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class SideEffectBegin:
    """ai.begin_side_effect: 'execute' (reserved for the caller), 'done' (result stored) or 'busy'."""

    outcome: SideEffectOutcome
    attempt: int
    taken_over: bool
    result: Any
    holder_job_id: int | None
    reserved_until: datetime | None


@dataclass(frozen=True, slots=True)
class Approval:
    """ai.human_approvals: what a thread waits for a person to decide, and the decision.

    ``status`` is ``pending``, ``resolved`` (``decision`` holds it) or ``cancelled`` (its job was
    cancelled: no decision, ``decided_by`` is who cancelled, ``decided_at`` when)."""

    approval_id: str
    thread_id: str
    owner: str
    job_id: int
    checkpoint_id: str
    action: Any
    status: ApprovalStatus
    requested_by: str | None
    requested_at: datetime
    decision: Any
    decided_by: str | None
    decided_for: str | None
    decided_at: datetime | None
