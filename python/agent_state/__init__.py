"""agent-state: durable, resumable state for long-running AI agents, inside PostgreSQL.

The logic lives in the ``ai`` schema (PL/pgSQL); this package only calls it.
"""

from .client import AsyncClient, ChannelValue, Client, PendingWrite
from .errors import (
    AgentStateError,
    Conflict,
    InvalidArgument,
    InvalidTransition,
    LeaseLost,
    NotArchivable,
    NotFound,
    PermissionDenied,
    StaleCompaction,
    ThreadDeleted,
    TooLarge,
)
from .models import (
    AppendResult,
    ArchivedSession,
    CheckpointRow,
    CheckpointSummary,
    ContextWindow,
    EvalRun,
    Event,
    Job,
    LineageStep,
    Message,
    QueueStats,
    Session,
    TrajectoryStep,
    WindowMessage,
)
from .worker import AsyncJobContext, AsyncWorker, JobContext, Worker, WorkerStats

__all__ = [
    "AgentStateError",
    "AppendResult",
    "ArchivedSession",
    "AsyncClient",
    "AsyncJobContext",
    "AsyncWorker",
    "ChannelValue",
    "CheckpointRow",
    "CheckpointSummary",
    "Client",
    "Conflict",
    "ContextWindow",
    "EvalRun",
    "Event",
    "InvalidArgument",
    "InvalidTransition",
    "Job",
    "JobContext",
    "LeaseLost",
    "LineageStep",
    "Message",
    "NotArchivable",
    "NotFound",
    "PendingWrite",
    "PermissionDenied",
    "QueueStats",
    "Session",
    "StaleCompaction",
    "ThreadDeleted",
    "TooLarge",
    "TrajectoryStep",
    "WindowMessage",
    "Worker",
    "WorkerStats",
]
