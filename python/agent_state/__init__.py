"""agent-state: durable, resumable state for long-running AI agents, inside PostgreSQL.

The logic lives in the ``ai`` schema (PL/pgSQL); this package only calls it.
"""

from .client import AsyncClient, ChannelValue, Client, PendingWrite
from .errors import (
    AgentStateError,
    Conflict,
    FencingUnavailable,
    InvalidArgument,
    InvalidTransition,
    LeaseLost,
    NotFound,
    PermissionDenied,
    ThreadDeleted,
    TooLarge,
)
from .models import AppendResult, CheckpointRow, CheckpointSummary, Event, LineageStep, Message, Session

__all__ = [
    "AgentStateError",
    "AppendResult",
    "AsyncClient",
    "ChannelValue",
    "CheckpointRow",
    "CheckpointSummary",
    "Client",
    "Conflict",
    "Event",
    "FencingUnavailable",
    "InvalidArgument",
    "InvalidTransition",
    "LeaseLost",
    "LineageStep",
    "Message",
    "NotFound",
    "PendingWrite",
    "PermissionDenied",
    "Session",
    "ThreadDeleted",
    "TooLarge",
]
