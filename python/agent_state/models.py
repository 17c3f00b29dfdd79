"""Rows of the SQL API as frozen dataclasses (one per composite type the functions return)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, TypeVar

T = TypeVar("T")


def from_row(cls: type[T], row: dict[str, Any]) -> T:
    """Builds a dataclass from a dict row, ignoring columns it does not declare (newer schema)."""
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: v for k, v in row.items() if k in names})


@dataclass(frozen=True, slots=True)
class Session:
    """ai.agent_sessions: one agent run."""

    thread_id: str
    owner: str
    status: str
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
    role: str
    content: Any
    token_count: int
    turn: int | None
    idempotency_key: str
    created_at: datetime


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

    id: str
    parent_id: str | None
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
