"""The sync client against the real database: one method per SQL function, typed rows and errors."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from agent_state import (
    AppendResult,
    Client,
    Conflict,
    InvalidArgument,
    InvalidTransition,
    Message,
    NotFound,
    Session,
    TooLarge,
)


def test_create_session_returns_a_typed_row_and_is_idempotent(client: Client, thread_id: str) -> None:
    created = client.create_session(thread_id, {"model": "m1"})
    assert isinstance(created, Session)
    assert (created.thread_id, created.status, created.config, created.last_seq) == (
        thread_id,
        "active",
        {"model": "m1"},
        0,
    )
    again = client.create_session(thread_id, {"model": "other"})
    assert again == created


def test_create_session_without_id_makes_a_fresh_one(client: Client) -> None:
    first, second = client.create_session(), client.create_session()
    assert first.thread_id != second.thread_id
    assert len(first.thread_id) == 36


def test_append_retry_returns_the_original_row(client: Client, thread_id: str) -> None:
    client.create_session(thread_id)
    first = client.append_message(thread_id, "user", {"text": "hi"}, turn=1)
    retry = client.append_message(thread_id, "user", {"text": "hi"}, turn=1)
    assert isinstance(first, AppendResult) and isinstance(first.message, Message)
    assert first.inserted and not retry.inserted
    assert retry.message == first.message
    next_turn = client.append_message(thread_id, "user", {"text": "hi"}, turn=2)
    assert next_turn.inserted and next_turn.message.seq == 2
    assert [m.seq for m in client.get_messages(thread_id)] == [1, 2]
    assert client.get_session(thread_id).last_seq == 2


def test_explicit_key_reused_for_other_content_is_a_conflict(client: Client, thread_id: str) -> None:
    client.create_session(thread_id)
    client.append_message(thread_id, "assistant", "a", idempotency_key="k1")
    with pytest.raises(Conflict) as caught:
        client.append_message(thread_id, "assistant", "b", idempotency_key="k1")
    assert caught.value.sqlstate == "AS005"


def test_token_count_given_or_estimated(client: Client, thread_id: str) -> None:
    client.create_session(thread_id)
    given = client.append_message(thread_id, "user", "x" * 40, token_count=3)
    estimated = client.append_message(thread_id, "user", "y" * 40)
    assert given.message.token_count == 3
    assert estimated.message.token_count == 11  # 42 bytes of JSON text ("y"*40 in quotes) / 4, rounded up


def test_get_messages_pages_by_seq(client: Client, thread_id: str) -> None:
    client.create_session(thread_id)
    for i in range(7):
        client.append_message(thread_id, "user", {"i": i})
    page = client.get_messages(thread_id, after_seq=2, max_rows=3)
    assert [m.seq for m in page] == [3, 4, 5]
    assert [m.content["i"] for m in page] == [2, 3, 4]


def test_events_and_status(client: Client, thread_id: str) -> None:
    client.create_session(thread_id)
    client.record_event(thread_id, "tool_call", {"name": "search"})
    client.set_session_status(thread_id, "waiting")
    done = client.set_session_status(thread_id, "completed")
    assert done.status == "completed" and done.completed_at is not None
    kinds = [e.kind for e in client.get_events(thread_id)]
    assert kinds == ["start", "tool_call", "status", "status"]
    assert [e.kind for e in client.get_events(thread_id, kinds=["tool_call"])] == ["tool_call"]
    with pytest.raises(InvalidTransition):
        client.set_session_status(thread_id, "active")
    with pytest.raises(InvalidTransition):
        client.append_message(thread_id, "user", "too late")


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda c, t: c.get_session("no-such-thread"), NotFound),
        (lambda c, t: c.append_message("no-such-thread", "user", "x"), NotFound),
        (lambda c, t: c.append_message(t, "robot", "x"), InvalidArgument),
        (lambda c, t: c.append_message(t, "user", None), InvalidArgument),
        (lambda c, t: c.append_message(t, "user", "x" * (1 << 21)), TooLarge),
        (lambda c, t: c.append_message(t, "user", "nul \x00 inside"), InvalidArgument),
        (lambda c, t: c.append_message("nul\x00thread", "user", "x"), InvalidArgument),
        (lambda c, t: c.set_session_status(t, "sleeping"), InvalidArgument),
        (lambda c, t: c.record_event(t, "Bad Kind"), InvalidArgument),
        (lambda c, t: c.get_messages(t, max_rows=0), InvalidArgument),
        (lambda c, t: c.create_session("", {}), InvalidArgument),
        (
            lambda c, t: c.create_session(None, {"not": "too big"} | {"x": "y" * (1 << 21)}),
            TooLarge,
        ),
    ],
)
def test_bad_input_raises_typed_errors_and_writes_nothing(
    client: Client,
    conn: psycopg.Connection[Any],
    thread_id: str,
    call: Any,
    error: type[Exception],
) -> None:
    client.create_session(thread_id)
    before = conn.execute(
        "select (select count(*) from ai.session_messages), (select count(*) from ai.session_events),"
        " (select count(*) from ai.agent_sessions)"
    ).fetchone()
    with pytest.raises(error):
        call(client, thread_id)
    after = conn.execute(
        "select (select count(*) from ai.session_messages), (select count(*) from ai.session_events),"
        " (select count(*) from ai.agent_sessions)"
    ).fetchone()
    assert before == after


def test_python_error_map_matches_the_sql_table(conn: psycopg.Connection[Any]) -> None:
    from agent_state.errors import ERRORS_BY_SQLSTATE

    codes = {row[0] for row in conn.execute("select sqlstate from ai.error_codes")}
    assert codes, "ai.error_codes is empty"
    assert codes <= set(ERRORS_BY_SQLSTATE), f"codes without a Python exception: {codes - set(ERRORS_BY_SQLSTATE)}"


def test_docs_list_every_error_code(conn: psycopg.Connection[Any]) -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "errors.md").read_text()
    for sqlstate, name in conn.execute("select sqlstate, name from ai.error_codes"):
        assert f"`{sqlstate}`" in doc and f"`{name}`" in doc, f"{sqlstate} {name} missing from docs/errors.md"


def test_non_autocommit_connection_commits_a_lone_call_and_joins_an_open_transaction(dsn: str, thread_id: str) -> None:
    with psycopg.connect(dsn) as conn:
        client = Client(conn)
        client.create_session(thread_id)  # outside a transaction: committed by the call
        with conn.transaction():
            client.append_message(thread_id, "user", "kept")
        try:
            with conn.transaction():
                client.append_message(thread_id, "user", "rolled back")
                raise RuntimeError("abort the caller's transaction")
        except RuntimeError:
            pass
    with psycopg.connect(dsn, autocommit=True) as other:
        rows = Client(other).get_messages(thread_id)
    assert [m.content for m in rows] == ["kept"]
