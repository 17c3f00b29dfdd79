"""The messages of a session and their compaction (``ai.append_message_idempotent`` ...
``ai.record_compaction``), sync and async.

:class:`~agent_state.Client` and :class:`~agent_state.AsyncClient` inherit these methods; each is
one round trip, ``select * from ai.<function>(...)``, like every other client method.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from ._calls import Call, Row, T, _json
from .models import (
    AppendResult,
    ContextWindow,
    Message,
    MessageRole,
    NewMessage,
    WindowMessage,
    from_row,
)


def _append_result(row: Row) -> AppendResult:
    return AppendResult(message=from_row(Message, row), inserted=row["inserted"])


APPEND_MESSAGE = Call("select * from ai.append_message_idempotent(%s, %s, %s, %s, %s, %s)", _append_result)


# The fenced append: one statement (ai.fenced_write inside), for a worker in autocommit.
APPEND_MESSAGE_FENCED = Call(
    "select * from ai.append_message_idempotent(%s, %s, %s, %s, %s, %s, %s, %s)", _append_result
)


GET_MESSAGES = Call("select * from ai.get_messages(%s, %s, %s)", lambda r: from_row(Message, r))


APPEND_MESSAGES = Call("select * from ai.append_messages(%s, %s)", _append_result)


VISIBLE_MESSAGES = Call("select * from ai.visible_messages(%s, %s, %s)", lambda r: from_row(Message, r))


HIDE_LAST_MESSAGE = Call(
    "select * from ai.hide_last_message(%s)", lambda r: None if r["seq"] is None else from_row(Message, r)
)


HIDE_MESSAGES: Call[int] = Call("select ai.hide_messages(%s) as hidden", lambda r: r["hidden"])


def _append_messages_args(thread_id: str, messages: Sequence[NewMessage]) -> tuple[Any, ...]:
    batch = [{k: v for k, v in _message_fields(m).items() if v is not None} for m in messages]
    return (thread_id, Jsonb(batch))


def _message_fields(m: NewMessage) -> dict[str, Any]:
    return {
        "role": m.role,
        "content": m.content,
        "turn": m.turn,
        "idempotency_key": m.idempotency_key,
        "token_count": m.token_count,
    }


def _context_window(row: Row) -> ContextWindow:
    messages = [WindowMessage(**m) for m in row["messages"]]
    return ContextWindow(**{**row, "messages": messages})


CONTEXT_WINDOW = Call("select * from ai.context_window(%s, %s, %s, %s::real)", _context_window)


RECORD_COMPACTION = Call("select * from ai.record_compaction(%s, %s, %s, %s)", _append_result)


def _append_args(
    thread_id: str,
    role: MessageRole,
    content: Any,
    turn: int | None,
    idempotency_key: str | None,
    token_count: int | None,
) -> tuple[Any, ...]:
    return (thread_id, role, _json(content), turn, idempotency_key, token_count)


# <async>
class AsyncMessageMethods:
    """The messages half of :class:`~agent_state.AsyncClient`."""

    async def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by AsyncClient
        raise NotImplementedError

    async def _one(self, call: Call[T], params: Sequence[Any]) -> T:  # provided by AsyncClient
        raise NotImplementedError

    async def append_message(
        self,
        thread_id: str,
        role: MessageRole,
        content: Any,
        turn: int | None = None,
        idempotency_key: str | None = None,
        token_count: int | None = None,
        *,
        job_id: int | None = None,
        fencing_token: int | None = None,
    ) -> AppendResult:
        """``ai.append_message_idempotent``: appends once; a retry returns the original row. With
        ``job_id`` and ``fencing_token`` it is a fenced write, one statement: AS006 (LeaseLost) when
        the lease is lost, and checked again when the transaction commits."""
        args = _append_args(thread_id, role, content, turn, idempotency_key, token_count)
        if job_id is None and fencing_token is None:
            return await self._one(APPEND_MESSAGE, args)
        return await self._one(APPEND_MESSAGE_FENCED, (*args, job_id, fencing_token))

    async def get_messages(self, thread_id: str, after_seq: int = 0, max_rows: int = 1000) -> list[Message]:
        """``ai.get_messages``: messages with seq > after_seq, oldest first."""
        return await self._rows(GET_MESSAGES, (thread_id, after_seq, max_rows))

    async def append_messages(self, thread_id: str, messages: Sequence[NewMessage]) -> list[AppendResult]:
        """``ai.append_messages``: a batch in one transaction, each appended once (retries return
        the originals with ``inserted=False``)."""
        return await self._rows(APPEND_MESSAGES, _append_messages_args(thread_id, messages))

    async def visible_messages(
        self, thread_id: str, max_rows: int | None = None, before_seq: int | None = None
    ) -> list[Message]:
        """``ai.visible_messages``: the newest ``max_rows`` (0 to 10,000; None: the server's page of
        1,000) messages before ``before_seq`` that are not hidden and not compaction summaries,
        oldest first. The page before: ``before_seq`` = the first message's seq."""
        return await self._rows(VISIBLE_MESSAGES, (thread_id, max_rows, before_seq))

    async def hide_last_message(self, thread_id: str) -> Message | None:
        """``ai.hide_last_message``: hides the newest visible message and returns it (None when
        there is none). The message itself stays."""
        return await self._one(HIDE_LAST_MESSAGE, (thread_id,))

    async def hide_messages(self, thread_id: str) -> int:
        """``ai.hide_messages``: hides every visible message; returns how many."""
        return await self._one(HIDE_MESSAGES, (thread_id,))

    async def context_window(
        self, thread_id: str, window_tokens: int, keep_last: int = 20, threshold: float = 0.7
    ) -> ContextWindow:
        """``ai.context_window``: the newest summary plus every message after it, and whether to compact."""
        return await self._one(CONTEXT_WINDOW, (thread_id, window_tokens, keep_last, threshold))

    async def record_compaction(
        self, thread_id: str, summary: str, through_seq: int, summary_tokens: int | None = None
    ) -> AppendResult:
        """``ai.record_compaction``: stores a summary of everything up to through_seq; originals stay."""
        return await self._one(RECORD_COMPACTION, (thread_id, summary, through_seq, summary_tokens))


# </async>


# <sync> generated by scripts/async_to_sync.py from the <async> block above: do not edit
class MessageMethods:
    """The messages half of :class:`~agent_state.Client`."""

    def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by Client
        raise NotImplementedError

    def _one(self, call: Call[T], params: Sequence[Any]) -> T:  # provided by Client
        raise NotImplementedError

    def append_message(
        self,
        thread_id: str,
        role: MessageRole,
        content: Any,
        turn: int | None = None,
        idempotency_key: str | None = None,
        token_count: int | None = None,
        *,
        job_id: int | None = None,
        fencing_token: int | None = None,
    ) -> AppendResult:
        """``ai.append_message_idempotent``: appends once; a retry returns the original row. With
        ``job_id`` and ``fencing_token`` it is a fenced write, one statement: AS006 (LeaseLost) when
        the lease is lost, and checked again when the transaction commits."""
        args = _append_args(thread_id, role, content, turn, idempotency_key, token_count)
        if job_id is None and fencing_token is None:
            return self._one(APPEND_MESSAGE, args)
        return self._one(APPEND_MESSAGE_FENCED, (*args, job_id, fencing_token))

    def get_messages(self, thread_id: str, after_seq: int = 0, max_rows: int = 1000) -> list[Message]:
        """``ai.get_messages``: messages with seq > after_seq, oldest first."""
        return self._rows(GET_MESSAGES, (thread_id, after_seq, max_rows))

    def append_messages(self, thread_id: str, messages: Sequence[NewMessage]) -> list[AppendResult]:
        """``ai.append_messages``: a batch in one transaction, each appended once (retries return
        the originals with ``inserted=False``)."""
        return self._rows(APPEND_MESSAGES, _append_messages_args(thread_id, messages))

    def visible_messages(
        self, thread_id: str, max_rows: int | None = None, before_seq: int | None = None
    ) -> list[Message]:
        """``ai.visible_messages``: the newest ``max_rows`` (0 to 10,000; None: the server's page of
        1,000) messages before ``before_seq`` that are not hidden and not compaction summaries,
        oldest first. The page before: ``before_seq`` = the first message's seq."""
        return self._rows(VISIBLE_MESSAGES, (thread_id, max_rows, before_seq))

    def hide_last_message(self, thread_id: str) -> Message | None:
        """``ai.hide_last_message``: hides the newest visible message and returns it (None when
        there is none). The message itself stays."""
        return self._one(HIDE_LAST_MESSAGE, (thread_id,))

    def hide_messages(self, thread_id: str) -> int:
        """``ai.hide_messages``: hides every visible message; returns how many."""
        return self._one(HIDE_MESSAGES, (thread_id,))

    def context_window(
        self, thread_id: str, window_tokens: int, keep_last: int = 20, threshold: float = 0.7
    ) -> ContextWindow:
        """``ai.context_window``: the newest summary plus every message after it, and whether to compact."""
        return self._one(CONTEXT_WINDOW, (thread_id, window_tokens, keep_last, threshold))

    def record_compaction(
        self, thread_id: str, summary: str, through_seq: int, summary_tokens: int | None = None
    ) -> AppendResult:
        """``ai.record_compaction``: stores a summary of everything up to through_seq; originals stay."""
        return self._one(RECORD_COMPACTION, (thread_id, summary, through_seq, summary_tokens))


# </sync>
