"""What the model was given: the documents retrieved for each turn (``ai.record_retrieval``,
``ai.get_turn_context``).

Record the retrieved items (ids, scores, text or references: any JSON objects) before the model
call that uses them, under the turn number the turn's messages carry; read them back with the
turn's messages for an audit or a replay::

    client.record_retrieval(thread_id, turn=3, documents=[{"id": "doc-7", "score": 0.82}])
    context = client.get_turn_context(thread_id, 3)   # context.messages, context.retrievals
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from ._calls import Call, T
from .models import RetrievalRecord, TurnContext, from_row

__all__ = ["AsyncRetrievalMethods", "RetrievalMethods"]

RECORD_RETRIEVAL = Call(
    "select * from ai.record_retrieval(%s, %s, %s, %s, %s, %s)", lambda r: from_row(RetrievalRecord, r)
)
GET_TURN_CONTEXT = Call("select * from ai.get_turn_context(%s, %s)", lambda r: from_row(TurnContext, r))


def _record_args(
    thread_id: str,
    turn: int,
    documents: Sequence[dict[str, Any]],
    idempotency_key: str | None,
    job_id: int | None,
    fencing_token: int | None,
) -> tuple[Any, ...]:
    return (thread_id, turn, Jsonb(list(documents)), idempotency_key, job_id, fencing_token)


class RetrievalMethods:
    """The retrieval half of :class:`~agent_state.Client`."""

    def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by Client
        raise NotImplementedError

    def record_retrieval(
        self,
        thread_id: str,
        turn: int,
        documents: Sequence[dict[str, Any]],
        idempotency_key: str | None = None,
        job_id: int | None = None,
        fencing_token: int | None = None,
    ) -> RetrievalRecord:
        """``ai.record_retrieval``: the documents retrieved for a turn, once per key."""
        args = _record_args(thread_id, turn, documents, idempotency_key, job_id, fencing_token)
        return self._rows(RECORD_RETRIEVAL, args)[0]

    def get_turn_context(self, thread_id: str, turn: int) -> TurnContext:
        """``ai.get_turn_context``: a turn's messages and retrievals in one round trip."""
        return self._rows(GET_TURN_CONTEXT, (thread_id, turn))[0]


class AsyncRetrievalMethods:
    """The retrieval half of :class:`~agent_state.AsyncClient` (same names as :class:`RetrievalMethods`)."""

    async def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by AsyncClient
        raise NotImplementedError

    async def record_retrieval(
        self,
        thread_id: str,
        turn: int,
        documents: Sequence[dict[str, Any]],
        idempotency_key: str | None = None,
        job_id: int | None = None,
        fencing_token: int | None = None,
    ) -> RetrievalRecord:
        args = _record_args(thread_id, turn, documents, idempotency_key, job_id, fencing_token)
        return (await self._rows(RECORD_RETRIEVAL, args))[0]

    async def get_turn_context(self, thread_id: str, turn: int) -> TurnContext:
        return (await self._rows(GET_TURN_CONTEXT, (thread_id, turn)))[0]
