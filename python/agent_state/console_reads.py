"""The reads made for the operator console (the ``console_reads`` change), as client methods.

``queue_throughput``: the jobs that finished per queue and time bucket, with their latency from
enqueue to finish (``ai.queue_throughput``); ``session_status_counts``: sessions per status
(``ai.session_status_counts``); ``list_streams``: a thread's streams (``ai.list_streams``). The
console's queues, runs and run pages show them::

    for b in client.queue_throughput("refunds", since=timedelta(hours=1), bucket=timedelta(minutes=5)):
        print(b.bucket_start, b.completed, b.failed, b.mean_latency)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ._calls import Call, T
from .models import StreamState, from_row

__all__ = ["AsyncConsoleReadMethods", "ConsoleReadMethods", "QueueThroughput"]


@dataclass(frozen=True, slots=True)
class QueueThroughput:
    """One bucket of one queue: jobs finished in it (COMPLETED, FAILED) and their enqueue-to-finish times."""

    queue: str
    bucket_start: datetime
    completed: int
    failed: int
    mean_latency: timedelta | None
    max_latency: timedelta | None


QUEUE_THROUGHPUT = Call("select * from ai.queue_throughput(%s, %s, %s)", lambda r: from_row(QueueThroughput, r))
SESSION_STATUS_COUNTS = Call(
    "select * from ai.session_status_counts(%s)", lambda r: (str(r["status"]), int(r["sessions"]))
)
LIST_STREAMS = Call("select * from ai.list_streams(%s, %s, %s)", lambda r: from_row(StreamState, r))


class ConsoleReadMethods:
    """The console's reads on :class:`~agent_state.Client`."""

    def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by Client
        raise NotImplementedError

    def queue_throughput(
        self, queue: str | None = None, since: timedelta = timedelta(hours=1), bucket: timedelta = timedelta(minutes=5)
    ) -> list[QueueThroughput]:
        """``ai.queue_throughput``: per queue (or only ``queue``) and bucket, the jobs finished within
        ``since`` and their latency; buckets without a finished job have no row."""
        return self._rows(QUEUE_THROUGHPUT, (queue, since, bucket))

    def session_status_counts(self, owner: str | None = None) -> dict[str, int]:
        """``ai.session_status_counts``: how many sessions per status (of ``owner`` when given)."""
        return dict(self._rows(SESSION_STATUS_COUNTS, (owner,)))

    def list_streams(
        self, thread_id: str, stale_after: timedelta = timedelta(seconds=30), max_rows: int = 100
    ) -> list[StreamState]:
        """``ai.list_streams``: a thread's streams, oldest first, each as ``get_stream`` returns it."""
        return self._rows(LIST_STREAMS, (thread_id, stale_after, max_rows))


class AsyncConsoleReadMethods:
    """The console's reads on :class:`~agent_state.AsyncClient` (same names as :class:`ConsoleReadMethods`)."""

    async def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by AsyncClient
        raise NotImplementedError

    async def queue_throughput(
        self, queue: str | None = None, since: timedelta = timedelta(hours=1), bucket: timedelta = timedelta(minutes=5)
    ) -> list[QueueThroughput]:
        return await self._rows(QUEUE_THROUGHPUT, (queue, since, bucket))

    async def session_status_counts(self, owner: str | None = None) -> dict[str, int]:
        return dict(await self._rows(SESSION_STATUS_COUNTS, (owner,)))

    async def list_streams(
        self, thread_id: str, stale_after: timedelta = timedelta(seconds=30), max_rows: int = 100
    ) -> list[StreamState]:
        return await self._rows(LIST_STREAMS, (thread_id, stale_after, max_rows))
