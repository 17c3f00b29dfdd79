"""The ids of the job a log record was written for: ``thread_id``, ``job_id``, ``attempt``,
``fencing_token`` and ``queue`` on each record, so that a log line joins to its run (and, next, to its
trace). docs/observability.md, "Logs".

The Worker binds a job's ids while its handler runs (:func:`job_log_context`, a context variable:
an async worker's task and a sync worker's thread each see their own job) and puts
:class:`JobLogFilter` on its logger, ``agent_state.worker``. A record logged while no job is bound
gets ``None`` for each. To put the ids on the handler's own records, add the filter to a logging
handler (a handler's filters see every record it emits, whatever the logger)::

    handler = logging.StreamHandler()
    handler.addFilter(JobLogFilter())
    handler.setFormatter(logging.Formatter("%(message)s job=%(job_id)s attempt=%(attempt)s thread=%(thread_id)s"))

or read them as ``record.job_id`` in a JSON formatter.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["FIELDS", "JobLogFilter", "current_job_ids", "job_log_context"]

#: The attributes :class:`JobLogFilter` sets on a record.
FIELDS = ("thread_id", "job_id", "attempt", "fencing_token", "queue")

_NONE: dict[str, Any] = dict.fromkeys(FIELDS)
_job_ids: ContextVar[dict[str, Any]] = ContextVar("agent_state_job_ids", default=_NONE)


def current_job_ids() -> dict[str, Any]:
    """The ids bound in this context (each ``None`` outside a job)."""
    return dict(_job_ids.get())


@contextmanager
def job_log_context(job: Any) -> Iterator[None]:
    """Binds ``job``'s ids (an :class:`agent_state.models.Job`, or anything with those attributes;
    ``attempt`` is its ``attempts``) for the records logged in this context until the block ends."""
    token = _job_ids.set(
        {
            "thread_id": getattr(job, "thread_id", None),
            "job_id": getattr(job, "job_id", None),
            "attempt": getattr(job, "attempts", None),
            "fencing_token": getattr(job, "fencing_token", None),
            "queue": getattr(job, "queue", None),
        }
    )
    try:
        yield
    finally:
        _job_ids.reset(token)


class JobLogFilter(logging.Filter):
    """Sets :data:`FIELDS` on every record from the bound job (never drops a record; a field the
    record already has, from ``extra=``, is kept)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in _job_ids.get().items():
            if not hasattr(record, name):
                setattr(record, name, value)
        return True
