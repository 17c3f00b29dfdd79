"""agent-state: durable, resumable state for long-running AI agents, inside PostgreSQL.

The logic lives in the ``ai`` schema (PL/pgSQL); this package only calls it.
"""

from .client import AsyncClient, Client
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
    TooLarge,
)
from .models import (
    AppendResult,
    ArchivedSession,
    ContextWindow,
    EvalRun,
    Event,
    Job,
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
    "Message",
    "NotArchivable",
    "NotFound",
    "PermissionDenied",
    "QueueStats",
    "Session",
    "StaleCompaction",
    "TooLarge",
    "TrajectoryStep",
    "WindowMessage",
    "Worker",
    "WorkerStats",
]
