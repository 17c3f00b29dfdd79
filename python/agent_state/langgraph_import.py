"""Copy threads from a LangGraph ``PostgresSaver`` database into agent-state, history included.

``import_from_postgres_saver(source, target)`` reads PostgresSaver's three tables
(``checkpoints``, ``checkpoint_blobs``, ``checkpoint_writes``, as its migrations leave them) on
the ``source`` connection and writes each thread through ``ai.put_checkpoint`` and
``ai.put_writes`` on the ``target`` connection, so the imported threads belong to
``ai.current_owner()`` there (the target's role, or, for an ``ai_service`` role, the ``owner``
given, which each thread's transaction acts for with ``ai.act_as``) and pass every check a live
write passes. The serialized bytes are
copied as they are (nothing is deserialized but the checkpoint document itself, which
PostgresSaver keeps as JSON and the saver keeps in the serializer's format), so state classes
need not be importable here.

* Every checkpoint of every namespace, in id order (parents first), with the channel values its
  versions name and every pending write, including those of checkpoints written by a LangGraph
  before checkpoint format v4: their pending sends stay writes of the parent, and
  ``AgentStateSaver`` converts them when it reads the checkpoint, as PostgresSaver does.
* One transaction per thread on the target: a thread is imported whole or not at all. One
  thread's rows are held in memory at a time.
* Idempotent: a rerun writes the same rows again (a checkpoint put twice is replaced by itself,
  values and writes are kept as first written), so an interrupted import is finished by running
  it again. Threads written on the source since the last run gain their new checkpoints.

The source is only read. ``agent-state import-langgraph --from DSN [--thread ID ...]`` calls
this function.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import pq
from psycopg.rows import tuple_row
from psycopg.types.json import Jsonb

from .checkpoints import PUT_CHECKPOINT, PUT_WRITES, ChannelValue, CheckpointStep
from .client import _reraise

__all__ = ["ImportReport", "import_from_postgres_saver"]


@dataclass(slots=True)
class ImportReport:
    """What an import wrote: threads, checkpoints, channel values and pending writes sent to the
    target (a rerun sends them again and reports the same counts; the target keeps one of each)."""

    threads: list[str] = field(default_factory=list)
    checkpoints: int = 0
    blobs: int = 0
    writes: int = 0


_THREADS = "select distinct thread_id from checkpoints order by thread_id"
_CHECKPOINTS = """
select checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata
from checkpoints where thread_id = %s
order by checkpoint_id, checkpoint_ns
"""
# "empty" marks a channel without a value (blob NULL): PostgresSaver skips it when reading, and a
# missing (channel, version) reads the same here.
_BLOBS = """
select checkpoint_ns, channel, version, type, blob
from checkpoint_blobs where thread_id = %s and type <> 'empty' and blob is not null
"""
_WRITES = """
select checkpoint_ns, checkpoint_id, task_id, {task_path}, idx, channel, type, blob
from checkpoint_writes where thread_id = %s
order by checkpoint_ns, checkpoint_id, task_id, idx
"""
_HAS_TASK_PATH = """
select exists (select from information_schema.columns
               where table_name = 'checkpoint_writes' and column_name = 'task_path'
                 and table_schema = any (pg_catalog.current_schemas(false)))
"""


def _serde() -> Any:
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer()


def import_from_postgres_saver(
    source: psycopg.Connection[Any],
    target: psycopg.Connection[Any],
    *,
    thread_ids: Sequence[str] | None = None,
    owner: str | None = None,
) -> ImportReport:
    """Copies the given threads (all when None) of the PostgresSaver database on ``source`` into
    agent-state on ``target``, each in one transaction (acting for ``owner`` when given: a service's
    end user, ``ai.act_as``); returns what it wrote. Raises the typed
    errors of the SQL API (``NotFound`` for a thread id another tenant holds on the target,
    ``ThreadDeleted`` for one the target's role deleted) after committing the threads before it."""
    if isinstance(thread_ids, str):
        raise TypeError("thread_ids must be a sequence of thread IDs, not a str")
    serde = _serde()
    report = ImportReport()
    with source.cursor(row_factory=tuple_row) as src:
        if thread_ids is None:
            threads = [r[0] for r in src.execute(_THREADS).fetchall()]
        else:
            threads = [str(t) for t in dict.fromkeys(thread_ids)]
        row = src.execute(_HAS_TASK_PATH).fetchone()
        writes_sql = _WRITES.format(task_path="task_path" if row and row[0] else "''")
        for thread_id in threads:
            checkpoints = src.execute(_CHECKPOINTS, (thread_id,)).fetchall()
            blobs = {(ns, ch, ver): (t, b) for ns, ch, ver, t, b in src.execute(_BLOBS, (thread_id,)).fetchall()}
            writes = src.execute(writes_sql, (thread_id,)).fetchall()
            if not source.autocommit:
                source.rollback()  # read only: end the snapshot between threads
            if not checkpoints and not writes:
                continue
            try:
                _import_thread(target, serde, thread_id, checkpoints, blobs, writes, report, owner)
            except psycopg.Error as error:
                raise _reraise(error) from error
            report.threads.append(thread_id)
    return report


def _import_thread(
    target: psycopg.Connection[Any],
    serde: Any,
    thread_id: str,
    checkpoints: list[tuple[Any, ...]],
    blobs: dict[tuple[str, str, str], tuple[str, bytes]],
    writes: list[tuple[Any, ...]],
    report: ImportReport,
    owner: str | None = None,
) -> None:
    owns = not target.autocommit and target.info.transaction_status == pq.TransactionStatus.IDLE
    sent: set[tuple[str, str, str]] = set()
    with target.transaction(), target.cursor(row_factory=tuple_row) as cur:
        if owner is not None:
            cur.execute("select ai.act_as(%s)", (owner,), prepare=False)  # for this transaction only
        for ns, checkpoint_id, parent_id, document, metadata in checkpoints:
            document = dict(document)
            versions = document.pop("channel_versions", {}) or {}
            document.setdefault("channel_values", {})
            type_, data = serde.dumps_typed(document)
            values: list[ChannelValue] = []
            for channel, version in versions.items():
                key = (ns, channel, str(version))
                if key in blobs and key not in sent:
                    sent.add(key)
                    blob_type, blob = blobs[key]
                    values.append(ChannelValue(channel, str(version), blob_type, bytes(blob)))
            step = CheckpointStep(
                thread_id, ns, checkpoint_id, parent_id, type_, data, Jsonb(metadata or {}), Jsonb(versions), values
            )
            cur.execute(PUT_CHECKPOINT.sql, step.params())
            report.checkpoints += 1
            report.blobs += len(values)
        # One put_writes per (namespace, checkpoint, task), as LangGraph's savers write them.
        groups: dict[tuple[str, str, str, str], list[tuple[int, str, str, bytes]]] = {}
        for ns, checkpoint_id, task_id, task_path, idx, channel, type_, blob in writes:
            groups.setdefault((ns, checkpoint_id, task_id, task_path), []).append((idx, channel, type_, bytes(blob)))
        for (ns, checkpoint_id, task_id, task_path), items in groups.items():
            cur.execute(
                PUT_WRITES.sql,
                (
                    thread_id,
                    ns,
                    checkpoint_id,
                    task_id,
                    [i[0] for i in items],
                    [i[1] for i in items],
                    [i[2] for i in items],
                    [i[3] for i in items],
                    task_path,
                    None,
                    None,
                ),
            )
            report.writes += len(items)
    if owns:
        target.commit()
