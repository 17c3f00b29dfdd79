"""A session store for the OpenAI Agents SDK on agent-state: ``AgentStateSession``.

It implements the SDK's ``Session`` protocol (``openai-agents`` 0.24: ``get_items``,
``add_items``, ``pop_item``, ``clear_session``, ``session_id``, ``session_settings``) on
``ai.session_messages``, the same append-only message history every other part of agent-state
reads (context windows, compaction, replay, archive)::

    from agents import Agent, Runner
    from psycopg_pool import AsyncConnectionPool
    from agent_state.openai_agents import AgentStateSession

    async with AsyncConnectionPool(DB_URL, kwargs={"autocommit": True}) as pool:
        session = AgentStateSession("conversation-42", pool)
        await Runner.run(agent, "Hello", session=session)

What differs from the SDK's SQLite session, on purpose:

- **Nothing is deleted.** ``pop_item`` and ``clear_session`` *hide* items (``ai.hide_last_message``,
  ``ai.hide_messages``): ``get_items`` no longer returns them, but the originals stay in
  ``ai.session_messages`` for audit and replay, as compaction keeps them.
- **A retried ``add_items`` writes nothing twice.** Each call is one transaction
  (``ai.append_messages``) whose items carry keys made from one batch id; when the connection
  fails before the reply arrives, the call is sent again with the same keys and the items that
  committed the first time are returned, not appended again.
- **Compaction summaries are not items.** A summary written by ``ai.record_compaction`` is left
  out of ``get_items``. The SDK's ``OpenAIResponsesCompactionSession`` can wrap this session (it
  replaces history with ``clear_session`` + ``add_items``, so the pre-compaction items stay hidden,
  not lost); ``run_compaction`` itself calls OpenAI's compaction endpoint, which a database
  session cannot do for it, so this class does not offer it.

Each item is stored whole as the message's JSON content; its role is derived from the item
(user, assistant, system for system/developer messages, tool_call for function and tool calls,
tool_result for their outputs). The thread is created on the first ``add_items``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from agents.memory.session_settings import SessionSettings, resolve_session_limit
from psycopg_pool import AsyncConnectionPool

from .client import AsyncClient
from .errors import NotFound
from .models import Message, MessageRole, NewMessage

__all__ = ["AgentStateSession", "item_role"]

# How many times add_items sends its batch again after a connection error (same keys each time).
_SEND_ATTEMPTS = 3
#: rows per call of ai.visible_messages (its own bound is 10,000)
_PAGE = 1000

_ROLES: dict[str, MessageRole] = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


def item_role(item: Any) -> MessageRole:
    """The message role an SDK item is stored under (see the module's docstring)."""
    if not isinstance(item, dict):
        return "assistant"
    role = item.get("role")
    if isinstance(role, str) and role in _ROLES:
        return _ROLES[role]
    kind = item.get("type")
    if isinstance(kind, str):
        if kind.endswith("_output"):
            return "tool_result"
        if kind.endswith("_call") or kind.endswith("_call_request"):
            return "tool_call"
    return "assistant"


class AgentStateSession:
    """The OpenAI Agents SDK ``Session`` protocol on agent-state (see the module's docstring).

    ``source`` is an ``AsyncConnectionPool``, an ``AsyncConnection`` (autocommit, or each call
    commits by itself), an ``AsyncClient``, or a conninfo string (a connection is opened for each
    call and closed after it: convenient, as ``SQLiteSession(path)`` is, and usable from any event
    loop, but a pool is the choice for a server). As a tenant (a member of ``ai_user``) the session
    sees only that tenant's threads; as a service acting for a user, pass a client bound with
    ``AsyncClient.acting_as``.
    """

    def __init__(
        self,
        session_id: str,
        source: AsyncClient | AsyncConnectionPool | psycopg.AsyncConnection[Any] | str,
        *,
        session_settings: SessionSettings | None = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        self.session_id = session_id
        self.session_settings: SessionSettings | None = session_settings or SessionSettings()
        self._conninfo = source if isinstance(source, str) else None
        self._shared: AsyncClient | None = None
        if not isinstance(source, str):
            self._shared = source if isinstance(source, AsyncClient) else AsyncClient(source)
        self._config = config

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[AsyncClient]:
        if self._shared is not None:
            yield self._shared
            return
        assert self._conninfo is not None
        async with await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True) as conn:
            yield AsyncClient(conn)

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The newest ``limit`` visible items (all when None and no settings limit), oldest first."""
        limit = resolve_session_limit(limit, self.session_settings)
        rows: list[Message] = []
        try:
            async with self._client() as client:
                # ai.visible_messages returns one bounded page: read back page by page
                before: int | None = None
                while True:
                    size = _PAGE if limit is None else min(limit - len(rows), _PAGE)
                    page = await client.visible_messages(self.session_id, size, before) if size > 0 else []
                    rows[:0] = page
                    if len(page) < size or size == 0:
                        break
                    before = page[0].seq
        except NotFound:
            return []
        return [row.content for row in rows]

    async def add_items(self, items: list[Any]) -> None:
        """Appends the items in one transaction; resent with the same keys after a connection error."""
        if not items:
            return
        batch = uuid.uuid4().hex
        messages = [
            NewMessage(role=item_role(item), content=item, idempotency_key=f"agents:{batch}:{i}")
            for i, item in enumerate(items)
        ]
        for attempt in range(1, _SEND_ATTEMPTS + 1):
            try:
                await self._append(messages)
                return
            except psycopg.OperationalError:
                if attempt == _SEND_ATTEMPTS:
                    raise

    async def _append(self, messages: list[NewMessage]) -> None:
        async with self._client() as client:
            try:
                await client.append_messages(self.session_id, messages)
            except NotFound:
                # The first items of a new conversation: create the thread (idempotent), then append.
                await client.create_session(self.session_id, self._config)
                await client.append_messages(self.session_id, messages)

    async def pop_item(self) -> Any | None:
        """Hides the newest visible item and returns it; None when there is none."""
        try:
            async with self._client() as client:
                message = await client.hide_last_message(self.session_id)
        except NotFound:
            return None
        return None if message is None else message.content

    async def clear_session(self) -> None:
        """Hides every item of the session; the messages themselves stay."""
        try:
            async with self._client() as client:
                await client.hide_messages(self.session_id)
        except NotFound:
            return
