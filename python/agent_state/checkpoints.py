"""The checkpoints of LangGraph threads (``ai.put_checkpoint`` ... ``ai.prune_idle_threads``) and ULIDs, sync and async.

:class:`~agent_state.Client` and :class:`~agent_state.AsyncClient` inherit these methods; each is
one round trip, ``select * from ai.<function>(...)``, like every other client method.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from psycopg.types.json import Jsonb

from ._calls import Call, T, _json
from .models import (
    CheckpointRow,
    CheckpointSummary,
    LineageStep,
    PruneBatch,
    PruneStrategy,
    from_row,
)

# checkpoints (%b: bytes and bytea[] go in binary, not hex-escaped text)
ULID: Call[str] = Call("select ai.ulid() as ulid", lambda r: r["ulid"])


ULID_TIME: Call[datetime] = Call("select ai.ulid_time(%s) as t", lambda r: r["t"])


# ai.put_checkpoint: its records written as row(...)::ai.<type>, the parameters in the order of
# CheckpointStep.params()
PUT_CHECKPOINT: Call[str] = Call(
    "select ai.put_checkpoint(%s, %s, %s, %s, %s, %b, %s, %s,"
    " channel_values => row(%s, %s, %s, %b, %s)::ai.checkpoint_values,"
    " writes => row(%s, %s, %s, %s, %s, %b)::ai.task_writes,"
    " messages => %s,"
    " step_commit => row(%s, %s, %s)::ai.step_commit) as id",
    lambda r: r["id"],
)


PUT_WRITES: Call[int] = Call("select ai.put_writes(%s, %s, %s, %s, %s, %s, %s, %b, %s, %s, %s) as n", lambda r: r["n"])


GET_CHECKPOINT = Call("select * from ai.get_checkpoint(%s, %s, %s)", lambda r: from_row(CheckpointRow, r))


LIST_CHECKPOINTS = Call(
    "select * from ai.list_checkpoints(%s, %s, %s, %s, %s, %s, %s)", lambda r: from_row(CheckpointRow, r)
)


CHECKPOINT_LINEAGE = Call("select * from ai.checkpoint_lineage(%s, %s, %s, %s, %s)", lambda r: from_row(LineageStep, r))


CHECKPOINTS_BETWEEN = Call(
    "select * from ai.checkpoints_between(%s, %s, %s, %s, %s, %s)", lambda r: from_row(CheckpointSummary, r)
)


FORK_THREAD: Call[str] = Call("select ai.fork_thread(%s, %s, %s, %s) as id", lambda r: r["id"])


COPY_THREAD: Call[int] = Call("select ai.copy_thread(%s, %s) as n", lambda r: r["n"])


DELETE_THREAD: Call[bool] = Call("select ai.delete_thread(%s) as deleted", lambda r: r["deleted"])


DELETE_FOR_RUNS: Call[int] = Call("select ai.delete_for_runs(%s) as n", lambda r: r["n"])


PRUNE_CHECKPOINTS: Call[int] = Call("select ai.prune_checkpoints(%s, %s) as n", lambda r: r["n"])


PRUNE_IDLE_THREADS = Call("select * from ai.prune_idle_threads(%s, %s, %s, %s)", lambda r: from_row(PruneBatch, r))


@dataclass(frozen=True, slots=True)
class ChannelValue:
    """A channel value for put_checkpoint, stored once per (channel, version); ``base``: the version
    of the same channel whose list this value extends with its items (a delta), None for a whole value."""

    channel: str
    version: str
    type: str
    blob: bytes | None
    base: str | None = None


@dataclass(frozen=True, slots=True)
class PendingWrite:
    """A pending write for put_writes: (idx, channel) of one task, in the caller's serialization."""

    idx: int
    channel: str
    type: str
    blob: bytes


@dataclass(frozen=True, slots=True)
class TaskWrites:
    """One task's pending writes (``ai.task_writes``): put_checkpoint's held writes, for the parent checkpoint."""

    task_id: str
    task_path: str
    writes: Sequence[PendingWrite]


@dataclass(frozen=True, slots=True)
class CheckpointStep:
    """The arguments of ``ai.put_checkpoint``, by name: the checkpoint (its key, parent, serialized
    bytes, metadata and channel versions), its new channel values (``ai.checkpoint_values``), one
    task's held writes (``ai.task_writes``), messages to append, and how it commits
    (``ai.step_commit``: the job's fence and the durability). ``params()`` is what PUT_CHECKPOINT takes."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str | None
    parent_checkpoint_id: str | None
    type: str
    checkpoint: bytes
    metadata: Jsonb | None
    channel_versions: Jsonb | None
    values: Sequence[ChannelValue] = ()
    writes: TaskWrites | None = None
    messages: Jsonb | None = None
    job_id: int | None = None
    fencing_token: int | None = None
    durability: str = "sync"

    def params(self) -> tuple[Any, ...]:
        values, writes = self.values, self.writes
        held: tuple[Any, ...] = (None,) * 6
        if writes is not None:
            held = (
                writes.task_id,
                writes.task_path,
                [w.idx for w in writes.writes],
                [w.channel for w in writes.writes],
                [w.type for w in writes.writes],
                [w.blob for w in writes.writes],
            )
        bases = [v.base for v in values] if any(v.base is not None for v in values) else None
        return (
            self.thread_id,
            self.checkpoint_ns,
            self.checkpoint_id,
            self.parent_checkpoint_id,
            self.type,
            self.checkpoint,
            self.metadata if self.metadata is not None else _json({}),
            self.channel_versions if self.channel_versions is not None else _json({}),
            [v.channel for v in values],
            [v.version for v in values],
            [v.type for v in values],
            [v.blob for v in values],
            bases,
            *held,
            self.messages,
            self.job_id,
            self.fencing_token,
            self.durability,
        )


def _put_writes_args(
    thread_id: str,
    checkpoint_ns: str,
    checkpoint_id: str,
    task_id: str,
    writes: Sequence[PendingWrite],
    task_path: str,
    job_id: int | None,
    fencing_token: int | None,
) -> tuple[Any, ...]:
    return (
        thread_id,
        checkpoint_ns,
        checkpoint_id,
        task_id,
        [w.idx for w in writes],
        [w.channel for w in writes],
        [w.type for w in writes],
        [w.blob for w in writes],
        task_path,
        job_id,
        fencing_token,
    )


# <async>
class AsyncCheckpointMethods:
    """The checkpoints half of :class:`~agent_state.AsyncClient`."""

    async def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by AsyncClient
        raise NotImplementedError

    async def _one(self, call: Call[T], params: Sequence[Any]) -> T:  # provided by AsyncClient
        raise NotImplementedError

    async def ulid(self) -> str:
        """``ai.ulid()``: a new time-ordered id."""
        return await self._one(ULID, ())

    async def ulid_time(self, ulid: str) -> datetime:
        """``ai.ulid_time``: the timestamp a ULID encodes."""
        return await self._one(ULID_TIME, (ulid,))

    async def put_checkpoint(
        self,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str | None,
        parent_checkpoint_id: str | None,
        type: str,
        checkpoint: bytes,
        metadata: dict[str, Any] | None = None,
        channel_versions: dict[str, Any] | None = None,
        values: Sequence[ChannelValue] = (),
        *,
        job_id: int | None = None,
        fencing_token: int | None = None,
        durability: str = "sync",
    ) -> str:
        """``ai.put_checkpoint``: saves a checkpoint and its new channel values; returns its id."""
        step = CheckpointStep(
            thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, _json(metadata or {}),
            _json(channel_versions or {}), values, job_id=job_id, fencing_token=fencing_token, durability=durability,
        )  # fmt: skip
        return await self._one(PUT_CHECKPOINT, step.params())

    async def put_writes(
        self,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str,
        task_id: str,
        writes: Sequence[PendingWrite],
        task_path: str = "",
        *,
        job_id: int | None = None,
        fencing_token: int | None = None,
    ) -> int:
        """``ai.put_writes``: a task's pending writes, idempotent per (task_id, idx); returns rows written."""
        args = _put_writes_args(
            thread_id, checkpoint_ns, checkpoint_id, task_id, writes, task_path, job_id, fencing_token
        )
        return await self._one(PUT_WRITES, args)

    async def get_checkpoint(
        self, thread_id: str, checkpoint_ns: str = "", checkpoint_id: str | None = None
    ) -> CheckpointRow | None:
        """``ai.get_checkpoint``: the given checkpoint, or the newest; None when there is none."""
        rows = await self._rows(GET_CHECKPOINT, (thread_id, checkpoint_ns, checkpoint_id))
        return rows[0] if rows else None

    async def list_checkpoints(
        self,
        thread_id: str | None,
        checkpoint_ns: str | None = None,
        before: str | None = None,
        max_rows: int | None = None,
        metadata_filter: dict[str, Any] | None = None,
        before_thread_id: str | None = None,
        before_checkpoint_ns: str | None = None,
    ) -> list[CheckpointRow]:
        """``ai.list_checkpoints``: one page, newest first (``max_rows`` None: the server's 100). The
        next page: ``before``, ``before_thread_id``, ``before_checkpoint_ns`` = the last row's."""
        flt = None if metadata_filter is None else _json(metadata_filter)
        args = (thread_id, checkpoint_ns, before, max_rows, flt, before_thread_id, before_checkpoint_ns)
        return await self._rows(LIST_CHECKPOINTS, args)

    async def checkpoint_lineage(
        self,
        thread_id: str,
        checkpoint_id: str,
        checkpoint_ns: str = "",
        direction: str = "ancestors",
        max_rows: int = 1000,
    ) -> list[LineageStep]:
        """``ai.checkpoint_lineage``: the parent chain ('ancestors') or every branch below
        ('descendants'), at most ``max_rows``; the next page of ancestors starts at the last row's
        parent."""
        return await self._rows(CHECKPOINT_LINEAGE, (thread_id, checkpoint_id, checkpoint_ns, direction, max_rows))

    async def checkpoints_between(
        self,
        thread_id: str,
        from_time: datetime,
        to_time: datetime,
        max_rows: int = 1000,
        after_checkpoint_ns: str | None = None,
        after_checkpoint_id: str | None = None,
    ) -> list[CheckpointSummary]:
        """``ai.checkpoints_between``: checkpoints saved in [from_time, to_time), oldest first, one
        page; the next: ``after_checkpoint_ns``, ``after_checkpoint_id`` = the last row's."""
        args = (thread_id, from_time, to_time, max_rows, after_checkpoint_ns, after_checkpoint_id)
        return await self._rows(CHECKPOINTS_BETWEEN, args)

    async def fork_thread(
        self, source_thread_id: str, checkpoint_id: str, new_thread_id: str | None = None, checkpoint_ns: str = ""
    ) -> str:
        """``ai.fork_thread``: a new thread holding the checkpoint and its ancestors; returns its id."""
        return await self._one(FORK_THREAD, (source_thread_id, checkpoint_id, new_thread_id, checkpoint_ns))

    async def copy_thread(self, source_thread_id: str, target_thread_id: str) -> int:
        """``ai.copy_thread``: every checkpoint into a new thread; returns how many."""
        return await self._one(COPY_THREAD, (source_thread_id, target_thread_id))

    async def delete_thread(self, thread_id: str) -> bool:
        """``ai.delete_thread``: the thread and all it owns, leaving a tombstone; False when not found."""
        return await self._one(DELETE_THREAD, (thread_id,))

    async def delete_for_runs(self, run_ids: Sequence[str]) -> int:
        """``ai.delete_for_runs``: the checkpoints of these runs; returns how many."""
        return await self._one(DELETE_FOR_RUNS, (list(run_ids),))

    async def prune_checkpoints(self, thread_ids: Sequence[str], strategy: PruneStrategy = "keep_latest") -> int:
        """``ai.prune_checkpoints``: 'keep_latest' or 'delete'; returns the checkpoints deleted."""
        return await self._one(PRUNE_CHECKPOINTS, (list(thread_ids), strategy))

    async def prune_idle_threads(
        self,
        idle: timedelta,
        strategy: PruneStrategy = "keep_latest",
        max_threads: int = 1000,
        after_thread_id: str | None = None,
    ) -> PruneBatch:
        """``ai.prune_idle_threads``: one bounded batch of the walk over the caller's sessions,
        pruning those with no checkpoint newer than now - idle. Call again with
        ``after_thread_id=batch.next_thread_id`` until it is None (``ai.prune_all_idle_threads``
        does the whole walk, committing each batch)."""
        return await self._one(PRUNE_IDLE_THREADS, (idle, strategy, max_threads, after_thread_id))


# </async>


# <sync> generated by scripts/async_to_sync.py from the <async> block above: do not edit
class CheckpointMethods:
    """The checkpoints half of :class:`~agent_state.Client`."""

    def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by Client
        raise NotImplementedError

    def _one(self, call: Call[T], params: Sequence[Any]) -> T:  # provided by Client
        raise NotImplementedError

    def ulid(self) -> str:
        """``ai.ulid()``: a new time-ordered id."""
        return self._one(ULID, ())

    def ulid_time(self, ulid: str) -> datetime:
        """``ai.ulid_time``: the timestamp a ULID encodes."""
        return self._one(ULID_TIME, (ulid,))

    def put_checkpoint(
        self,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str | None,
        parent_checkpoint_id: str | None,
        type: str,
        checkpoint: bytes,
        metadata: dict[str, Any] | None = None,
        channel_versions: dict[str, Any] | None = None,
        values: Sequence[ChannelValue] = (),
        *,
        job_id: int | None = None,
        fencing_token: int | None = None,
        durability: str = "sync",
    ) -> str:
        """``ai.put_checkpoint``: saves a checkpoint and its new channel values; returns its id."""
        step = CheckpointStep(
            thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, _json(metadata or {}),
            _json(channel_versions or {}), values, job_id=job_id, fencing_token=fencing_token, durability=durability,
        )  # fmt: skip
        return self._one(PUT_CHECKPOINT, step.params())

    def put_writes(
        self,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str,
        task_id: str,
        writes: Sequence[PendingWrite],
        task_path: str = "",
        *,
        job_id: int | None = None,
        fencing_token: int | None = None,
    ) -> int:
        """``ai.put_writes``: a task's pending writes, idempotent per (task_id, idx); returns rows written."""
        args = _put_writes_args(
            thread_id, checkpoint_ns, checkpoint_id, task_id, writes, task_path, job_id, fencing_token
        )
        return self._one(PUT_WRITES, args)

    def get_checkpoint(
        self, thread_id: str, checkpoint_ns: str = "", checkpoint_id: str | None = None
    ) -> CheckpointRow | None:
        """``ai.get_checkpoint``: the given checkpoint, or the newest; None when there is none."""
        rows = self._rows(GET_CHECKPOINT, (thread_id, checkpoint_ns, checkpoint_id))
        return rows[0] if rows else None

    def list_checkpoints(
        self,
        thread_id: str | None,
        checkpoint_ns: str | None = None,
        before: str | None = None,
        max_rows: int | None = None,
        metadata_filter: dict[str, Any] | None = None,
        before_thread_id: str | None = None,
        before_checkpoint_ns: str | None = None,
    ) -> list[CheckpointRow]:
        """``ai.list_checkpoints``: one page, newest first (``max_rows`` None: the server's 100). The
        next page: ``before``, ``before_thread_id``, ``before_checkpoint_ns`` = the last row's."""
        flt = None if metadata_filter is None else _json(metadata_filter)
        args = (thread_id, checkpoint_ns, before, max_rows, flt, before_thread_id, before_checkpoint_ns)
        return self._rows(LIST_CHECKPOINTS, args)

    def checkpoint_lineage(
        self,
        thread_id: str,
        checkpoint_id: str,
        checkpoint_ns: str = "",
        direction: str = "ancestors",
        max_rows: int = 1000,
    ) -> list[LineageStep]:
        """``ai.checkpoint_lineage``: the parent chain ('ancestors') or every branch below
        ('descendants'), at most ``max_rows``; the next page of ancestors starts at the last row's
        parent."""
        return self._rows(CHECKPOINT_LINEAGE, (thread_id, checkpoint_id, checkpoint_ns, direction, max_rows))

    def checkpoints_between(
        self,
        thread_id: str,
        from_time: datetime,
        to_time: datetime,
        max_rows: int = 1000,
        after_checkpoint_ns: str | None = None,
        after_checkpoint_id: str | None = None,
    ) -> list[CheckpointSummary]:
        """``ai.checkpoints_between``: checkpoints saved in [from_time, to_time), oldest first, one
        page; the next: ``after_checkpoint_ns``, ``after_checkpoint_id`` = the last row's."""
        args = (thread_id, from_time, to_time, max_rows, after_checkpoint_ns, after_checkpoint_id)
        return self._rows(CHECKPOINTS_BETWEEN, args)

    def fork_thread(
        self, source_thread_id: str, checkpoint_id: str, new_thread_id: str | None = None, checkpoint_ns: str = ""
    ) -> str:
        """``ai.fork_thread``: a new thread holding the checkpoint and its ancestors; returns its id."""
        return self._one(FORK_THREAD, (source_thread_id, checkpoint_id, new_thread_id, checkpoint_ns))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> int:
        """``ai.copy_thread``: every checkpoint into a new thread; returns how many."""
        return self._one(COPY_THREAD, (source_thread_id, target_thread_id))

    def delete_thread(self, thread_id: str) -> bool:
        """``ai.delete_thread``: the thread and all it owns, leaving a tombstone; False when not found."""
        return self._one(DELETE_THREAD, (thread_id,))

    def delete_for_runs(self, run_ids: Sequence[str]) -> int:
        """``ai.delete_for_runs``: the checkpoints of these runs; returns how many."""
        return self._one(DELETE_FOR_RUNS, (list(run_ids),))

    def prune_checkpoints(self, thread_ids: Sequence[str], strategy: PruneStrategy = "keep_latest") -> int:
        """``ai.prune_checkpoints``: 'keep_latest' or 'delete'; returns the checkpoints deleted."""
        return self._one(PRUNE_CHECKPOINTS, (list(thread_ids), strategy))

    def prune_idle_threads(
        self,
        idle: timedelta,
        strategy: PruneStrategy = "keep_latest",
        max_threads: int = 1000,
        after_thread_id: str | None = None,
    ) -> PruneBatch:
        """``ai.prune_idle_threads``: one bounded batch of the walk over the caller's sessions,
        pruning those with no checkpoint newer than now - idle. Call again with
        ``after_thread_id=batch.next_thread_id`` until it is None (``ai.prune_all_idle_threads``
        does the whole walk, committing each batch)."""
        return self._one(PRUNE_IDLE_THREADS, (idle, strategy, max_threads, after_thread_id))


# </sync>
