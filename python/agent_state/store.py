"""LangGraph's ``BaseStore`` (long-term memory) over schema ``ai``: :class:`AgentStateStore` and
:class:`AsyncAgentStateStore` (re-exported by :mod:`agent_state.langgraph`; docs/memory.md).

A batch of operations is one call of ``ai.batch_memory``: one statement, one round trip, one
transaction, never a prepared statement behind a pooler (the client's connection handling, as the
savers'). Items belong to the caller's owner (row level security), expired items are never
returned, filters compare by JSON type, and a query without embeddings ranks by full-text search.

With ``index={"dims": ..., "embed": ...}`` the store embeds the indexed fields of each put (the
``fields`` paths, ``"$"`` the whole value, as ``PostgresStore``) and the query of each search, and
the database ranks by the nearest field (``distance_type`` cosine, inner_product or l2).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any, Literal, cast

import psycopg
from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    ensure_embeddings,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)
from langgraph.store.base.batch import AsyncBatchedBaseStore
from psycopg import pq
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from . import schema
from .client import AsyncClient, AsyncSource, Client, SyncSource
from .memory import item_from_json
from .retry import ONCE, RetryPolicy

__all__ = ["AgentStateStore", "AsyncAgentStateStore", "MemoryIndexConfig"]

log = logging.getLogger(__name__)

Distance = Literal["cosine", "inner_product", "l2"]


class MemoryIndexConfig(IndexConfig, total=False):
    """LangGraph's ``IndexConfig`` plus the distance the search ranks by (as ``PostgresStore``'s)."""

    distance_type: Distance


class _Plan:
    """The JSON operations of one batch, and the texts still to embed (I/O-free: the sync and async
    stores drive it alike)."""

    def __init__(self, store: _StoreCore, ops: Sequence[Op]) -> None:
        self.ops = ops
        self.calls: list[dict[str, Any]] = []
        self.to_embed: list[tuple[dict[str, Any], str, str]] = []  # (call, field, text)
        self.queries: list[tuple[dict[str, Any], str]] = []
        for op in ops:
            validate_op_namespace(op)
        for op in ops:
            self.calls.append(store._call(op, self))

    def documents(self) -> list[str]:
        return [text for _, _, text in self.to_embed]

    def fill(self, vectors: Sequence[Sequence[float]], query_vectors: Sequence[Sequence[float]]) -> None:
        for (call, field, _), vector in zip(self.to_embed, vectors, strict=True):
            call.setdefault("embeddings", {})[field] = [float(x) for x in vector]
        for (call, _), vector in zip(self.queries, query_vectors, strict=True):
            call["query_embedding"] = [float(x) for x in vector]

    def results(self, found: Sequence[Any]) -> list[Result]:
        out: list[Result] = []
        for op, value in zip(self.ops, found, strict=True):
            if isinstance(op, GetOp):
                out.append(None if value is None else _item(value))
            elif isinstance(op, SearchOp):
                out.append([_search_item(v) for v in value])
            elif isinstance(op, ListNamespacesOp):
                out.append([tuple(n) for n in value])
            else:
                out.append(None)
        return out


def _item(found: Mapping[str, Any]) -> Item:
    m = item_from_json(found)
    return Item(value=m.value, key=m.key, namespace=m.namespace, created_at=m.created_at, updated_at=m.updated_at)


def _search_item(found: Mapping[str, Any]) -> SearchItem:
    m = item_from_json(found)
    return SearchItem(
        namespace=m.namespace,
        key=m.key,
        value=m.value,
        created_at=m.created_at,
        updated_at=m.updated_at,
        score=m.score,
    )


def _texts(value: Mapping[str, Any], paths: Sequence[tuple[str, str | list[str]]]) -> list[tuple[str, str]]:
    """(field name, text) of each indexed path of a value, as PostgresStore names them."""
    out = []
    for path, tokens in paths:
        texts = get_text_at_path(value, tokens)
        for i, text in enumerate(texts):
            out.append((f"{path}.{i}" if len(texts) > 1 else path, text))
    return out


#: ai.batch_memory takes at most 1000 operations; a larger batch is sent in calls of that size, in order.
BATCH_LIMIT = 1000


def _chunks(calls: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(calls), BATCH_LIMIT):
        yield calls[start : start + BATCH_LIMIT]


def _seconds(minutes: float | None) -> float | None:
    return None if minutes is None else float(minutes) * 60.0


class _StoreCore:
    """What the sync and async stores share: configuration and turning ops into JSON."""

    supports_ttl: bool = True

    def _configure(self, index: MemoryIndexConfig | IndexConfig | None, ttl: TTLConfig | None) -> None:
        self.ttl_config: TTLConfig | None = ttl
        self.index_config: MemoryIndexConfig | None = None
        self.embeddings: Embeddings | None = None
        self._paths: list[tuple[str, str | list[str]]] = [("$", "$")]
        self._distance: Distance = "cosine"
        if index is not None:
            config = cast(MemoryIndexConfig, dict(index))
            fields = config.get("fields") or ["$"]
            if isinstance(fields, str):
                fields = [fields]
            self._paths = [(p, "$" if p == "$" else tokenize_path(p)) for p in fields]
            self._distance = config.get("distance_type", "cosine")
            if self._distance not in ("cosine", "inner_product", "l2"):
                raise ValueError(f"distance_type must be cosine, inner_product or l2, not {self._distance!r}")
            self.embeddings = ensure_embeddings(config.get("embed"))
            self.index_config = config

    def _call(self, op: Op, plan: _Plan) -> dict[str, Any]:
        if isinstance(op, GetOp):
            return {"op": "get", "namespace": list(op.namespace), "key": op.key, "refresh_ttl": bool(op.refresh_ttl)}
        if isinstance(op, PutOp):
            call: dict[str, Any] = {"op": "put", "namespace": list(op.namespace), "key": op.key}
            if op.value is None:
                call["value"] = None
                return call
            call["value"] = dict(op.value)
            call["ttl_seconds"] = _seconds(op.ttl)
            if op.index is False:
                call["index_texts"] = []
            elif op.index is None and self.index_config is None:
                call["index_texts"] = None  # the keys and strings of the whole value
            else:
                paths = self._paths if op.index is None else [(p, tokenize_path(p)) for p in op.index]
                found = _texts(op.value, paths)
                call["index_texts"] = [text for _, text in found]
                if self.embeddings is not None:
                    plan.to_embed.extend((call, field, text) for field, text in found)
            return call
        if isinstance(op, SearchOp):
            call = {
                "op": "search",
                "namespace_prefix": list(op.namespace_prefix),
                "filter": op.filter,
                "query": op.query,
                "limit": op.limit,
                "offset": op.offset,
                "refresh_ttl": bool(op.refresh_ttl),
                "distance": self._distance,
            }
            if op.query and self.embeddings is not None:
                plan.queries.append((call, op.query))
            return call
        if isinstance(op, ListNamespacesOp):
            prefix = suffix = None
            for condition in op.match_conditions or ():
                if condition.match_type == "prefix":
                    prefix = list(condition.path)
                elif condition.match_type == "suffix":
                    suffix = list(condition.path)
                else:
                    raise ValueError(f"unknown match type {condition.match_type!r}")
            return {
                "op": "list_namespaces",
                "prefix": prefix,
                "suffix": suffix,
                "max_depth": op.max_depth,
                "limit": op.limit,
                "offset": op.offset,
            }
        raise ValueError(f"unknown operation {op!r}")

    def _sweep_interval(self, minutes: float | None) -> float:
        ttl = self.ttl_config or {}
        return float(minutes or ttl.get("sweep_interval_minutes") or 5) * 60.0


#: The handle of a running TTL sweeper: a task of the event loop, or the future of a thread.
_AsyncSweeper = asyncio.Task[None]
_Sweeper = concurrent.futures.Future[None]


# <async>
class AsyncAgentStateStore(_StoreCore, AsyncBatchedBaseStore):
    """LangGraph's ``BaseStore`` over a psycopg ``AsyncConnection`` (autocommit) or
    ``AsyncConnectionPool``, or an :class:`agent_state.AsyncClient`.

    The async store gathers concurrent calls on one event loop into one batch (LangGraph's batched
    async base store): one round trip; its sync methods work from other threads while its loop
    runs. The sync store's async methods run its sync ones in a worker thread."""

    def __init__(
        self,
        conn: AsyncSource | AsyncClient,
        *,
        index: MemoryIndexConfig | IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        super().__init__()
        self._client = conn if isinstance(conn, AsyncClient) else AsyncClient(conn, retry=retry)
        self._conn_string: str | None = None
        self._configure(index, ttl)
        self._sweeper: _AsyncSweeper | None = None
        self._stop = asyncio.Event()

    @property
    def client(self) -> AsyncClient:
        """The client the store calls (``client.acting_as(owner)`` for an end user's memory)."""
        return self._client

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str,
        *,
        pipeline: bool = False,
        pool_config: Mapping[str, Any] | None = None,
        index: MemoryIndexConfig | IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        retry: RetryPolicy | None = ONCE,
    ) -> AsyncIterator[AsyncAgentStateStore]:
        """A store over one new connection, or a pool with ``pool_config`` (``PostgresStore``'s
        signature), closed when the block ends, its TTL sweeper stopped. Statements are never
        prepared, so the same string works behind PgBouncer in transaction pooling."""
        kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": None, "row_factory": dict_row}
        if pool_config is not None:
            config = dict(pool_config)
            async with AsyncConnectionPool(
                conn_string,
                min_size=config.pop("min_size", 1),
                max_size=config.pop("max_size", None),
                kwargs={**kwargs, **(config.pop("kwargs", None) or {})},
                **config,
            ) as pool:
                store = cls(pool, index=index, ttl=ttl, retry=retry)
                store._conn_string = conn_string
                try:
                    yield store
                finally:
                    await store.stop_ttl_sweeper()
            return
        conn = await psycopg.AsyncConnection.connect(conn_string, **kwargs)
        store = cls(conn, index=index, ttl=ttl, retry=retry)
        store._client._owned = True
        store._conn_string = conn_string
        try:
            if pipeline:
                async with conn.pipeline():
                    yield store
            else:
                yield store
        finally:
            await store.stop_ttl_sweeper()
            await store._client.source.close()

    async def setup(self) -> schema.SchemaStatus:
        """Checks that schema ``ai`` is deployed at a version this package can use; on an empty
        database, deploys the bundled schema when the role may (as ``PostgresStore.setup()``
        creates its tables). Otherwise raises :class:`agent_state.schema.SchemaError`."""
        await self._client._replace_if_lost()
        async with self._client._connection() as conn:
            if conn.info.pipeline_status != pq.PipelineStatus.OFF and self._conn_string is not None:
                if (await schema.astatus(conn)).deployed:
                    return await schema.adeploy(conn)
                async with await psycopg.AsyncConnection.connect(self._conn_string, autocommit=True) as own:
                    return await schema.adeploy(own)
            return await schema.adeploy(conn)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        plan = _Plan(self, list(ops))
        if plan.to_embed or plan.queries:
            assert self.embeddings is not None
            documents = await self.embeddings.aembed_documents(plan.documents()) if plan.to_embed else []
            queries = [await self.embeddings.aembed_query(q) for _, q in plan.queries]
            plan.fill(documents, queries)
        found: list[Any] = []
        for chunk in _chunks(plan.calls):
            found.extend(await self._client.batch_memory(chunk))
        return plan.results(found)

    if True:  # ASYNC
        pass
    else:

        async def abatch(self, ops: Iterable[Op]) -> list[Result]:
            return await asyncio.get_running_loop().run_in_executor(None, self.batch, list(ops))

    async def sweep_ttl(self, batch_size: int = 1000) -> int:
        """Deletes the expired items in bounded batches (``ai.sweep_memory``, ai_service only);
        returns how many. Reads never return expired items: this only gives the space back."""
        total = 0
        while True:
            deleted = await self._client.sweep_memory(batch_size)
            total += deleted
            if deleted < batch_size:
                return total

    async def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> _AsyncSweeper:
        """Sweeps every ``sweep_interval_minutes`` (the ttl config's, else 5) until
        :meth:`stop_ttl_sweeper`, in a task of the event loop (the async store) or a daemon thread
        (the sync store: its future is returned). Without a ttl config it ends at once. A role that
        may not sweep (a tenant) logs it once and stops. A running sweeper is returned as it is."""
        if self._sweeper is not None and not self._sweeper.done():
            return self._sweeper
        interval = self._sweep_interval(sweep_interval_minutes)
        self._stop.clear()
        if True:  # ASYNC
            self._sweeper = asyncio.create_task(self._sweep_every(interval))
        else:
            future: _Sweeper = concurrent.futures.Future()

            def run() -> None:
                try:
                    self._sweep_every(interval)
                finally:
                    future.set_result(None)

            self._sweeper = future
            threading.Thread(target=run, daemon=True, name="agent-state-memory-sweeper").start()
        return self._sweeper

    async def _sweep_every(self, interval: float) -> None:
        while self.ttl_config:
            if True:  # ASYNC
                with suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), interval)
            else:
                self._stop.wait(interval)
            if self._stop.is_set():
                return
            try:
                if not await self._client.may_sweep_memory():  # asked, not tried: no failed statement
                    log.info("memory sweeper: this role may not sweep (ai.sweep_memory is for ai_service)")
                    return
                await self.sweep_ttl()
            except Exception:
                log.exception("memory sweep failed")

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stops the sweeper, waiting for a sweep under way to end for up to ``timeout`` seconds
        (None: as long as it takes); True when it is stopped (or never ran)."""
        sweeper = self._sweeper
        if sweeper is not None and not sweeper.done():
            self._stop.set()
            if True:  # ASYNC
                await asyncio.wait([sweeper], timeout=timeout)
            else:
                with suppress(TimeoutError):
                    sweeper.result(timeout)
        if sweeper is None or sweeper.done():
            self._sweeper = None
            return True
        return False


# </async>


# <sync> generated by scripts/async_to_sync.py from the <async> block above: do not edit
class AgentStateStore(_StoreCore, BaseStore):
    """LangGraph's ``BaseStore`` over a psycopg ``Connection`` (autocommit) or
    ``ConnectionPool``, or an :class:`agent_state.Client`.

    The async store gathers concurrent calls on one event loop into one batch (LangGraph's batched
    async base store): one round trip; its sync methods work from other threads while its loop
    runs. The sync store's async methods run its sync ones in a worker thread."""

    def __init__(
        self,
        conn: SyncSource | Client,
        *,
        index: MemoryIndexConfig | IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        super().__init__()
        self._client = conn if isinstance(conn, Client) else Client(conn, retry=retry)
        self._conn_string: str | None = None
        self._configure(index, ttl)
        self._sweeper: _Sweeper | None = None
        self._stop = threading.Event()

    @property
    def client(self) -> Client:
        """The client the store calls (``client.acting_as(owner)`` for an end user's memory)."""
        return self._client

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        pipeline: bool = False,
        pool_config: Mapping[str, Any] | None = None,
        index: MemoryIndexConfig | IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        retry: RetryPolicy | None = ONCE,
    ) -> Iterator[AgentStateStore]:
        """A store over one new connection, or a pool with ``pool_config`` (``PostgresStore``'s
        signature), closed when the block ends, its TTL sweeper stopped. Statements are never
        prepared, so the same string works behind PgBouncer in transaction pooling."""
        kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": None, "row_factory": dict_row}
        if pool_config is not None:
            config = dict(pool_config)
            with ConnectionPool(
                conn_string,
                min_size=config.pop("min_size", 1),
                max_size=config.pop("max_size", None),
                kwargs={**kwargs, **(config.pop("kwargs", None) or {})},
                **config,
            ) as pool:
                store = cls(pool, index=index, ttl=ttl, retry=retry)
                store._conn_string = conn_string
                try:
                    yield store
                finally:
                    store.stop_ttl_sweeper()
            return
        conn = psycopg.Connection.connect(conn_string, **kwargs)
        store = cls(conn, index=index, ttl=ttl, retry=retry)
        store._client._owned = True
        store._conn_string = conn_string
        try:
            if pipeline:
                with conn.pipeline():
                    yield store
            else:
                yield store
        finally:
            store.stop_ttl_sweeper()
            store._client.source.close()

    def setup(self) -> schema.SchemaStatus:
        """Checks that schema ``ai`` is deployed at a version this package can use; on an empty
        database, deploys the bundled schema when the role may (as ``PostgresStore.setup()``
        creates its tables). Otherwise raises :class:`agent_state.schema.SchemaError`."""
        self._client._replace_if_lost()
        with self._client._connection() as conn:
            if conn.info.pipeline_status != pq.PipelineStatus.OFF and self._conn_string is not None:
                if schema.status(conn).deployed:
                    return schema.deploy(conn)
                with psycopg.Connection.connect(self._conn_string, autocommit=True) as own:
                    return schema.deploy(own)
            return schema.deploy(conn)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        plan = _Plan(self, list(ops))
        if plan.to_embed or plan.queries:
            assert self.embeddings is not None
            documents = self.embeddings.embed_documents(plan.documents()) if plan.to_embed else []
            queries = [self.embeddings.embed_query(q) for _, q in plan.queries]
            plan.fill(documents, queries)
        found: list[Any] = []
        for chunk in _chunks(plan.calls):
            found.extend(self._client.batch_memory(chunk))
        return plan.results(found)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, list(ops))

    def sweep_ttl(self, batch_size: int = 1000) -> int:
        """Deletes the expired items in bounded batches (``ai.sweep_memory``, ai_service only);
        returns how many. Reads never return expired items: this only gives the space back."""
        total = 0
        while True:
            deleted = self._client.sweep_memory(batch_size)
            total += deleted
            if deleted < batch_size:
                return total

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> _Sweeper:
        """Sweeps every ``sweep_interval_minutes`` (the ttl config's, else 5) until
        :meth:`stop_ttl_sweeper`, in a task of the event loop (the async store) or a daemon thread
        (the sync store: its future is returned). Without a ttl config it ends at once. A role that
        may not sweep (a tenant) logs it once and stops. A running sweeper is returned as it is."""
        if self._sweeper is not None and not self._sweeper.done():
            return self._sweeper
        interval = self._sweep_interval(sweep_interval_minutes)
        self._stop.clear()
        future: _Sweeper = concurrent.futures.Future()

        def run() -> None:
            try:
                self._sweep_every(interval)
            finally:
                future.set_result(None)

        self._sweeper = future
        threading.Thread(target=run, daemon=True, name="agent-state-memory-sweeper").start()
        return self._sweeper

    def _sweep_every(self, interval: float) -> None:
        while self.ttl_config:
            self._stop.wait(interval)
            if self._stop.is_set():
                return
            try:
                if not self._client.may_sweep_memory():  # asked, not tried: no failed statement
                    log.info("memory sweeper: this role may not sweep (ai.sweep_memory is for ai_service)")
                    return
                self.sweep_ttl()
            except Exception:
                log.exception("memory sweep failed")

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stops the sweeper, waiting for a sweep under way to end for up to ``timeout`` seconds
        (None: as long as it takes); True when it is stopped (or never ran)."""
        sweeper = self._sweeper
        if sweeper is not None and not sweeper.done():
            self._stop.set()
            with suppress(TimeoutError):
                sweeper.result(timeout)
        if sweeper is None or sweeper.done():
            self._sweeper = None
            return True
        return False


# </sync>
