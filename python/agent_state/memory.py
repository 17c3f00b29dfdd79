"""Long-term memory: JSON items an agent keeps across threads, keyed by namespace and key, in
schema ``ai`` (``ai.put_memory``, ``ai.get_memory``, ``ai.delete_memory``, ``ai.search_memory``,
``ai.list_memory_namespaces``, ``ai.sweep_memory``, ``ai.batch_memory``; docs/memory.md).

Items belong to the caller (the tenant, or the end user a service acts for with
``client.acting_as(owner)``)::

    client.put_memory(("users", "alice"), "prefs", {"theme": "dark"}, ttl=timedelta(days=30))
    client.search_memory(("users",), filter={"age": {"$gte": 18}}, query="dark theme")

LangGraph's ``BaseStore`` over these calls is :class:`agent_state.store.AgentStateStore`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from psycopg.types.json import Jsonb

from ._calls import Call, T

__all__ = [
    "AsyncMemoryMethods",
    "MemoryItem",
    "MemoryMethods",
    "MemoryRestore",
    "item_from_json",
    "retrieval_documents",
]


@dataclass(frozen=True, slots=True)
class MemoryItem:
    """``ai.memory_item``: one item of long-term memory; ``score`` is its search rank (None
    without a query)."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None
    score: float | None = None


@dataclass(frozen=True, slots=True)
class MemoryRestore:
    """One batch of ``ai.restore_memory``: items restored, and archived copies dropped because a
    live item of the key was written since (it stays). A batch is full when their sum is the
    ``max_items`` asked for."""

    restored: int
    superseded: int


def _item(row: Mapping[str, Any]) -> MemoryItem:
    return MemoryItem(
        namespace=tuple(row["namespace"]),
        key=row["key"],
        value=row["value"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        expires_at=row["expires_at"],
        score=row["score"],
    )


def _when(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def item_from_json(found: Mapping[str, Any]) -> MemoryItem:
    """An item as ``ai.batch_memory`` returns it (JSON: times as ISO 8601 text)."""
    created, updated = _when(found["created_at"]), _when(found["updated_at"])
    assert created is not None and updated is not None
    return MemoryItem(
        namespace=tuple(found["namespace"]),
        key=found["key"],
        value=found["value"],
        created_at=created,
        updated_at=updated,
        expires_at=_when(found.get("expires_at")),
        score=found.get("score"),
    )


def retrieval_documents(items: Sequence[Any]) -> list[dict[str, Any]]:
    """The documents ``record_retrieval`` keeps for memory items a turn read (a
    :class:`MemoryItem` or LangGraph's ``Item``/``SearchItem``): where each came from and which
    version (``updated_at``), so an audit links the assistant turn to the memory it was given::

        client.record_retrieval(thread_id, turn, retrieval_documents(store.search(("users", uid), query=q)))
    """
    out = []
    for item in items:
        doc: dict[str, Any] = {
            "source": "memory",
            "namespace": list(item.namespace),
            "key": item.key,
            "updated_at": item.updated_at.isoformat() if isinstance(item.updated_at, datetime) else item.updated_at,
        }
        score = getattr(item, "score", None)
        if score is not None:
            doc["score"] = score
        out.append(doc)
    return out


PUT_MEMORY = Call("select * from ai.put_memory(%s, %s, %s, %s, %s, %s)", _item)
GET_MEMORY = Call("select * from ai.get_memory(%s, %s, %s)", _item)
DELETE_MEMORY = Call("select ai.delete_memory(%s, %s) as deleted", lambda r: bool(r["deleted"]))
SEARCH_MEMORY = Call("select * from ai.search_memory(%s, %s, %s, %s, %s, %s, %s::real[], %s)", _item)
LIST_MEMORY_NAMESPACES = Call("select n from ai.list_memory_namespaces(%s, %s, %s, %s, %s) n", lambda r: tuple(r["n"]))
MAY_SWEEP_MEMORY = Call(
    "select has_function_privilege('ai.sweep_memory(integer)', 'execute') as may", lambda r: bool(r["may"])
)
SWEEP_MEMORY = Call("select ai.sweep_memory(%s) as deleted", lambda r: int(r["deleted"]))
ARCHIVE_MEMORY = Call("select ai.archive_memory(%s, %s) as archived", lambda r: int(r["archived"]))
RESTORE_MEMORY = Call(
    "select * from ai.restore_memory(%s, %s)", lambda r: MemoryRestore(int(r["restored"]), int(r["superseded"]))
)
BATCH_MEMORY = Call("select ai.batch_memory(%s) as results", lambda r: list(r["results"]))


def _labels(namespace: Sequence[str] | None) -> list[str] | None:
    return None if namespace is None else list(namespace)


def _put_args(
    namespace: Sequence[str],
    key: str,
    value: Mapping[str, Any],
    ttl: timedelta | None,
    index_texts: Sequence[str] | None,
    embeddings: Mapping[str, Sequence[float]] | None,
) -> tuple[Any, ...]:
    texts = None if index_texts is None else list(index_texts)
    vectors = None if embeddings is None else Jsonb({k: list(v) for k, v in embeddings.items()})
    return (list(namespace), key, Jsonb(dict(value)), ttl, texts, vectors)


def _search_args(
    namespace_prefix: Sequence[str],
    filter: Mapping[str, Any] | None,
    query: str | None,
    limit: int,
    offset: int,
    refresh_ttl: bool,
    query_embedding: Sequence[float] | None,
    distance: str,
) -> tuple[Any, ...]:
    vector = None if query_embedding is None else [float(x) for x in query_embedding]
    flt = None if filter is None else Jsonb(dict(filter))
    return (list(namespace_prefix), flt, query, limit, offset, refresh_ttl, vector, distance)


# <async>
class AsyncMemoryMethods:
    """The memory half of :class:`~agent_state.AsyncClient`."""

    async def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by AsyncClient
        raise NotImplementedError

    async def put_memory(
        self,
        namespace: Sequence[str],
        key: str,
        value: Mapping[str, Any],
        ttl: timedelta | None = None,
        index_texts: Sequence[str] | None = None,
        embeddings: Mapping[str, Sequence[float]] | None = None,
    ) -> MemoryItem:
        """``ai.put_memory``: stores (or replaces) an item. ``index_texts``: what full-text search
        ranks it by (None: the whole value; empty: nothing); ``embeddings``: field -> vector."""
        return (await self._rows(PUT_MEMORY, _put_args(namespace, key, value, ttl, index_texts, embeddings)))[0]

    async def get_memory(self, namespace: Sequence[str], key: str, refresh_ttl: bool = False) -> MemoryItem | None:
        """``ai.get_memory``: the live item, or None."""
        rows = await self._rows(GET_MEMORY, (list(namespace), key, refresh_ttl))
        return rows[0] if rows else None

    async def delete_memory(self, namespace: Sequence[str], key: str) -> bool:
        """``ai.delete_memory``: True when a live item was deleted."""
        return (await self._rows(DELETE_MEMORY, (list(namespace), key)))[0]

    async def search_memory(
        self,
        namespace_prefix: Sequence[str] = (),
        filter: Mapping[str, Any] | None = None,
        query: str | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool = False,
        query_embedding: Sequence[float] | None = None,
        distance: str = "cosine",
    ) -> list[MemoryItem]:
        """``ai.search_memory``: live items under a prefix that pass ``filter``, ranked by
        ``query_embedding``, else by full-text ``query``, else newest first."""
        args = _search_args(namespace_prefix, filter, query, limit, offset, refresh_ttl, query_embedding, distance)
        return await self._rows(SEARCH_MEMORY, args)

    async def list_memory_namespaces(
        self,
        prefix: Sequence[str] | None = None,
        suffix: Sequence[str] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """``ai.list_memory_namespaces``: the namespaces of live items (``*`` matches one label)."""
        return await self._rows(LIST_MEMORY_NAMESPACES, (_labels(prefix), _labels(suffix), max_depth, limit, offset))

    async def sweep_memory(self, batch_size: int = 1000) -> int:
        """``ai.sweep_memory`` (ai_service): deletes up to ``batch_size`` expired items."""
        return (await self._rows(SWEEP_MEMORY, (batch_size,)))[0]

    async def may_sweep_memory(self) -> bool:
        """Whether this role may call ``ai.sweep_memory`` (a member of ai_service)."""
        return (await self._rows(MAY_SWEEP_MEMORY, ()))[0]

    async def archive_memory(self, namespace_prefix: Sequence[str] = (), max_items: int = 1000) -> int:
        """``ai.archive_memory``: moves up to ``max_items`` of the caller's live items under the
        prefix (all: ``()``) to the archive, each deleted only once copied; returns how many. Call
        again until it returns less than ``max_items``."""
        return (await self._rows(ARCHIVE_MEMORY, (list(namespace_prefix), max_items)))[0]

    async def restore_memory(self, namespace_prefix: Sequence[str] = (), max_items: int = 1000) -> MemoryRestore:
        """``ai.restore_memory``: moves up to ``max_items`` archived items under the prefix back
        as they were (a live item written since stays: ``superseded``)."""
        return (await self._rows(RESTORE_MEMORY, (list(namespace_prefix), max_items)))[0]

    async def batch_memory(self, ops: Sequence[Mapping[str, Any]]) -> list[Any]:
        """``ai.batch_memory``: operations in order in one call; their results (JSON) in order."""
        return (await self._rows(BATCH_MEMORY, (Jsonb([dict(op) for op in ops]),)))[0]


# </async>


# <sync> generated by scripts/async_to_sync.py from the <async> block above: do not edit
class MemoryMethods:
    """The memory half of :class:`~agent_state.Client`."""

    def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by Client
        raise NotImplementedError

    def put_memory(
        self,
        namespace: Sequence[str],
        key: str,
        value: Mapping[str, Any],
        ttl: timedelta | None = None,
        index_texts: Sequence[str] | None = None,
        embeddings: Mapping[str, Sequence[float]] | None = None,
    ) -> MemoryItem:
        """``ai.put_memory``: stores (or replaces) an item. ``index_texts``: what full-text search
        ranks it by (None: the whole value; empty: nothing); ``embeddings``: field -> vector."""
        return self._rows(PUT_MEMORY, _put_args(namespace, key, value, ttl, index_texts, embeddings))[0]

    def get_memory(self, namespace: Sequence[str], key: str, refresh_ttl: bool = False) -> MemoryItem | None:
        """``ai.get_memory``: the live item, or None."""
        rows = self._rows(GET_MEMORY, (list(namespace), key, refresh_ttl))
        return rows[0] if rows else None

    def delete_memory(self, namespace: Sequence[str], key: str) -> bool:
        """``ai.delete_memory``: True when a live item was deleted."""
        return self._rows(DELETE_MEMORY, (list(namespace), key))[0]

    def search_memory(
        self,
        namespace_prefix: Sequence[str] = (),
        filter: Mapping[str, Any] | None = None,
        query: str | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool = False,
        query_embedding: Sequence[float] | None = None,
        distance: str = "cosine",
    ) -> list[MemoryItem]:
        """``ai.search_memory``: live items under a prefix that pass ``filter``, ranked by
        ``query_embedding``, else by full-text ``query``, else newest first."""
        args = _search_args(namespace_prefix, filter, query, limit, offset, refresh_ttl, query_embedding, distance)
        return self._rows(SEARCH_MEMORY, args)

    def list_memory_namespaces(
        self,
        prefix: Sequence[str] | None = None,
        suffix: Sequence[str] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """``ai.list_memory_namespaces``: the namespaces of live items (``*`` matches one label)."""
        return self._rows(LIST_MEMORY_NAMESPACES, (_labels(prefix), _labels(suffix), max_depth, limit, offset))

    def sweep_memory(self, batch_size: int = 1000) -> int:
        """``ai.sweep_memory`` (ai_service): deletes up to ``batch_size`` expired items."""
        return self._rows(SWEEP_MEMORY, (batch_size,))[0]

    def may_sweep_memory(self) -> bool:
        """Whether this role may call ``ai.sweep_memory`` (a member of ai_service)."""
        return self._rows(MAY_SWEEP_MEMORY, ())[0]

    def archive_memory(self, namespace_prefix: Sequence[str] = (), max_items: int = 1000) -> int:
        """``ai.archive_memory``: moves up to ``max_items`` of the caller's live items under the
        prefix (all: ``()``) to the archive, each deleted only once copied; returns how many. Call
        again until it returns less than ``max_items``."""
        return self._rows(ARCHIVE_MEMORY, (list(namespace_prefix), max_items))[0]

    def restore_memory(self, namespace_prefix: Sequence[str] = (), max_items: int = 1000) -> MemoryRestore:
        """``ai.restore_memory``: moves up to ``max_items`` archived items under the prefix back
        as they were (a live item written since stays: ``superseded``)."""
        return self._rows(RESTORE_MEMORY, (list(namespace_prefix), max_items))[0]

    def batch_memory(self, ops: Sequence[Mapping[str, Any]]) -> list[Any]:
        """``ai.batch_memory``: operations in order in one call; their results (JSON) in order."""
        return self._rows(BATCH_MEMORY, (Jsonb([dict(op) for op in ops]),))[0]


# </sync>
