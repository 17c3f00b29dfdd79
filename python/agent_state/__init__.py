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
    NotFound,
    PermissionDenied,
    TooLarge,
)
from .models import AppendResult, Event, Job, Message, QueueStats, Session
from .worker import AsyncJobContext, AsyncWorker, JobContext, Worker, WorkerStats

__all__ = [
    "AgentStateError",
    "AppendResult",
    "AsyncClient",
    "AsyncJobContext",
    "AsyncWorker",
    "Client",
    "Conflict",
    "Event",
    "InvalidArgument",
    "InvalidTransition",
    "Job",
    "JobContext",
    "LeaseLost",
    "Message",
    "NotFound",
    "PermissionDenied",
    "QueueStats",
    "Session",
    "TooLarge",
    "Worker",
    "WorkerStats",
]
