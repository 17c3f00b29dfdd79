"""The reads made for the operator console (the ``console_reads`` change), as client methods.

``queue_throughput``: the jobs that finished per queue and time bucket, with their latency from
enqueue to finish (``ai.queue_throughput``); the console's queues page draws it::

    for b in client.queue_throughput("refunds", since=timedelta(hours=1), bucket=timedelta(minutes=5)):
        print(b.bucket_start, b.completed, b.failed, b.mean_latency)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ._calls import Call, T
from .models import from_row

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


class AsyncConsoleReadMethods:
    """The console's reads on :class:`~agent_state.AsyncClient` (same names as :class:`ConsoleReadMethods`)."""

    async def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by AsyncClient
        raise NotImplementedError

    async def queue_throughput(
        self, queue: str | None = None, since: timedelta = timedelta(hours=1), bucket: timedelta = timedelta(minutes=5)
    ) -> list[QueueThroughput]:
        return await self._rows(QUEUE_THROUGHPUT, (queue, since, bucket))
