"""The tool-call ledger: exactly-once external side effects (``ai.begin_side_effect`` ...).

Client methods (sync and async mixins, one round trip each) and the helper that brackets a tool
call with them, as a decorator or a context manager::

    @side_effect(client, thread_id, "charge", user, amount, job_id=job.job_id, fencing_token=token)
    def charge(call):                      # call.key goes to the payment API as its idempotency key
        return payments.charge(user, amount, idempotency_key=call.key)

    receipt = charge()                     # on a retry: the recorded receipt, the API is not called

Inside a worker, ``ctx.side_effect("charge", user, amount)`` does the same for the job's claim.

- First call: the key is reserved for this claim, the tool runs, its result is stored (fenced:
  a worker that lost its lease stores nothing) and returned.
- Any later call with the same key parts in the thread: the stored result, the tool not called.
- A reservation held by a dead worker (crashed before it stored the result) is taken over once
  its lease expires; ``call.taken_over`` is then True so the tool checks the outside world, or
  simply passes the same ``call.key`` downstream, where a unique-key hit means "already applied".
- The tool raises: the reservation is abandoned (nothing happened outside), the error propagates.
- The tool returned but storing its result fails on a lost connection (a failover, a restart, a
  backend ended): the finish is tried again (it is idempotent: the same finish returns the stored
  row) for up to ``retry`` (:class:`~agent_state.RetryPolicy`, two minutes by default). If it still
  cannot be confirmed, :class:`~agent_state.errors.OutcomeUnknown` is raised and the reservation
  is never abandoned: it is left to its lease, so the next attempt sees ``taken_over = True``.
  A tool either ran once, or its rerun is flagged.
- Another live worker holds the key: :class:`SideEffectBusy` (the job fails and is retried).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from . import errors
from ._calls import Call, T
from .models import SideEffect, SideEffectBegin, from_row
from .retry import RetryPolicy, is_connection_error
from .tracing import end_side_effect, side_effect_begun, start_side_effect

#: How long a reservation made without a job lives (the SQL default too).
DEFAULT_RESERVATION = timedelta(minutes=5)


class SideEffectBusy(Exception):
    """Another live holder has reserved this key; do not run the tool now (try again later)."""


def idempotency_key(*parts: Any) -> str:
    """The key ``ai.idempotency_key`` computes, without a round trip: sha256 (hex) over the parts,
    each as text and length-prefixed, ``None`` distinct from ``""``."""
    if not parts:
        raise errors.InvalidArgument("idempotency_key needs at least one part", sqlstate="AS002")
    buf = "".join("N;" if p is None else f"{len(str(p))}:{p};" for p in parts)
    return hashlib.sha256(buf.encode("utf-8")).hexdigest()


IDEMPOTENCY_KEY: Call[str] = Call("select ai.idempotency_key(variadic %s::text[]) as value", lambda r: r["value"])
BEGIN_SIDE_EFFECT = Call(
    "select * from ai.begin_side_effect(%s, %s, %s, %s, %s, %s)", lambda r: from_row(SideEffectBegin, r)
)
FINISH_SIDE_EFFECT = Call("select * from ai.finish_side_effect(%s, %s, %s, %s, %s)", lambda r: from_row(SideEffect, r))
ABANDON_SIDE_EFFECT = Call(
    "select * from ai.abandon_side_effect(%s, %s, %s, %s, %s)", lambda r: from_row(SideEffect, r)
)
GET_SIDE_EFFECT = Call("select * from ai.get_side_effect(%s, %s)", lambda r: from_row(SideEffect, r))


def _json(value: Any) -> Jsonb:
    return Jsonb(value)


# <async>
class AsyncSideEffectMethods:
    """The side-effect half of :class:`~agent_state.AsyncClient`."""

    async def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by AsyncClient
        raise NotImplementedError

    async def idempotency_key(self, *parts: Any) -> str:
        """``ai.idempotency_key``: the same as :func:`idempotency_key`, computed by the database."""
        return (await self._rows(IDEMPOTENCY_KEY, ([None if p is None else str(p) for p in parts],)))[0]

    async def begin_side_effect(
        self,
        thread_id: str,
        idempotency_key: str,
        request: Any = None,
        job_id: int | None = None,
        fencing_token: int | None = None,
        reservation: timedelta = DEFAULT_RESERVATION,
    ) -> SideEffectBegin:
        """``ai.begin_side_effect``: 'execute' (reserved; taken_over tells a takeover), 'done' or 'busy'."""
        document = _json({} if request is None else request)
        args = (thread_id, idempotency_key, document, job_id, fencing_token, reservation)
        return (await self._rows(BEGIN_SIDE_EFFECT, args))[0]

    async def finish_side_effect(
        self, thread_id: str, idempotency_key: str, result: Any, job_id: int | None, fencing_token: int
    ) -> SideEffect:
        """``ai.finish_side_effect``: stores the result (fenced); without a job the token is the attempt."""
        args = (thread_id, idempotency_key, _json(result), job_id, fencing_token)
        return (await self._rows(FINISH_SIDE_EFFECT, args))[0]

    async def abandon_side_effect(
        self, thread_id: str, idempotency_key: str, job_id: int | None, fencing_token: int, error: str | None = None
    ) -> SideEffect:
        """``ai.abandon_side_effect``: gives the reservation back after a clean failure."""
        return (await self._rows(ABANDON_SIDE_EFFECT, (thread_id, idempotency_key, job_id, fencing_token, error)))[0]

    async def get_side_effect(self, thread_id: str, idempotency_key: str) -> SideEffect:
        """``ai.get_side_effect``."""
        return (await self._rows(GET_SIDE_EFFECT, (thread_id, idempotency_key)))[0]


# </async>


# <sync> generated by scripts/async_to_sync.py from the <async> block above: do not edit
class SideEffectMethods:
    """The side-effect half of :class:`~agent_state.Client`."""

    def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by Client
        raise NotImplementedError

    def idempotency_key(self, *parts: Any) -> str:
        """``ai.idempotency_key``: the same as :func:`idempotency_key`, computed by the database."""
        return self._rows(IDEMPOTENCY_KEY, ([None if p is None else str(p) for p in parts],))[0]

    def begin_side_effect(
        self,
        thread_id: str,
        idempotency_key: str,
        request: Any = None,
        job_id: int | None = None,
        fencing_token: int | None = None,
        reservation: timedelta = DEFAULT_RESERVATION,
    ) -> SideEffectBegin:
        """``ai.begin_side_effect``: 'execute' (reserved; taken_over tells a takeover), 'done' or 'busy'."""
        document = _json({} if request is None else request)
        args = (thread_id, idempotency_key, document, job_id, fencing_token, reservation)
        return self._rows(BEGIN_SIDE_EFFECT, args)[0]

    def finish_side_effect(
        self, thread_id: str, idempotency_key: str, result: Any, job_id: int | None, fencing_token: int
    ) -> SideEffect:
        """``ai.finish_side_effect``: stores the result (fenced); without a job the token is the attempt."""
        args = (thread_id, idempotency_key, _json(result), job_id, fencing_token)
        return self._rows(FINISH_SIDE_EFFECT, args)[0]

    def abandon_side_effect(
        self, thread_id: str, idempotency_key: str, job_id: int | None, fencing_token: int, error: str | None = None
    ) -> SideEffect:
        """``ai.abandon_side_effect``: gives the reservation back after a clean failure."""
        return self._rows(ABANDON_SIDE_EFFECT, (thread_id, idempotency_key, job_id, fencing_token, error))[0]

    def get_side_effect(self, thread_id: str, idempotency_key: str) -> SideEffect:
        """``ai.get_side_effect``."""
        return self._rows(GET_SIDE_EFFECT, (thread_id, idempotency_key))[0]


# </sync>


# -- the helper -----------------------------------------------------------------------------------


@dataclass
class SideEffectCall:
    """One bracketed tool call: what ``begin`` said, and ``finish`` to store the result.

    ``done`` is True when the result was recorded before (then ``result`` is it and the tool must
    not run). ``taken_over`` is True when a dead holder's reservation was taken over: the dead one
    may have acted, so the tool should check, or pass ``key`` downstream to deduplicate."""

    key: str
    attempt: int
    taken_over: bool
    done: bool
    result: Any = None
    finished: bool = field(default=False)


class side_effect:
    """Brackets a tool call with begin/finish_side_effect, as a decorator or a context manager.

    ``key_parts`` identify the logical action within the thread (the key is
    :func:`idempotency_key` of them); ``request`` (JSON, default ``{"key_parts": [...]}``) is
    stored and must be the same on every retry. With ``job_id``/``fencing_token`` the calls are
    fenced on the claim; without, the reservation lives for ``reservation``.

    Decorator: the wrapped function gets the :class:`SideEffectCall` first (``call.key``,
    ``call.taken_over``) and its return value (JSON) is stored; a retry returns the stored value.
    Context manager: ``with side_effect(...) as call:`` then, unless ``call.done``,
    ``call_result = tool(...)`` and ``scope.finish(result)``; the recorded result is ``call.result``.
    """

    def __init__(
        self,
        client: Any,
        thread_id: str,
        *key_parts: Any,
        request: Any = None,
        job_id: int | None = None,
        fencing_token: int | None = None,
        reservation: timedelta = DEFAULT_RESERVATION,
        on_lease_lost: Callable[[Exception], None] | None = None,
        retry: RetryPolicy | None = None,
        trace_parent: Any = None,
    ):
        if not key_parts:
            raise ValueError("side_effect needs at least one key part")
        self.client = client
        self.thread_id = thread_id
        self.key = idempotency_key(*key_parts)
        self.request = {"key_parts": [None if p is None else str(p) for p in key_parts]} if request is None else request
        self.job_id = job_id
        self.fencing_token = fencing_token
        self.reservation = reservation
        self._on_lease_lost = on_lease_lost
        #: How long a finish lost with its connection is tried again (two minutes by default).
        self.retry = retry if retry is not None else RetryPolicy()
        self._ran = False  # finish was called: the tool ran, the reservation is never abandoned
        self.call: SideEffectCall | None = None
        #: its OpenTelemetry span (agent_state.tracing), from begin to the end of the ``with``, a
        #: child of ``trace_parent`` (an OpenTelemetry context; default: the current one)
        self._trace_parent = trace_parent
        self._span: Any = None
        self._name = str(key_parts[0])[:100]

    def _lost(self, error: Exception) -> None:
        if isinstance(error, errors.LeaseLost) and self._on_lease_lost is not None:
            self._on_lease_lost(error)

    def _token(self, call: SideEffectCall) -> int:
        return self.fencing_token if self.job_id is not None and self.fencing_token is not None else call.attempt

    # -- sync ---------------------------------------------------------------------------------------

    def _trace_begin(self) -> None:
        self._span = start_side_effect(self._name, self.key, self.thread_id, self.job_id, self._trace_parent)

    def _trace_begun(self, begun: SideEffectBegin) -> None:
        if self._span is not None:
            outcome = begun.outcome
            said = "cached" if outcome == "done" else "busy" if outcome == "busy" else "executed"
            side_effect_begun(
                self._span, "taken_over" if said == "executed" and begun.taken_over else said, begun.attempt
            )

    def _trace_end(self, error: BaseException | None) -> None:
        span, self._span = self._span, None
        end_side_effect(span, error)

    def begin(self) -> SideEffectCall:
        self._trace_begin()
        try:
            begun = self.client.begin_side_effect(
                self.thread_id, self.key, self.request, self.job_id, self.fencing_token, self.reservation
            )
        except errors.LeaseLost as error:
            self._lost(error)
            self._trace_end(error)
            raise
        except BaseException as error:
            self._trace_end(error)
            raise
        self._trace_begun(begun)
        if begun.outcome == "busy":
            busy = SideEffectBusy(f"side effect {self.key} of thread {self.thread_id} is held by a live claim")
            self._trace_end(busy)
            raise busy
        self.call = SideEffectCall(
            key=self.key,
            attempt=begun.attempt,
            taken_over=begun.taken_over,
            done=begun.outcome == "done",
            result=begun.result,
        )
        return self.call

    def _unconfirmed(self, error: Exception) -> errors.OutcomeUnknown:
        return errors.OutcomeUnknown(
            f"side effect {self.key} of thread {self.thread_id}: the tool ran but storing its result could not be "
            f"confirmed ({type(error).__name__}: {error}); the reservation is left to its lease, so the next "
            "attempt sees taken_over",
            sqlstate=getattr(error, "sqlstate", None) or "",
            cause=error if isinstance(error, psycopg.Error) else None,
        )

    def finish(self, result: Any) -> Any:
        """Stores the tool's result (fenced); returns it as stored (JSON), as a retry will see it.
        A finish lost with its connection is tried again for up to ``retry``; then
        :class:`~agent_state.errors.OutcomeUnknown`, the reservation left to its lease."""
        call = self._require()
        self._ran = True
        delays, deadline = self.retry.delays(), self.retry.deadline(time.monotonic())
        while True:
            try:
                row = self.client.finish_side_effect(self.thread_id, self.key, result, self.job_id, self._token(call))
                break
            except errors.LeaseLost as error:
                self._lost(error)
                raise
            except Exception as error:
                if not is_connection_error(error):
                    raise
                delay = next(delays, None)
                if delay is None or time.monotonic() + delay > deadline:
                    raise self._unconfirmed(error) from error
                time.sleep(delay)
        call.result, call.finished = row.result, True
        return row.result

    def abandon(self, error: str | None = None) -> None:
        call = self._require()
        self.client.abandon_side_effect(self.thread_id, self.key, self.job_id, self._token(call), error)

    def _require(self) -> SideEffectCall:
        if self.call is None:
            raise RuntimeError("begin() first")
        return self.call

    def __enter__(self) -> SideEffectCall:
        return self.begin()

    def _abandons(self, error: Any) -> bool:
        """Only a tool that raised gives its reservation back. Once the tool returned (finish was
        called), whatever happens the reservation stays: abandoning it would let the next attempt
        run the tool again unflagged."""
        call = self.call
        if call is None or call.done or call.finished or error is None or self._ran:
            return False
        return not isinstance(error, errors.LeaseLost)

    def __exit__(self, kind: Any, error: Any, tb: Any) -> None:
        try:
            if self._abandons(error):
                with contextlib.suppress(errors.AgentStateError, psycopg.Error):  # lost meanwhile: taken over later
                    self.abandon(f"{type(error).__name__}: {error}"[:2000])
        finally:
            self._trace_end(error)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self as call:
                if call.done:
                    return call.result
                return self.finish(fn(call, *args, **kwargs))

        return wrapper

    def run(self, fn: Callable[[SideEffectCall], Any]) -> Any:
        """``fn(call)`` once per key: the stored result on a retry."""
        return self(fn)()

    # -- async --------------------------------------------------------------------------------------

    async def abegin(self) -> SideEffectCall:
        self._trace_begin()
        try:
            begun = await self.client.begin_side_effect(
                self.thread_id, self.key, self.request, self.job_id, self.fencing_token, self.reservation
            )
        except errors.LeaseLost as error:
            self._lost(error)
            self._trace_end(error)
            raise
        except BaseException as error:
            self._trace_end(error)
            raise
        self._trace_begun(begun)
        if begun.outcome == "busy":
            busy = SideEffectBusy(f"side effect {self.key} of thread {self.thread_id} is held by a live claim")
            self._trace_end(busy)
            raise busy
        self.call = SideEffectCall(self.key, begun.attempt, begun.taken_over, begun.outcome == "done", begun.result)
        return self.call

    async def afinish(self, result: Any) -> Any:
        """:meth:`finish`, awaited."""
        call = self._require()
        self._ran = True
        delays, deadline = self.retry.delays(), self.retry.deadline(time.monotonic())
        while True:
            try:
                row = await self.client.finish_side_effect(
                    self.thread_id, self.key, result, self.job_id, self._token(call)
                )
                break
            except errors.LeaseLost as error:
                self._lost(error)
                raise
            except Exception as error:
                if not is_connection_error(error):
                    raise
                delay = next(delays, None)
                if delay is None or time.monotonic() + delay > deadline:
                    raise self._unconfirmed(error) from error
                await asyncio.sleep(delay)
        call.result, call.finished = row.result, True
        return row.result

    async def __aenter__(self) -> SideEffectCall:
        return await self.abegin()

    async def __aexit__(self, kind: Any, error: Any, tb: Any) -> None:
        call = self.call
        try:
            if call is None or not self._abandons(error):
                return
            with contextlib.suppress(errors.AgentStateError, psycopg.Error):
                await self.client.abandon_side_effect(
                    self.thread_id, self.key, self.job_id, self._token(call), f"{type(error).__name__}: {error}"[:2000]
                )
        finally:
            self._trace_end(error)

    async def arun(self, fn: Callable[[SideEffectCall], Awaitable[Any]]) -> Any:
        """``await fn(call)`` once per key: the stored result on a retry."""
        async with self as call:
            if call.done:
                return call.result
            return await self.afinish(await fn(call))
