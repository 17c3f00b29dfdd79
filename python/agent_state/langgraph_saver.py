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
import dataclasses
import json
import logging
import random
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping, Sequence
from contextlib import (
    asynccontextmanager,
    contextmanager,
)
from dataclasses import dataclass, field
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
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import TASKS
from psycopg import pq
from psycopg.rows import dict_row, tuple_row
from psycopg.types.json import Jsonb

from . import checkpoints, schema
from .client import AsyncClient, AsyncSource, Client, SyncSource
from .errors import DeltaBaseMissing
from .retry import ONCE, RetryPolicy
from .serde import CompressedSerializer

__all__ = ["AgentStateSaver", "AsyncAgentStateSaver"]

log = logging.getLogger("agent_state.langgraph")

Durability = Literal["sync", "async"]
T = TypeVar("T")

# The same statements as the Client's (one SQL function call each); rows read by position, from
# cursors with their own row factory (the caller's connection may use dict_row, as LangGraph's
# documentation has it for PostgresSaver).
# The durable step: the checkpoint, its values (whole or deltas), a held task's writes, messages.
PUT_STEP = checkpoints.PUT_CHECKPOINT.sql
PUT_WRITES = checkpoints.PUT_WRITES.sql
GET_CHECKPOINT = checkpoints.GET_CHECKPOINT.sql
#: rows per call of ai.list_checkpoints: list() reads on page by page (the server returns one bounded page)
_LIST_PAGE = 500
LIST_CHECKPOINTS = checkpoints.LIST_CHECKPOINTS.sql
DELETE_THREAD = checkpoints.DELETE_THREAD.sql
DELETE_FOR_RUNS = checkpoints.DELETE_FOR_RUNS.sql
COPY_THREAD = checkpoints.COPY_THREAD.sql
PRUNE = checkpoints.PRUNE_CHECKPOINTS.sql
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


# ----- the durable step in one call (docs/checkpoints.md, "One call per step") -----------------
# What a put and a put_writes send is decided by _StepPlan (its docstring has the rules); these
# are its bounds.
MAX_DELTA_CHAIN = 1000
# threads remembered, least recently used forgotten first: a list channel's items are kept by
# reference (compared by identity), so this bounds what a saver keeps alive after a run
MAX_REMEMBERED_THREADS = 1024
# and the remembered lists' size (their stored bytes), all threads together: past it the least
# recently used threads are forgotten too (their next step is sent whole). Everything a saver
# remembers of a thread (its lists, its last checkpoint, the step of one task, the held writes) is
# one _Thread, bounded by these: a long-lived saver serving any number of threads keeps at most
# this much.
MAX_REMEMBERED_BYTES = 64 * 1024 * 1024
# held writes, all threads together: past either bound a task's writes are sent at once instead
MAX_HELD_BYTES = 16 * 1024 * 1024
# LangGraph's channel of pending sends (PUSH tasks) and the prefixes of the channels that trigger a node
_TRIGGERS = ("branch:to:", "join:")
# The task path of a task a trigger started (a node; an @entrypoint): LangGraph's task_path_str of
# (PULL, name). A @task call or a Send is a PUSH task, started while the step runs: the checkpoint
# cannot tell they will come, and their caller (or a sibling) sees them finished before the step
# ends, so their writes are never held.
_PULL_PATH = "~__pregel_pull, "
# LangGraph's durability of the run, in the config it passes: only "sync" waits for the step's put
# before the next step starts; under "async" the next step's tasks see this one finished while the
# put is still on its way, so nothing is held then.
CONFIG_KEY_DURABILITY = "__pregel_durability"

_Key = tuple[str, str]  # (thread_id, checkpoint_ns)


@dataclass(frozen=True)
class _Remembered:
    """A list channel's value at a version, as stored (its items, by identity)."""

    version: str
    items: tuple[Any, ...]
    depth: int  # deltas since the whole value
    nbytes: int  # its stored size (the whole value and the deltas since)


@dataclass(frozen=True)
class _Writes:
    """One task's writes for a checkpoint: held until the step's put, or to send (ai.put_writes)."""

    checkpoint_id: str
    writes: checkpoints.TaskWrites
    job_id: int | None
    fencing_token: int | None

    @property
    def nbytes(self) -> int:
        return sum(len(w.blob) for w in self.writes.writes)


@dataclass
class _Thread:
    """What the step plan remembers of one (thread_id, checkpoint_ns)."""

    # each list channel as this saver last stored or read it: what the next step may extend
    lists: dict[str, _Remembered] = field(default_factory=dict)
    # the checkpoint this saver last put or read, and the channels it names
    last: tuple[str, frozenset[str]] | None = None
    # the checkpoint this saver put whose step has one task (its writes may be held)
    one_task: str | None = None
    # one task's writes, held for the step's put
    held: _Writes | None = None

    @property
    def nbytes(self) -> int:
        return sum(r.nbytes for r in self.lists.values())


@dataclass
class _Step:
    """One put: the call, the call with whole values should the database refuse a delta, and what
    to remember once it is stored."""

    call: checkpoints.CheckpointStep
    whole: Callable[[], checkpoints.CheckpointStep] | None
    remember: dict[str, _Remembered]  # channel -> its value at the new version
    next_config: RunnableConfig
    thread_key: _Key


def _one_task_follows(checkpoint: Checkpoint) -> bool:
    """Whether the step run from this checkpoint has one task: one trigger channel updated (a
    StateGraph node's branch:to:X or join channel, or the input's __start__) and no pending sends."""
    updated = checkpoint.get("updated_channels")
    if not updated:
        return False
    if checkpoint["channel_values"].get(TASKS):
        return False
    triggers = [c for c in updated if c.startswith(_TRIGGERS) or c == "__start__"]
    return len(triggers) == 1


def _makes_msgpack_lists(serde: SerializerProtocol) -> bool:
    """Whether this serializer writes a list as one msgpack array of its items, each encoded on its
    own (what a delta's concatenation needs): LangGraph's JsonPlusSerializer, exactly, or ours that
    calls it and marks what it compresses with a type of its own (CompressedSerializer)."""
    return type(serde) in (JsonPlusSerializer, CompressedSerializer)


def _array_of(blob: bytes, items: int) -> bool:
    """Whether the bytes start with a msgpack array header that counts this many items."""
    if not blob:
        return False
    first = blob[0]
    if 0x90 <= first <= 0x9F:
        return first - 0x90 == items
    if first == 0xDC:
        return len(blob) >= 3 and int.from_bytes(blob[1:3], "big") == items
    if first == 0xDD:
        return len(blob) >= 5 and int.from_bytes(blob[1:5], "big") == items
    return False


def _prefix(old: tuple[Any, ...], new: list[Any]) -> bool:
    if len(new) < len(old):
        return False
    return all(a is b or a == b for a, b in zip(old, new, strict=False))


_ROLES = {
    "human": "user",
    "user": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "system": "system",
    "tool": "tool_result",
    "function": "tool_result",
    "developer": "system",
}


def _as_message(item: Any, key: str) -> dict[str, Any] | None:
    """A LangChain message (or a dict with role/type and content) as ai.append_messages takes it;
    None for anything else."""
    if isinstance(item, Mapping):
        role = _ROLES.get(str(item.get("role") or item.get("type") or ""))
        content = {"content": item.get("content")}
        message_id = item.get("id")
        extra = {k: item[k] for k in ("tool_calls", "tool_call_id", "name") if item.get(k)}
    else:
        role = _ROLES.get(str(getattr(item, "type", "")))
        content = {"content": getattr(item, "content", None)}
        message_id = getattr(item, "id", None)
        extra = {k: getattr(item, k) for k in ("tool_calls", "tool_call_id", "name") if getattr(item, k, None)}
    if role is None:
        return None
    content.update(extra)
    return {
        "role": role,
        "content": json.loads(json.dumps(content, default=str)),
        "idempotency_key": f"lg:{message_id}" if message_id else key,
    }


class _StepPlan:
    """The saver's step plan: what it remembers of each thread (a ``_Thread``) and the rules of what
    a put (``put``) and a put_writes (``put_writes``) send. Savers serve threads (and tasks)
    concurrently: every look and change holds ``lock``, never across I/O.

    **Held writes.** The writes of a task whose step LangGraph will close with one put are held
    and sent with that put, in one call of ai.put_checkpoint and one transaction (its ``writes``).
    They are held only when all of these hold: LangGraph's durability is "sync" (the next step
    waits for the put); the task is a PULL task (a node's own writes; a @task call or a Send is
    seen finished by its caller or a sibling before the step ends); no write is to a special
    channel (idx < 0: error, interrupt, resume); the checkpoint they were written from is the
    thread's ``one_task`` (a put of this saver whose step has one task: one trigger channel
    updated, no pending sends); nothing else is held for the thread; and the bounds allow
    (MAX_REMEMBERED_THREADS threads holding, MAX_HELD_BYTES in all). Anything else is sent at
    once, so a finished sibling never re-runs: a second task's writes for a held step (a wrong
    guess) send both; held writes of another checkpoint than the put's parent are sent before the
    put; a read of the thread sends what is held first. A crash between the two loses the held
    writes with the process: the resumed run re-runs that one node, whose external calls go
    through the side-effect ledger (a finished call returns its recorded result).

    **Whole value or delta.** A list channel that a step only extended (its previous value, as
    this saver last stored or read it, is a prefix of the new one, item by item) is sent as the
    appended items: a delta of the version it extends (``ChannelValue.base``), rebuilt whole by
    the database on read. Anything else is a whole value: a list rewritten (an item replaced or
    removed), a value that is not a list, a thread this saver has not seen, or a chain of
    MAX_DELTA_CHAIN deltas (the database bounds every chain itself, at ``ai._max_delta_depth()``,
    whatever a client sends). A delta is joined to its base by msgpack's array headers, so only a
    serializer known to write a list as one msgpack array of its items makes one: LangGraph's
    JsonPlusSerializer itself (or our CompressedSerializer, whose msgpack bytes are its), not
    another subclass nor any other serializer whose type says "msgpack" (a type is a name, not a
    promise: ``_makes_msgpack_lists``), and only when the bytes it made are an array of as many
    items as were appended (``_array_of``); the database checks each delta is exactly one msgpack
    array too. Should the database refuse a delta (AS061: the version it extends was pruned, or
    the bytes are not one array), the step is sent again whole (``_Step.whole``).

    **Messages.** With ``mirror_messages``, that list channel's new items (the delta's; the whole
    list when the parent lacked the channel) are appended to the thread's messages in the same call.

    **Bounds.** At most MAX_REMEMBERED_THREADS threads are remembered, the least recently used
    forgotten first (their next step is sent whole), with at most MAX_REMEMBERED_BYTES of lists
    (items kept by reference); a thread whose writes are held keeps them until its put or read
    (its lists are forgotten past the bounds). ``forget`` (delete_thread) drops a thread whole.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.threads: OrderedDict[_Key, _Thread] = OrderedDict()  # least recently used first
        self.remembered_bytes = 0  # the remembered lists' nbytes, all threads
        self.held_bytes = 0  # the held writes' blobs, all threads
        self.holding = 0  # threads with held writes

    def put(
        self,
        dumps: Callable[[Any], tuple[str, bytes]],
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        *,
        mirror_messages: str | None,
        durability: Durability,
        deltas_ok: bool,
    ) -> tuple[_Step, list[tuple[_Key, _Writes]]]:
        """What a put sends (the rules above): the step's call, and the held writes of another
        checkpoint of the thread, to send before it."""
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_ns = configurable.get("checkpoint_ns") or ""
        parent_id = configurable.get("checkpoint_id")
        key = (thread_id, checkpoint_ns)
        values = checkpoint["channel_values"]
        inline = {k: v for k, v in values.items() if _inline(v)}
        stored = {k: v for k, v in checkpoint.items() if k not in ("channel_values", "channel_versions")}
        stored["channel_values"] = inline
        type_, data = dumps(stored)
        with self.lock:
            thread = self.threads.get(key)
            known = dict(thread.lists) if thread is not None else {}
            last = thread.last if thread is not None else None
            held = self._take_held(key)
            if thread is not None:
                thread.one_task = None

        def parent_lacks(channel: str) -> bool:
            """A channel the parent did not have: every item of it is new (for mirror_messages)."""
            return parent_id is None or (last is not None and last[0] == parent_id and channel not in last[1])

        before: list[tuple[_Key, _Writes]] = []
        if held is not None and held.checkpoint_id != parent_id:
            before.append((key, held))
            held = None
        sent: list[checkpoints.ChannelValue] = []
        remember: dict[str, _Remembered] = {}
        deltas: dict[int, Any] = {}  # position -> the whole value, should the database refuse the delta
        messages: list[dict[str, Any]] | None = None
        for channel, version in new_versions.items():
            if channel not in values or channel in inline:
                continue
            value = values[channel]
            base: str | None = None
            appended: list[Any] | None = None
            depth = 0
            nbytes = 0
            if type(value) is list and deltas_ok:
                seen = known.get(channel)
                if seen is not None and seen.depth < MAX_DELTA_CHAIN and _prefix(seen.items, value):
                    appended = value[len(seen.items) :]
                    blob_type, blob = dumps(appended)
                    if blob_type == "msgpack" and _array_of(blob, len(appended)):
                        base, depth, nbytes = seen.version, seen.depth + 1, seen.nbytes
                    else:
                        appended = None
            if base is None:
                blob_type, blob = dumps(value)
            else:
                deltas[len(sent)] = value
            if type(value) is list and deltas_ok and blob_type == "msgpack":
                remember[channel] = _Remembered(str(version), tuple(value), depth, nbytes + len(blob))
            if channel == mirror_messages and type(value) is list:
                new_items = appended if appended is not None else (value if parent_lacks(channel) else [])
                start = len(value) - len(new_items)
                found = [
                    _as_message(item, f"lg:{thread_id}:{checkpoint['id']}:{start + i}")
                    for i, item in enumerate(new_items)
                ]
                messages = [m for m in found if m is not None] or None
            sent.append(checkpoints.ChannelValue(channel, str(version), blob_type, blob, base))
        call = checkpoints.CheckpointStep(
            thread_id,
            checkpoint_ns,
            checkpoint["id"],
            parent_id,
            type_,
            data,
            Jsonb(get_serializable_checkpoint_metadata(config, metadata)),
            Jsonb(checkpoint["channel_versions"]),
            sent,
            writes=held.writes if held is not None else None,
            messages=Jsonb(messages) if messages else None,
            job_id=configurable.get("job_id"),
            fencing_token=configurable.get("fencing_token"),
            durability=durability,
        )

        def whole() -> checkpoints.CheckpointStep:
            values = list(sent)
            for position, value in deltas.items():
                blob_type, blob = dumps(value)
                values[position] = checkpoints.ChannelValue(values[position].channel, values[position].version,
                                                            blob_type, blob)  # fmt: skip
            return dataclasses.replace(call, values=values)

        if _one_task_follows(checkpoint):
            with self.lock:
                self._touch(key).one_task = checkpoint["id"]
                self._trim()
        next_config: RunnableConfig = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }
        return _Step(call, whole if deltas else None, remember, next_config, key), before

    def put_writes(self, key: _Key, writes: _Writes, *, sync: bool) -> list[tuple[_Key, _Writes]]:
        """What a put_writes sends (the rules above): nothing when these writes are held for the
        step's put, else the writes to send, a held sibling first."""
        size = writes.nbytes
        with self.lock:
            held = self._take_held(key)
            thread = self.threads.get(key)
            if (
                held is None
                and thread is not None
                and self.holding < MAX_REMEMBERED_THREADS
                and self.held_bytes + size <= MAX_HELD_BYTES
                and sync
                and writes.writes.task_path.startswith(_PULL_PATH)
                and all(w.idx >= 0 for w in writes.writes.writes)
                and thread.one_task == writes.checkpoint_id
            ):
                thread.held = writes
                self.held_bytes += size
                self.holding += 1
                return []
            if held is not None and held.checkpoint_id == writes.checkpoint_id and thread is not None:
                thread.one_task = None  # a second task: the step has several
        return ([(key, held)] if held is not None else []) + [(key, writes)]

    def stored(self, step: _Step, *, whole: bool = False) -> None:
        """What a stored step leaves to remember: each list channel's items at its new version."""
        with self.lock:
            thread = self._touch(step.thread_key)
            versions = step.call.channel_versions
            thread.last = (str(step.call.checkpoint_id), frozenset(versions.obj if versions is not None else ()))
            known = {} if whole else dict(thread.lists)
            for channel, seen in step.remember.items():
                known[channel] = seen if not whole else _Remembered(seen.version, seen.items, 0, seen.nbytes)
            self._set_lists(thread, known)
            self._trim()

    def read(self, key: _Key, checkpoint_id: str, versions: Mapping[str, Any], lists: dict[str, _Remembered]) -> None:
        """A checkpoint read whole: its list channels are what the next step may extend."""
        with self.lock:
            thread = self._touch(key)
            thread.last = (checkpoint_id, frozenset(versions))
            self._set_lists(thread, {**thread.lists, **lists})
            self._trim()

    def take_held(self, thread_id: str | None) -> list[tuple[_Key, _Writes]]:
        """The held writes of a thread (None: of every thread), taken to be sent before a read."""
        with self.lock:
            if not self.holding:
                return []
            keys = [k for k, t in self.threads.items() if t.held is not None and thread_id in (None, k[0])]
            return [(k, held) for k in keys if (held := self._take_held(k)) is not None]

    def forget(self, thread_id: str) -> None:
        """Forget a thread (delete_thread): its held writes and everything remembered of it."""
        with self.lock:
            for key in [k for k in self.threads if k[0] == thread_id]:
                self._take_held(key)
                self._set_lists(self.threads.pop(key), {})

    # the bookkeeping (callers hold the lock)
    def _touch(self, key: _Key) -> _Thread:
        """The thread's entry, made the most recently used."""
        thread = self.threads.pop(key, None) or _Thread()
        self.threads[key] = thread
        return thread

    def _trim(self) -> None:
        """Forget the least recently used threads past MAX_REMEMBERED_THREADS or
        MAX_REMEMBERED_BYTES (a thread holding writes keeps them, and forgets its lists)."""

        def within() -> bool:
            return len(self.threads) - self.holding <= MAX_REMEMBERED_THREADS and (
                self.remembered_bytes <= MAX_REMEMBERED_BYTES
            )

        if within():
            return
        for key in list(self.threads):
            if within():
                return
            thread = self.threads[key]
            self._set_lists(thread, {})
            if thread.held is None:
                del self.threads[key]
            else:
                thread.last = thread.one_task = None

    def _set_lists(self, thread: _Thread, lists: dict[str, _Remembered]) -> None:
        self.remembered_bytes += sum(r.nbytes for r in lists.values()) - thread.nbytes
        thread.lists = lists

    def _take_held(self, key: _Key) -> _Writes | None:
        thread = self.threads.get(key)
        held = thread.held if thread is not None else None
        if thread is not None and held is not None:
            thread.held = None
            self.held_bytes -= held.nbytes
            self.holding -= 1
        return held


class _Codec(BaseCheckpointSaver[str]):
    """What both savers share: turning LangGraph's objects into SQL arguments and rows back."""

    def __init__(
        self,
        *,
        serde: SerializerProtocol | None = None,
        durability: Durability = "sync",
        mirror_messages: str | None = None,
    ) -> None:
        super().__init__(serde=serde)
        if durability not in ("sync", "async"):
            raise ValueError(f"durability must be 'sync' or 'async', not {durability!r}")
        self.durability = durability
        self.mirror_messages = mirror_messages
        # What the saver remembers of each thread, and the rules of what a step sends.
        self._plan = _StepPlan()

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

    def _step(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> tuple[_Step, list[tuple[Any, ...]]]:
        """The put's call (_StepPlan.put) and the put_writes calls to make before it."""
        step, before = self._plan.put(
            self.serde.dumps_typed, config, checkpoint, metadata, new_versions,
            mirror_messages=self.mirror_messages, durability=self.durability,
            deltas_ok=_makes_msgpack_lists(self.serde),
        )  # fmt: skip
        return step, [self._put_writes_args(key, writes) for key, writes in before]

    def _stored(self, step: _Step, *, whole: bool = False) -> None:
        self._plan.stored(step, whole=whole)

    def _remember_read(self, found: CheckpointTuple, row: Sequence[Any]) -> None:
        """A checkpoint read whole: its list channels are what the next step may extend."""
        values = found.checkpoint["channel_values"]
        versions = found.checkpoint["channel_versions"]
        lists = {
            channel: _Remembered(str(versions[channel]), tuple(values[channel]), 0, len(blob or b""))
            for channel, type_, blob in zip(
                row[_BLOB_CHANNELS] or (), row[_BLOB_TYPES] or (), row[_BLOBS] or (), strict=True
            )
            if type_ == "msgpack" and type(values.get(channel)) is list and channel in versions
        }
        self._plan.read((str(row[_THREAD_ID]), row[_NS]), str(row[_ID]), versions, lists)

    def _writes_to_send(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str
    ) -> list[tuple[Any, ...]]:
        """put_writes: the calls to make (_StepPlan.put_writes: none when the writes are held)."""
        configurable = config["configurable"]
        key = (str(configurable["thread_id"]), configurable.get("checkpoint_ns") or "")
        found = _Writes(
            configurable["checkpoint_id"],
            checkpoints.TaskWrites(task_id, task_path, self._pending(writes)),
            configurable.get("job_id"),
            configurable.get("fencing_token"),
        )
        sync = configurable.get(CONFIG_KEY_DURABILITY) == "sync"
        return [self._put_writes_args(k, w) for k, w in self._plan.put_writes(key, found, sync=sync)]

    def _held_of(self, thread_id: str | None) -> list[tuple[Any, ...]]:
        """The held writes of a thread (None: of every thread), taken to be sent before a read."""
        held = self._plan.take_held(None if thread_id is None else str(thread_id))
        return [self._put_writes_args(key, writes) for key, writes in held]

    def _drop_held(self, thread_id: str) -> None:
        """Forget a thread (delete_thread): its held writes and everything remembered of it."""
        self._plan.forget(str(thread_id))

    def _pending(self, writes: Sequence[tuple[str, Any]]) -> list[checkpoints.PendingWrite]:
        """LangGraph's writes of a task, serialized (idx: WRITES_IDX_MAP's for the special channels)."""
        pending = []
        for i, (channel, value) in enumerate(writes):
            type_, blob = self.serde.dumps_typed(value)
            pending.append(checkpoints.PendingWrite(WRITES_IDX_MAP.get(channel, i), channel, type_, blob))
        return pending

    @staticmethod
    def _put_writes_args(key: _Key, found: _Writes) -> tuple[Any, ...]:
        w = found.writes
        return checkpoints._put_writes_args(
            key[0], key[1], found.checkpoint_id, w.task_id, w.writes, w.task_path, found.job_id, found.fencing_token
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
        """The first page's arguments of ai.list_checkpoints (at most _LIST_PAGE rows)."""
        configurable = (config or {}).get("configurable", {})
        thread_id = configurable.get("thread_id")
        return (
            None if thread_id is None else str(thread_id),
            configurable.get("checkpoint_ns"),
            get_checkpoint_id(before) if before else None,
            _LIST_PAGE if limit is None else min(limit, _LIST_PAGE),
            Jsonb(filter) if filter else None,
            None,
            None,
        )

    @staticmethod
    def _next_page(
        args: tuple[Any, ...], rows: Sequence[Sequence[Any]], limit: int | None, listed: int
    ) -> tuple[Any, ...] | None:
        """The next page's arguments after ``rows`` (``listed`` rows so far), or None: the server
        returns one bounded page, and list() reads on from the last row's (checkpoint_id,
        thread_id, checkpoint_ns) until a short page or ``limit``."""
        if len(rows) < args[3] or (limit is not None and listed >= limit):
            return None
        last = rows[-1]  # ai.checkpoint_tuple: thread_id, checkpoint_ns, checkpoint_id, ...
        size = _LIST_PAGE if limit is None else min(limit - listed, _LIST_PAGE)
        return (args[0], args[1], last[2], size, args[4], last[0], last[1])

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


# <async>
class AsyncAgentStateSaver(_Codec):
    """LangGraph checkpointer over a psycopg ``AsyncConnection`` (autocommit) or ``AsyncConnectionPool``.

    Each of the two savers has LangGraph's sync and async methods. The async saver's sync methods
    work from other threads while its event loop runs (as LangGraph's async Postgres saver's do;
    within the loop, use the async methods); the sync saver's async methods run its sync ones in a
    worker thread, so a graph can also be run with ``ainvoke``.
    """

    def __init__(
        self,
        conn: AsyncSource,
        *,
        serde: SerializerProtocol | None = None,
        durability: Durability = "sync",
        retry: RetryPolicy | None = None,
        mirror_messages: str | None = None,
    ) -> None:
        super().__init__(serde=serde, durability=durability, mirror_messages=mirror_messages)
        self._client = AsyncClient(conn, retry=retry)
        self._conn_string: str | None = None
        if True:  # ASYNC
            try:
                self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
            except RuntimeError:
                self.loop = None

    @property
    def conn(self) -> AsyncSource:
        """The pool or connection in use (after a lost connection was replaced, the new one)."""
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
        """A saver over one new connection, closed when the block ends (``PostgresSaver``'s signature).

        The connection is PostgresSaver's (autocommit, ``dict_row``) except that it never prepares
        statements (``prepare_threshold=None``), so the same string works behind PgBouncer in
        transaction pooling; ``pipeline=True`` runs it in pipeline mode. The saver owns it: a
        connection the server ended is replaced on the next call, and a call safe to retry (get,
        list, put, put_writes) is retried as ``retry`` says, once by default (docs/connections.md)."""
        conn = await psycopg.AsyncConnection.connect(
            conn_string, autocommit=True, prepare_threshold=None, row_factory=dict_row
        )
        saver = cls(conn, serde=serde, retry=retry)
        saver._client._owned = True
        saver._client._conninfo = conn_string  # every host of the URL: a lost connection is opened through it
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
        """Checks that schema ``ai`` is deployed at a version this package can use; on an empty
        database, deploys the schema bundled in the package when the role may (as
        ``PostgresSaver.setup()`` creates its tables). Otherwise raises
        :class:`agent_state.schema.SchemaError` naming what to run. Safe to call on every start."""
        await self._client._replace_if_lost()
        async with self._client._connection() as conn:
            if conn.info.pipeline_status != pq.PipelineStatus.OFF and self._conn_string is not None:
                found = await schema.astatus(conn)
                if found.deployed:
                    return await schema.adeploy(conn)  # checks only: raises unless compatible
                async with await psycopg.AsyncConnection.connect(self._conn_string, autocommit=True) as own:
                    return _said(await schema.adeploy(own))
            return _said(await schema.adeploy(conn))

    async def _execute(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        # The client's connection handling: no prepared statement behind a pooler, retries, and
        # on a connection in pipeline mode a sync before it returns (committed, as with
        # PostgresSaver(conn, pipe=...)). Tuples whatever the connection's row factory.
        return await self._client._fetch(sql, params, tuple_row, binary=True)

    async def _load(self, rows: Sequence[Sequence[Any]]) -> list[CheckpointTuple]:
        found = [self._tuple(row) for row in rows]
        for item in found:
            parent = self._sends_parent(item)
            if parent is not None:  # a checkpoint of an old LangGraph (imported history): rare
                parent_rows = await self._execute(GET_CHECKPOINT, parent)
                if parent_rows:
                    self._migrate_pending_sends(item, parent_rows[0])
        return found

    async def _send_held(self, thread_id: str | None) -> None:
        for args in self._held_of(thread_id):
            await self._execute(PUT_WRITES, args)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        await self._send_held(config["configurable"]["thread_id"])
        rows = await self._execute(GET_CHECKPOINT, self._get_args(config))
        if not rows:
            return None
        found = (await self._load(rows))[0]
        self._remember_read(found, rows[0])
        return found

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
        await self._send_held((config or {}).get("configurable", {}).get("thread_id"))
        if limit == 0:
            return
        # ai.list_checkpoints returns one bounded page: read on from the last row until a short page
        args: tuple[Any, ...] | None = self._list_args(config, filter, before, limit)
        listed = 0
        while args is not None:
            rows = await self._execute(LIST_CHECKPOINTS, args)
            listed += len(rows)
            for item in await self._load(rows):  # noqa: UP028, RUF100 (for the sync twin: no yield from in async code)
                yield item
            args = self._next_page(args, rows, limit, listed)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        step, before = self._step(config, checkpoint, metadata, new_versions)
        for args in before:
            await self._execute(PUT_WRITES, args)
        try:
            await self._execute(PUT_STEP, step.call.params())
        except DeltaBaseMissing:
            if step.whole is None:
                raise
            await self._execute(PUT_STEP, step.whole().params())  # a version it extends is gone (pruned): send it whole
            self._stored(step, whole=True)
        else:
            self._stored(step)
        return step.next_config

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        for args in self._writes_to_send(config, writes, task_id, task_path):
            await self._execute(PUT_WRITES, args)

    async def adelete_thread(self, thread_id: str) -> None:
        self._drop_held(thread_id)
        await self._execute(DELETE_THREAD, (str(thread_id),))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._send_held(None)
        await self._execute(DELETE_FOR_RUNS, ([str(r) for r in run_ids],))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._send_held(source_thread_id)
        await self._execute(COPY_THREAD, (str(source_thread_id), str(target_thread_id)))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self._send_held(None)
        await self._execute(PRUNE, self._prune_args(thread_ids, strategy))

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """LangGraph's DeltaChannel history (beta) in one call of ``ai.delta_channel_history``: per
        channel, the nearest stored value on the parent chain and the writes since, oldest first."""
        if not channels:
            return {}
        await self._send_held(config["configurable"]["thread_id"])
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

    if True:  # ASYNC
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
            """LangGraph's DeltaChannel history (beta) in one call of ``ai.delta_channel_history``: per
            channel, the nearest stored value on the parent chain and the writes since, oldest first."""
            return self._run(self.aget_delta_channel_history(config=config, channels=channels))
    else:
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


# </async>


# <sync> generated by scripts/async_to_sync.py from the <async> block above: do not edit
class AgentStateSaver(_Codec):
    """LangGraph checkpointer over a psycopg ``Connection`` (autocommit) or ``ConnectionPool``.

    Each of the two savers has LangGraph's sync and async methods. The async saver's sync methods
    work from other threads while its event loop runs (as LangGraph's async Postgres saver's do;
    within the loop, use the async methods); the sync saver's async methods run its sync ones in a
    worker thread, so a graph can also be run with ``ainvoke``.
    """

    def __init__(
        self,
        conn: SyncSource,
        *,
        serde: SerializerProtocol | None = None,
        durability: Durability = "sync",
        retry: RetryPolicy | None = None,
        mirror_messages: str | None = None,
    ) -> None:
        super().__init__(serde=serde, durability=durability, mirror_messages=mirror_messages)
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
        saver._client._conninfo = conn_string  # every host of the URL: a lost connection is opened through it
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

    def _send_held(self, thread_id: str | None) -> None:
        for args in self._held_of(thread_id):
            self._execute(PUT_WRITES, args)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        self._send_held(config["configurable"]["thread_id"])
        rows = self._execute(GET_CHECKPOINT, self._get_args(config))
        if not rows:
            return None
        found = self._load(rows)[0]
        self._remember_read(found, rows[0])
        return found

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
        self._send_held((config or {}).get("configurable", {}).get("thread_id"))
        if limit == 0:
            return
        # ai.list_checkpoints returns one bounded page: read on from the last row until a short page
        args: tuple[Any, ...] | None = self._list_args(config, filter, before, limit)
        listed = 0
        while args is not None:
            rows = self._execute(LIST_CHECKPOINTS, args)
            listed += len(rows)
            for item in self._load(rows):  # noqa: UP028, RUF100 (for the sync twin: no yield from in async code)
                yield item
            args = self._next_page(args, rows, limit, listed)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        step, before = self._step(config, checkpoint, metadata, new_versions)
        for args in before:
            self._execute(PUT_WRITES, args)
        try:
            self._execute(PUT_STEP, step.call.params())
        except DeltaBaseMissing:
            if step.whole is None:
                raise
            self._execute(PUT_STEP, step.whole().params())  # a version it extends is gone (pruned): send it whole
            self._stored(step, whole=True)
        else:
            self._stored(step)
        return step.next_config

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        for args in self._writes_to_send(config, writes, task_id, task_path):
            self._execute(PUT_WRITES, args)

    def delete_thread(self, thread_id: str) -> None:
        self._drop_held(thread_id)
        self._execute(DELETE_THREAD, (str(thread_id),))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._send_held(None)
        self._execute(DELETE_FOR_RUNS, ([str(r) for r in run_ids],))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._send_held(source_thread_id)
        self._execute(COPY_THREAD, (str(source_thread_id), str(target_thread_id)))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._send_held(None)
        self._execute(PRUNE, self._prune_args(thread_ids, strategy))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """LangGraph's DeltaChannel history (beta) in one call of ``ai.delta_channel_history``: per
        channel, the nearest stored value on the parent chain and the writes since, oldest first."""
        if not channels:
            return {}
        self._send_held(config["configurable"]["thread_id"])
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


# </sync>
