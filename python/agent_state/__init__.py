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
    Message,
    Session,
    TrajectoryStep,
    WindowMessage,
)

__all__ = [
    "AgentStateError",
    "AppendResult",
    "ArchivedSession",
    "AsyncClient",
    "Client",
    "Conflict",
    "ContextWindow",
    "EvalRun",
    "Event",
    "InvalidArgument",
    "InvalidTransition",
    "LeaseLost",
    "Message",
    "NotArchivable",
    "NotFound",
    "PermissionDenied",
    "Session",
    "StaleCompaction",
    "TooLarge",
    "TrajectoryStep",
    "WindowMessage",
]
