"""Usage metering keyed for exactly-once billing (``ai.record_usage``, ``ai.usage_summary``).

Record one row per model call. The idempotency key makes a retry harmless: the same key with the
same figures returns the original row (``inserted=False``), with other figures it raises
:class:`~agent_state.Conflict` (AS005). Derive the key from where the call sits in the run, not
from the clock, so that a resumed run re-derives the same key and is charged once::

    key = usage_key(thread_id, job.job_id, "plan", 0)        # thread, job, node/step, call index
    client.record_usage(thread_id, key, "gpt-4.1", 1200, 310, Decimal("0.0123"),
                        job_id=job.job_id, fencing_token=job.fencing_token)

Costs are :class:`~decimal.Decimal` both ways (numeric in the database): never a float for money.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from psycopg.types.json import Jsonb

from ._calls import Call, T
from .models import UsageRecord, UsageSummaryRow, from_row
from .side_effects import idempotency_key

__all__ = ["AsyncUsageMethods", "UsageDimension", "UsageMethods", "usage_key"]

UsageDimension = Literal["owner", "thread", "model", "day"]


def usage_key(thread_id: str, job_id: int | None, step: str, call_index: int) -> str:
    """A usage key from where the model call sits in the run: the thread, the job (None outside
    a job), the node or step name and the call's index within it. A resumed run that repeats the
    step derives the same key, so its usage is recorded once."""
    return "usage:" + idempotency_key(thread_id, job_id, step, call_index)


def _record(row: dict[str, Any]) -> UsageRecord:
    return from_row(UsageRecord, row)


RECORD_USAGE = Call("select * from ai.record_usage(%s, %s, %s, %s, %s, %s, %s, %s, %s)", _record)
USAGE_SUMMARY = Call("select * from ai.usage_summary(%s, %s, %s)", lambda r: from_row(UsageSummaryRow, r))


def _record_args(
    thread_id: str,
    idempotency_key: str,
    model: str,
    input_tokens: int,
    output_tokens: int,
    cost: Decimal | int | str,
    details: dict[str, Any] | None,
    job_id: int | None,
    fencing_token: int | None,
) -> tuple[Any, ...]:
    if isinstance(cost, float):
        raise TypeError("cost must be a Decimal (or int or str), never a float: money is exact")
    return (
        thread_id,
        idempotency_key,
        model,
        input_tokens,
        output_tokens,
        Decimal(cost),
        Jsonb(details or {}),
        job_id,
        fencing_token,
    )


class UsageMethods:
    """The usage half of :class:`~agent_state.Client`."""

    def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by Client
        raise NotImplementedError

    def record_usage(
        self,
        thread_id: str,
        idempotency_key: str,
        model: str,
        input_tokens: int,
        output_tokens: int,
        cost: Decimal | int | str,
        details: dict[str, Any] | None = None,
        job_id: int | None = None,
        fencing_token: int | None = None,
    ) -> UsageRecord:
        """``ai.record_usage``: one metered model call, once per key (``inserted=False`` on a retry)."""
        args = _record_args(
            thread_id, idempotency_key, model, input_tokens, output_tokens, cost, details, job_id, fencing_token
        )
        return self._rows(RECORD_USAGE, args)[0]

    def usage_summary(
        self, since: datetime, until: datetime, group_by: Sequence[UsageDimension] = ("owner",)
    ) -> list[UsageSummaryRow]:
        """``ai.usage_summary``: sums over ``since <= created_at < until`` grouped by the dimensions."""
        return self._rows(USAGE_SUMMARY, (since, until, list(group_by)))


class AsyncUsageMethods:
    """The usage half of :class:`~agent_state.AsyncClient` (same names as :class:`UsageMethods`)."""

    async def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by AsyncClient
        raise NotImplementedError

    async def record_usage(
        self,
        thread_id: str,
        idempotency_key: str,
        model: str,
        input_tokens: int,
        output_tokens: int,
        cost: Decimal | int | str,
        details: dict[str, Any] | None = None,
        job_id: int | None = None,
        fencing_token: int | None = None,
    ) -> UsageRecord:
        args = _record_args(
            thread_id, idempotency_key, model, input_tokens, output_tokens, cost, details, job_id, fencing_token
        )
        return (await self._rows(RECORD_USAGE, args))[0]

    async def usage_summary(
        self, since: datetime, until: datetime, group_by: Sequence[UsageDimension] = ("owner",)
    ) -> list[UsageSummaryRow]:
        return await self._rows(USAGE_SUMMARY, (since, until, list(group_by)))
