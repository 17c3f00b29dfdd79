"""Human in the loop: pause a job for a person, resume it in any process (``ai.request_human`` ...).

A worker stages an action and calls ``request_human`` (``ctx.request_human`` in a handler): the
job waits as AWAITING_HUMAN, holding no worker. A person (the session's owner, or a service
acting for it) calls ``resolve_human`` with a decision, maybe days later; the job is PENDING
again and its payload carries the decision under ``"human"``, so whichever worker claims it
next resumes from the checkpoint with the person's input. See docs/human-in-the-loop.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from ._calls import Call, T
from .models import Approval, from_row


def _approval(row: dict[str, Any]) -> Approval:
    return from_row(Approval, row)


REQUEST_HUMAN: Call[str] = Call("select ai.request_human(%s, %s, %s, %s) as value", lambda r: r["value"])
RESOLVE_HUMAN = Call("select * from ai.resolve_human(%s, %s, %s)", _approval)
PENDING_APPROVALS = Call("select * from ai.pending_approvals(%s, %s, %s)", _approval)
GET_APPROVAL = Call("select * from ai.get_approval(%s)", _approval)


def _json(value: Any) -> Jsonb:
    return Jsonb({} if value is None else value)


def human_decision(payload: Any) -> dict[str, Any] | None:
    """The person's decision a resumed job carries (``payload["human"]``), or None."""
    if isinstance(payload, dict) and isinstance(payload.get("human"), dict):
        human: dict[str, Any] = payload["human"]
        return human
    return None


class HumanInTheLoopMethods:
    """The human-in-the-loop half of :class:`~agent_state.Client`."""

    def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by Client
        raise NotImplementedError

    def request_human(self, job_id: int, fencing_token: int, checkpoint_id: str, action: Any = None) -> str:
        """``ai.request_human`` (fenced): the job waits for a person; returns the approval id."""
        return self._rows(REQUEST_HUMAN, (job_id, fencing_token, checkpoint_id, _json(action)))[0]

    def resolve_human(self, thread_id: str, checkpoint_id: str, decision: Any) -> Approval:
        """``ai.resolve_human``: stores the decision; the job is PENDING again, carrying it."""
        return self._rows(RESOLVE_HUMAN, (thread_id, checkpoint_id, _json(decision)))[0]

    def pending_approvals(
        self, owner: str | None = None, max_rows: int = 100, after_approval_id: str | None = None
    ) -> list[Approval]:
        """``ai.pending_approvals``: what waits for a person, oldest first; the next page:
        ``after_approval_id`` = the last approval's id."""
        return self._rows(PENDING_APPROVALS, (owner, max_rows, after_approval_id))

    def get_approval(self, approval_id: str) -> Approval:
        """``ai.get_approval``."""
        return self._rows(GET_APPROVAL, (approval_id,))[0]


class AsyncHumanInTheLoopMethods:
    """The human-in-the-loop half of :class:`~agent_state.AsyncClient`."""

    async def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by AsyncClient
        raise NotImplementedError

    async def request_human(self, job_id: int, fencing_token: int, checkpoint_id: str, action: Any = None) -> str:
        return (await self._rows(REQUEST_HUMAN, (job_id, fencing_token, checkpoint_id, _json(action))))[0]

    async def resolve_human(self, thread_id: str, checkpoint_id: str, decision: Any) -> Approval:
        return (await self._rows(RESOLVE_HUMAN, (thread_id, checkpoint_id, _json(decision))))[0]

    async def pending_approvals(
        self, owner: str | None = None, max_rows: int = 100, after_approval_id: str | None = None
    ) -> list[Approval]:
        return await self._rows(PENDING_APPROVALS, (owner, max_rows, after_approval_id))

    async def get_approval(self, approval_id: str) -> Approval:
        return (await self._rows(GET_APPROVAL, (approval_id,)))[0]
