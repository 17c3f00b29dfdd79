"""LangGraph checkpointers backed by the ``ai`` schema: ``AgentStateSaver`` and ``AsyncAgentStateSaver``.

Swap ``PostgresSaver`` for one of these and a graph resumes from its last completed node when it
is invoked again with the same ``thread_id``. Every method is one call of a SQL function
(``ai.put_checkpoint``, ``ai.put_writes``, ``ai.get_checkpoint``, ``ai.list_checkpoints``,
``ai.delete_thread``, ``ai.delete_for_runs``, ``ai.copy_thread``, ``ai.prune_checkpoints``,
``ai.delta_channel_history``); the
only work done here is LangGraph's own serialization (``self.serde``).

What is stored where:

* the checkpoint without its channel values and versions -> ``ai.checkpoints.checkpoint`` (serde bytes);
  small primitive channel values (None, bool, int, float, short str) stay inline in it;
* ``channel_versions`` -> ``ai.checkpoints.channel_versions`` (jsonb, the database joins on it);
* every other channel value -> ``ai.checkpoint_blobs``, once per (channel, version): a step writes
  only the channels it changed (``new_versions``);
* ``put_writes`` -> ``ai.checkpoint_writes``.

No lock is held in Python: one saver over a pool serves any number of threads (or tasks) at
once, each call borrowing a connection for one statement. With a single connection, give it
``autocommit=True``. Nothing depends on session state and behind a pooler no statement is
prepared server-side, so the savers work behind PgBouncer in transaction pooling as they are;
``retry=RetryPolicy()`` retries the idempotent calls (get, list, put with its id, put_writes)
after a lost connection (docs/connections.md).

A graph run by a queue worker can pass ``job_id`` and ``fencing_token`` in
``config["configurable"]``: checkpoints and writes then go through the queue's fencing check, and
a zombie worker's writes are rejected (``LeaseLost``).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator, Coroutine, Iterator, Mapping, Sequence
from contextlib import (
    asynccontextmanager,
    contextmanager,
)
from typing import Any, Literal, TypeGuard, TypeVar

import psycopg
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.types import TASKS
from psycopg import pq
from psycopg.rows import dict_row, tuple_row
from psycopg.types.json import Jsonb

from . import client, schema
from .client import AsyncClient, AsyncSource, Client, SyncSource
from .retry import ONCE, RetryPolicy

__all__ = ["AgentStateSaver", "AsyncAgentStateSaver"]

log = logging.getLogger("agent_state.langgraph")

Durability = Literal["sync", "async"]
T = TypeVar("T")

# The same statements as the Client's (one SQL function call each); rows read by position, from
# cursors with their own row factory (the caller's connection may use dict_row, as LangGraph's
# documentation has it for PostgresSaver).
PUT_CHECKPOINT = client.PUT_CHECKPOINT.sql
PUT_WRITES = client.PUT_WRITES.sql
GET_CHECKPOINT = client.GET_CHECKPOINT.sql
LIST_CHECKPOINTS = client.LIST_CHECKPOINTS.sql
DELETE_THREAD = client.DELETE_THREAD.sql
DELETE_FOR_RUNS = client.DELETE_FOR_RUNS.sql
COPY_THREAD = client.COPY_THREAD.sql
PRUNE = client.PRUNE_CHECKPOINTS.sql
# get_delta_channel_history: rows (channel, kind, from_checkpoint_id, task_id, idx, type, blob)
DELTA_CHANNEL_HISTORY = (
    "select channel, kind, from_checkpoint_id, task_id, idx, type, blob from ai.delta_channel_history(%s, %s, %s, %s)"
)

# Column positions of ai.checkpoint_tuple.
(
    _THREAD_ID,
    _NS,
    _ID,
    _PARENT_ID,
    _TYPE,
    _CHECKPOINT,
    _METADATA,
    _VERSIONS,
    _CREATED_AT,
    _BLOB_CHANNELS,
    _BLOB_TYPES,
    _BLOBS,
    _W_TASK_IDS,
    _W_TASK_PATHS,
    _W_IDX,
    _W_CHANNELS,
    _W_TYPES,
    _W_BLOBS,
) = range(18)

# Primitive values up to this length stay inside the checkpoint instead of getting a blob row.
_INLINE_STR_MAX = 256


def _inline(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float)):
        return True
    return isinstance(value, str) and len(value) <= _INLINE_STR_MAX


class _Codec(BaseCheckpointSaver[str]):
    """What both savers share: turning LangGraph's objects into SQL arguments and rows back."""

    def __init__(self, *, serde: SerializerProtocol | None = None, durability: Durability = "sync") -> None:
        super().__init__(serde=serde)
        if durability not in ("sync", "async"):
            raise ValueError(f"durability must be 'sync' or 'async', not {durability!r}")
        self.durability = durability

    def get_next_version(self, current: str | None, channel: None = None) -> str:
        # PostgresSaver's format, so threads and graphs move between the two: a zero-padded counter
        # (sorts as text) and a random part, so that two branches of one thread never give
        # different values the same (channel, version).
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"

    def _put_args(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> tuple[tuple[Any, ...], RunnableConfig]:
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_ns = configurable.get("checkpoint_ns") or ""
        values = checkpoint["channel_values"]
        inline = {k: v for k, v in values.items() if _inline(v)}
        stored = {k: v for k, v in checkpoint.items() if k not in ("channel_values", "channel_versions")}
        stored["channel_values"] = inline
        type_, data = self.serde.dumps_typed(stored)
        channels: list[str] = []
        versions: list[str] = []
        types: list[str] = []
        blobs: list[bytes] = []
        for channel, version in new_versions.items():
            if channel in values and channel not in inline:
                blob_type, blob = self.serde.dumps_typed(values[channel])
                channels.append(channel)
                versions.append(str(version))
                types.append(blob_type)
                blobs.append(blob)
        args = (
            thread_id,
            checkpoint_ns,
            checkpoint["id"],
            configurable.get("checkpoint_id"),
            type_,
            data,
            Jsonb(get_serializable_checkpoint_metadata(config, metadata)),
            Jsonb(checkpoint["channel_versions"]),
            channels,
            versions,
            types,
            blobs,
            configurable.get("job_id"),
            configurable.get("fencing_token"),
            self.durability,
        )
        next_config: RunnableConfig = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }
        return args, next_config

    def _writes_args(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str
    ) -> tuple[Any, ...]:
        configurable = config["configurable"]
        idx: list[int] = []
        channels: list[str] = []
        types: list[str] = []
        blobs: list[bytes] = []
        for i, (channel, value) in enumerate(writes):
            type_, blob = self.serde.dumps_typed(value)
            idx.append(WRITES_IDX_MAP.get(channel, i))
            channels.append(channel)
            types.append(type_)
            blobs.append(blob)
        return (
            str(configurable["thread_id"]),
            configurable.get("checkpoint_ns") or "",
            configurable["checkpoint_id"],
            task_id,
            idx,
            channels,
            types,
            blobs,
            task_path,
            configurable.get("job_id"),
            configurable.get("fencing_token"),
        )

    def _tuple(self, row: Sequence[Any]) -> CheckpointTuple:
        loads = self.serde.loads_typed
        checkpoint = loads((row[_TYPE], row[_CHECKPOINT]))
        values = checkpoint.get("channel_values") or {}
        if row[_BLOBS]:
            for channel, type_, blob in zip(row[_BLOB_CHANNELS], row[_BLOB_TYPES], row[_BLOBS], strict=True):
                values[channel] = loads((type_, blob))
        checkpoint["channel_values"] = values
        checkpoint["channel_versions"] = row[_VERSIONS]
        thread_id, checkpoint_ns = row[_THREAD_ID], row[_NS]
        writes = []
        if row[_W_BLOBS]:
            writes = [
                (task_id, channel, loads((type_, blob)))
                for task_id, channel, type_, blob in zip(
                    row[_W_TASK_IDS], row[_W_CHANNELS], row[_W_TYPES], row[_W_BLOBS], strict=True
                )
            ]
        parent = row[_PARENT_ID]
        return CheckpointTuple(
            config={
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": checkpoint_ns,
                    "checkpoint_id": row[_ID],
                }
            },
            checkpoint=checkpoint,
            metadata=row[_METADATA],
            parent_config=(
                {
                    "configurable": {
                        "thread_id": thread_id,
                        "checkpoint_ns": checkpoint_ns,
                        "checkpoint_id": parent,
                    }
                }
                if parent
                else None
            ),
            pending_writes=writes,
        )

    @staticmethod
    def _sends_parent(found: CheckpointTuple) -> tuple[str, str, str] | None:
        """get_checkpoint's arguments for the parent that holds the pending sends of a checkpoint
        written by LangGraph before checkpoint format v4 (sends were then writes to TASKS of the
        parent; v4 keeps them in the TASKS channel). None for any other checkpoint."""
        if found.checkpoint.get("v", 4) >= 4 or found.parent_config is None:
            return None
        parent = found.parent_config["configurable"]
        return (parent["thread_id"], parent["checkpoint_ns"], parent["checkpoint_id"])

    def _migrate_pending_sends(self, found: CheckpointTuple, parent_row: Sequence[Any]) -> None:
        """PostgresSaver's conversion: the parent's TASKS writes, in (task_path, task_id, idx)
        order, become the TASKS channel of the checkpoint, at its newest channel version."""
        if not parent_row[_W_BLOBS]:
            return
        loads = self.serde.loads_typed
        sends = [
            loads((type_, blob))
            for channel, type_, blob in zip(
                parent_row[_W_CHANNELS], parent_row[_W_TYPES], parent_row[_W_BLOBS], strict=True
            )
            if channel == TASKS
        ]
        if not sends:
            return
        versions = found.checkpoint["channel_versions"]
        found.checkpoint["channel_values"][TASKS] = sends
        versions[TASKS] = max(versions.values()) if versions else self.get_next_version(None)

    @staticmethod
    def _matches(found: CheckpointTuple | None, filter: dict[str, Any] | None) -> TypeGuard[CheckpointTuple]:
        """list() of one checkpoint id: whether it exists and its metadata passes the filter."""
        return found is not None and all(found.metadata.get(k) == v for k, v in (filter or {}).items())

    @staticmethod
    def _get_args(config: RunnableConfig) -> tuple[Any, ...]:
        configurable = config["configurable"]
        return (
            str(configurable["thread_id"]),
            configurable.get("checkpoint_ns") or "",
            get_checkpoint_id(config),
        )

    @staticmethod
    def _list_args(
        config: RunnableConfig | None,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> tuple[Any, ...]:
        configurable = (config or {}).get("configurable", {})
        thread_id = configurable.get("thread_id")
        return (
            None if thread_id is None else str(thread_id),
            configurable.get("checkpoint_ns"),
            get_checkpoint_id(before) if before else None,
            limit,
            Jsonb(filter) if filter else None,
        )

    @staticmethod
    def _prune_args(thread_ids: Sequence[str], strategy: str) -> tuple[Any, ...]:
        if isinstance(thread_ids, str):
            raise TypeError("thread_ids must be a sequence of thread IDs, not a str")
        return ([str(t) for t in thread_ids], strategy)

    @staticmethod
    def _delta_args(config: RunnableConfig, channels: Sequence[str]) -> tuple[Any, ...]:
        configurable = config["configurable"]
        return (
            str(configurable["thread_id"]),
            configurable.get("checkpoint_ns") or "",
            get_checkpoint_id(config) or None,  # "" means the newest, as PostgresSaver reads it
            [str(c) for c in channels],
        )

    def _delta_history(
        self, rows: Sequence[Sequence[Any]], channels: Sequence[str]
    ) -> tuple[dict[str, DeltaChannelHistory], list[str]]:
        """ai.delta_channel_history's rows as LangGraph's mapping, and the channels whose walk ended
        at a checkpoint that turned out not to hold the value (left to LangGraph's own walk)."""
        loads = self.serde.loads_typed
        history: dict[str, DeltaChannelHistory] = {c: {"writes": []} for c in channels}
        unresolved: list[str] = []
        for channel, kind, _checkpoint_id, task_id, _idx, type_, blob in rows:
            entry = history[channel]
            if kind == "write":
                entry["writes"].append((task_id, channel, loads((type_, blob))))
            elif kind == "seed":
                seed = loads((type_, blob))
                if seed is not None:  # a stored None is an empty channel: replay from empty (as PostgresSaver)
                    entry["seed"] = seed
            else:  # "checkpoint": a pre-delta value, inline in the checkpoint bytes (or absent)
                values = loads((type_, blob)).get("channel_values") or {}
                if values.get(channel) is not None:
                    entry["seed"] = values[channel]
                elif channel not in values:
                    unresolved.append(channel)
                # an inline None is an empty channel then: replay from empty, no seed (as PostgresSaver)
        return history, unresolved


def _said(found: schema.SchemaStatus) -> schema.SchemaStatus:
    """setup()'s one line when it did more than install the bundle (a superuser's connection: the
    owner role it deployed as)."""
    if found.note:
        log.warning("setup(): %s", found.note)
    return found


def _newest_if_empty(config: RunnableConfig) -> RunnableConfig:
    """An empty checkpoint_id means the newest checkpoint (as PostgresSaver reads it); LangGraph's
    own walk, the fallback for an unresolved channel, wants it absent for that."""
    if get_checkpoint_id(config):
        return config
    configurable = {k: v for k, v in config["configurable"].items() if k != "checkpoint_id"}
    return {**config, "configurable": configurable}


def _without_none_seeds(history: Mapping[str, DeltaChannelHistory]) -> dict[str, DeltaChannelHistory]:
    """LangGraph's own walk reports a stored None as a seed; PostgresSaver (and ours) report none:
    the channel was empty there, so it is replayed from empty."""
    out: dict[str, DeltaChannelHistory] = {}
    for channel, entry in history.items():
        if "seed" in entry and entry["seed"] is None:
            entry = entry.copy()
            del entry["seed"]
        out[channel] = entry
    return out


class AgentStateSaver(_Codec):
    """Synchronous LangGraph checkpointer over a psycopg ``Connection`` (autocommit) or ``ConnectionPool``.

    The async methods run the sync ones in a worker thread, so a graph can also be run with
    ``ainvoke``; :class:`AsyncAgentStateSaver` is the native async twin.
    """

    def __init__(
        self,
        conn: SyncSource,
        *,
        serde: SerializerProtocol | None = None,
        durability: Durability = "sync",
        retry: RetryPolicy | None = None,
    ) -> None:
        super().__init__(serde=serde, durability=durability)
        self._client = Client(conn, retry=retry)
        self._conn_string: str | None = None

    @property
    def conn(self) -> SyncSource:
        """The pool or connection in use (after a lost connection was replaced, the new one)."""
        return self._client.source

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        pipeline: bool = False,
        serde: SerializerProtocol | None = None,
        retry: RetryPolicy | None = ONCE,
    ) -> Iterator[AgentStateSaver]:
        """A saver over one new connection, closed when the block ends (``PostgresSaver``'s signature).

        The connection is PostgresSaver's (autocommit, ``dict_row``) except that it never prepares
        statements (``prepare_threshold=None``), so the same string works behind PgBouncer in
        transaction pooling; ``pipeline=True`` runs it in pipeline mode. The saver owns it: a
        connection the server ended is replaced on the next call, and a call safe to retry (get,
        list, put, put_writes) is retried as ``retry`` says, once by default (docs/connections.md)."""
        conn = psycopg.Connection.connect(conn_string, autocommit=True, prepare_threshold=None, row_factory=dict_row)
        saver = cls(conn, serde=serde, retry=retry)
        saver._client._owned = True
        saver._conn_string = conn_string
        try:
            if pipeline:
                with conn.pipeline():
                    yield saver
            else:
                yield saver
        finally:
            saver._client.source.close()

    def setup(self) -> schema.SchemaStatus:
        """Checks that schema ``ai`` is deployed at a version this package can use; on an empty
        database, deploys the schema bundled in the package when the role may (as
        ``PostgresSaver.setup()`` creates its tables). Otherwise raises
        :class:`agent_state.schema.SchemaError` naming what to run. Safe to call on every start."""
        self._client._replace_if_lost()
        with self._client._connection() as conn:
            if conn.info.pipeline_status != pq.PipelineStatus.OFF and self._conn_string is not None:
                found = schema.status(conn)
                if found.deployed:
                    return schema.deploy(conn)  # checks only: raises unless compatible
                with psycopg.Connection.connect(self._conn_string, autocommit=True) as own:
                    return _said(schema.deploy(own))
            return _said(schema.deploy(conn))

    def _execute(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        # The client's connection handling: no prepared statement behind a pooler, retries, and
        # on a connection in pipeline mode a sync before it returns (committed, as with
        # PostgresSaver(conn, pipe=...)). Tuples whatever the connection's row factory.
        return self._client._fetch(sql, params, tuple_row, binary=True)

    def _load(self, rows: Sequence[Sequence[Any]]) -> list[CheckpointTuple]:
        found = [self._tuple(row) for row in rows]
        for item in found:
            parent = self._sends_parent(item)
            if parent is not None:  # a checkpoint of an old LangGraph (imported history): rare
                parent_rows = self._execute(GET_CHECKPOINT, parent)
                if parent_rows:
                    self._migrate_pending_sends(item, parent_rows[0])
        return found

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        rows = self._execute(GET_CHECKPOINT, self._get_args(config))
        return self._load(rows)[0] if rows else None

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        if config is not None and get_checkpoint_id(config):
            found = self.get_tuple(config)
            if self._matches(found, filter):
                yield found
            return
        yield from self._load(self._execute(LIST_CHECKPOINTS, self._list_args(config, filter, before, limit)))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        args, next_config = self._put_args(config, checkpoint, metadata, new_versions)
        self._execute(PUT_CHECKPOINT, args)
        return next_config

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        self._execute(PUT_WRITES, self._writes_args(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        self._execute(DELETE_THREAD, (str(thread_id),))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._execute(DELETE_FOR_RUNS, ([str(r) for r in run_ids],))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._execute(COPY_THREAD, (str(source_thread_id), str(target_thread_id)))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._execute(PRUNE, self._prune_args(thread_ids, strategy))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """LangGraph's DeltaChannel history (beta) in one call of ``ai.delta_channel_history``: per
        channel, the nearest stored value on the parent chain and the writes since, oldest first."""
        if not channels:
            return {}
        rows = self._execute(DELTA_CHANNEL_HISTORY, self._delta_args(config, channels))
        history, unresolved = self._delta_history(rows, channels)
        if unresolved:
            history.update(
                _without_none_seeds(
                    BaseCheckpointSaver.get_delta_channel_history(
                        self, config=_newest_if_empty(config), channels=unresolved
                    )
                )
            )
        return history

    # -- async: the sync methods in a worker thread ---------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        found = await asyncio.to_thread(lambda: [*self.list(config, filter=filter, before=before, limit=limit)])
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return await asyncio.to_thread(lambda: self.get_delta_channel_history(config=config, channels=channels))


class AsyncAgentStateSaver(_Codec):
    """Asynchronous LangGraph checkpointer over a psycopg ``AsyncConnection`` (autocommit) or
    ``AsyncConnectionPool``.

    The sync methods work from other threads while the saver's event loop runs (as with
    LangGraph's ``AsyncPostgresSaver``); within the loop, use the async methods.
    """

    def __init__(
        self,
        conn: AsyncSource,
        *,
        serde: SerializerProtocol | None = None,
        durability: Durability = "sync",
        retry: RetryPolicy | None = None,
    ) -> None:
        super().__init__(serde=serde, durability=durability)
        self._client = AsyncClient(conn, retry=retry)
        self._conn_string: str | None = None
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    @property
    def conn(self) -> AsyncSource:
        """See :attr:`AgentStateSaver.conn`."""
        return self._client.source

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str,
        *,
        pipeline: bool = False,
        serde: SerializerProtocol | None = None,
        retry: RetryPolicy | None = ONCE,
    ) -> AsyncIterator[AsyncAgentStateSaver]:
        """The async twin of :meth:`AgentStateSaver.from_conn_string`."""
        conn = await psycopg.AsyncConnection.connect(
            conn_string, autocommit=True, prepare_threshold=None, row_factory=dict_row
        )
        saver = cls(conn, serde=serde, retry=retry)
        saver._client._owned = True
        saver._conn_string = conn_string
        try:
            if pipeline:
                async with conn.pipeline():
                    yield saver
            else:
                yield saver
        finally:
            await saver._client.source.close()

    async def setup(self) -> schema.SchemaStatus:
        """The async twin of :meth:`AgentStateSaver.setup`."""
        await self._client._replace_if_lost()
        async with self._client._connection() as conn:
            if conn.info.pipeline_status != pq.PipelineStatus.OFF and self._conn_string is not None:
                found = await schema.astatus(conn)
                if found.deployed:
                    return await schema.adeploy(conn)
                async with await psycopg.AsyncConnection.connect(self._conn_string, autocommit=True) as own:
                    return _said(await schema.adeploy(own))
            return _said(await schema.adeploy(conn))

    async def _execute(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        # See AgentStateSaver._execute.
        return await self._client._fetch(sql, params, tuple_row, binary=True)

    async def _load(self, rows: Sequence[Sequence[Any]]) -> list[CheckpointTuple]:
        found = [self._tuple(row) for row in rows]
        for item in found:
            parent = self._sends_parent(item)
            if parent is not None:
                parent_rows = await self._execute(GET_CHECKPOINT, parent)
                if parent_rows:
                    self._migrate_pending_sends(item, parent_rows[0])
        return found

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        rows = await self._execute(GET_CHECKPOINT, self._get_args(config))
        return (await self._load(rows))[0] if rows else None

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        if config is not None and get_checkpoint_id(config):
            found = await self.aget_tuple(config)
            if self._matches(found, filter):
                yield found
            return
        rows = await self._execute(LIST_CHECKPOINTS, self._list_args(config, filter, before, limit))
        for item in await self._load(rows):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        args, next_config = self._put_args(config, checkpoint, metadata, new_versions)
        await self._execute(PUT_CHECKPOINT, args)
        return next_config

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        await self._execute(PUT_WRITES, self._writes_args(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        await self._execute(DELETE_THREAD, (str(thread_id),))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._execute(DELETE_FOR_RUNS, ([str(r) for r in run_ids],))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._execute(COPY_THREAD, (str(source_thread_id), str(target_thread_id)))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self._execute(PRUNE, self._prune_args(thread_ids, strategy))

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """LangGraph's DeltaChannel history (beta) in one call of ``ai.delta_channel_history``: per
        channel, the nearest stored value on the parent chain and the writes since, oldest first."""
        if not channels:
            return {}
        rows = await self._execute(DELTA_CHANNEL_HISTORY, self._delta_args(config, channels))
        history, unresolved = self._delta_history(rows, channels)
        if unresolved:
            history.update(
                _without_none_seeds(
                    await BaseCheckpointSaver.aget_delta_channel_history(
                        self, config=_newest_if_empty(config), channels=unresolved
                    )
                )
            )
        return history

    # -- sync: run on the saver's loop from another thread --------------------------------------

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self.loop is None:
            coro.close()
            raise RuntimeError("AsyncAgentStateSaver was created outside an event loop: use the async methods")
        try:
            if asyncio.get_running_loop() is self.loop:
                coro.close()
                raise asyncio.InvalidStateError(
                    "synchronous calls to AsyncAgentStateSaver are only allowed from another thread; "
                    "in the event loop use the async methods (ainvoke, aget_tuple, ...)"
                )
        except RuntimeError:
            pass
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._run(self.aget_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        async def collect() -> list[CheckpointTuple]:
            return [t async for t in self.alist(config, filter=filter, before=before, limit=limit)]

        yield from self._run(collect())

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self._run(self.aput(config, checkpoint, metadata, new_versions))

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        self._run(self.aput_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        self._run(self.adelete_thread(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._run(self.adelete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._run(self.acopy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._run(self.aprune(thread_ids, strategy=strategy))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return self._run(self.aget_delta_channel_history(config=config, channels=channels))


# Durable graph runs through the queue (agent_state/graph_runs.py), importable from here too.
from .graph_runs import (  # noqa: E402
    AsyncGraphRuns,
    GraphRuns,
    async_graph_handler,
    async_graph_worker,
    graph_handler,
    graph_worker,
    job_context,
)

__all__ += [
    "AsyncGraphRuns",
    "GraphRuns",
    "async_graph_handler",
    "async_graph_worker",
    "graph_handler",
    "graph_worker",
    "job_context",
]
