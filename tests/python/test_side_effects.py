"""The tool-call ledger from Python: keys, the side_effect decorator and context manager, takeover,
abandon, busy, fencing, and a hypothesis model of two workers racing for one key."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_state import (
    Client,
    KeyReused,
    LeaseLost,
    NotFound,
    NotReserved,
    SideEffectBusy,
    SideEffectCall,
    idempotency_key,
    side_effect,
)

pytestmark = pytest.mark.session_features("the frozen clock ai.frozen_now is a session setting")

T0 = datetime(2030, 1, 1, tzinfo=timezone.utc)


def _freeze(conn: psycopg.Connection[Any], at: datetime) -> None:
    conn.execute("select set_config('ai.frozen_now', %s, false)", (at.isoformat(),))


@pytest.fixture
def service(role_dsn: Callable[[str], str]):  # type: ignore[no-untyped-def]
    with psycopg.connect(role_dsn("app_service"), autocommit=True) as conn:
        _freeze(conn, T0)
        yield conn


def _claimed(client: Client, thread_id: str, lease: timedelta = timedelta(seconds=10)) -> Any:
    queue = f"se-{uuid.uuid4().hex[:8]}"
    client.create_session(thread_id)
    client.enqueue_job(thread_id, {}, queue=queue, max_attempts=1000)
    job = client.claim_job("w1", lease, queue)
    assert job is not None
    return job, queue


@pytest.mark.parametrize(
    "parts",
    [("charge", "u1", 100), ("a", None), ("a", ""), ("ab", "c"), ("a", "bc"), ("é", "日本"), (None,)],
)
def test_the_python_key_is_the_sql_key(client: Client, parts: tuple[Any, ...]) -> None:
    assert idempotency_key(*parts) == client.idempotency_key(*parts)


def test_decorator_runs_the_tool_once_and_returns_the_recorded_result_on_retry(service, thread_id: str) -> None:  # type: ignore[no-untyped-def]
    client = Client(service)
    job, _ = _claimed(client, thread_id)
    calls: list[str] = []

    def pay(call: SideEffectCall, amount: int) -> dict[str, Any]:
        calls.append(call.key)
        return {"charged": amount, "key": call.key}

    scope = dict(job_id=job.job_id, fencing_token=job.fencing_token)
    first = side_effect(client, thread_id, "pay", "u1", 5, **scope)(pay)(5)
    again = side_effect(client, thread_id, "pay", "u1", 5, **scope)(pay)(5)
    assert first == again == {"charged": 5, "key": idempotency_key("pay", "u1", 5)}
    assert calls == [idempotency_key("pay", "u1", 5)], "the tool ran once and got the key"
    row = client.get_side_effect(thread_id, calls[0])
    assert (row.status, row.result, row.attempt) == ("done", first, 1)


def test_a_new_claim_takes_over_a_dead_workers_reservation_and_is_told(service, thread_id: str) -> None:  # type: ignore[no-untyped-def]
    client = Client(service)
    job, queue = _claimed(client, thread_id)
    dead = side_effect(client, thread_id, "mail", job_id=job.job_id, fencing_token=job.fencing_token)
    assert dead.begin().taken_over is False  # ... and the worker dies before finishing
    with pytest.raises(SideEffectBusy):
        side_effect(client, thread_id, "mail").begin()
    _freeze(service, T0 + timedelta(seconds=11))
    job2 = client.claim_job("w2", timedelta(seconds=10), queue)
    assert job2 is not None and job2.fencing_token > job.fencing_token
    seen: list[bool] = []

    def send(call: SideEffectCall) -> str:
        seen.append(call.taken_over)
        return "sent"

    assert (
        side_effect(client, thread_id, "mail", job_id=job2.job_id, fencing_token=job2.fencing_token).run(send) == "sent"
    )
    assert seen == [True]
    with pytest.raises(LeaseLost):
        dead.finish("late")
    assert client.get_side_effect(thread_id, idempotency_key("mail")).result == "sent"


def test_a_tool_that_raises_abandons_and_the_next_try_runs_it_again(service, thread_id: str) -> None:  # type: ignore[no-untyped-def]
    client = Client(service)
    job, _ = _claimed(client, thread_id)
    scope = dict(job_id=job.job_id, fencing_token=job.fencing_token)

    def declined(call: SideEffectCall) -> None:
        raise RuntimeError("card declined")

    with pytest.raises(RuntimeError):
        side_effect(client, thread_id, "pay", **scope).run(declined)
    row = client.get_side_effect(thread_id, idempotency_key("pay"))
    assert (row.status, row.last_error) == ("abandoned", "RuntimeError: card declined")
    assert side_effect(client, thread_id, "pay", **scope).run(lambda call: (call.attempt, call.taken_over)) == [
        2,
        False,
    ]


def test_context_manager_and_errors(service, thread_id: str) -> None:  # type: ignore[no-untyped-def]
    client = Client(service)
    client.create_session(thread_id)
    scope = side_effect(client, thread_id, "sms", request={"to": "+1"})
    with scope as call:
        assert not call.done
        scope.finish({"sid": 1})
    with side_effect(client, thread_id, "sms", request={"to": "+1"}) as call:
        assert call.done and call.result == {"sid": 1}
    with pytest.raises(KeyReused):
        side_effect(client, thread_id, "sms", request={"to": "+2"}).begin()
    with pytest.raises(NotReserved):
        client.finish_side_effect(thread_id, idempotency_key("sms"), {"sid": 2}, None, 1)


# -- hypothesis: two workers, one key -----------------------------------------------------------------

ACTIONS = st.lists(
    st.tuples(st.sampled_from(["claim", "begin", "finish", "abandon", "expire", "renew"]), st.sampled_from([0, 1])),
    min_size=1,
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=ACTIONS)
def test_interleavings_of_two_workers_never_execute_one_key_twice(
    dsn: str, role_dsn: Callable[[str], str], actions
) -> None:  # type: ignore[no-untyped-def]
    """Each 'execute' is one run of the tool. A second run is allowed only after an abandon (nothing
    happened) or as a takeover the caller is told about, and only once the first holder can no
    longer store a result; a key with a stored result is never run again; at most one result."""
    thread_id, queue = f"hyp-{uuid.uuid4()}", f"hyp-{uuid.uuid4().hex[:8]}"
    key = idempotency_key("charge", thread_id)
    now = T0
    with (
        psycopg.connect(role_dsn("app_service"), autocommit=True) as a,
        psycopg.connect(role_dsn("app_service"), autocommit=True) as b,
    ):
        conns = [a, b]
        clients = [Client(a), Client(b)]
        for c in conns:
            _freeze(c, now)
        clients[0].create_session(thread_id)
        clients[0].enqueue_job(thread_id, {}, queue=queue, max_attempts=1000)
        claims: list[Any] = [None, None]
        holds = [False, False]  # the worker believes it holds the reservation (got execute)
        runs = abandons = finishes = flagged = 0
        done = outstanding = False
        for action, w in actions:
            cl = clients[w]
            if action == "expire":
                now += timedelta(seconds=11)
                for c in conns:
                    _freeze(c, now)
            elif action == "claim":
                job = cl.claim_job(f"w{w}", timedelta(seconds=10), queue)
                if job is not None:
                    claims[w], holds[w] = job, False
                    other = 1 - w
                    if claims[other] is not None and claims[other].fencing_token < job.fencing_token:
                        pass  # the other claim is dead from now on
            elif claims[w] is None:
                continue
            elif action == "renew":
                try:
                    cl.renew_lease(claims[w].job_id, claims[w].fencing_token, timedelta(seconds=10))
                except LeaseLost:
                    claims[w] = None
            elif action == "begin":
                try:
                    begun = cl.begin_side_effect(thread_id, key, {}, claims[w].job_id, claims[w].fencing_token)
                except LeaseLost:
                    claims[w] = None
                    continue
                if begun.outcome == "execute" and not holds[w]:
                    assert not done, "a key with a stored result was handed out again"
                    other_alive = holds[1 - w] and claims[1 - w] is not None
                    assert not other_alive or _lost(clients[1 - w], claims[1 - w]), "two live holders"
                    assert begun.taken_over == outstanding, "a run after a holder that did not abandon is a takeover"
                    outstanding = True
                    flagged += begun.taken_over
                    runs += 1
                    holds[w], holds[1 - w] = True, False
                elif begun.outcome == "done":
                    assert done and begun.result == {"by": "done"}
            elif action in ("finish", "abandon"):
                try:
                    if action == "finish":
                        cl.finish_side_effect(thread_id, key, {"by": "done"}, claims[w].job_id, claims[w].fencing_token)
                        assert holds[w], "only the holder stores a result"
                        if not done:
                            finishes += 1
                        done = True
                    else:
                        cl.abandon_side_effect(thread_id, key, claims[w].job_id, claims[w].fencing_token)
                        assert holds[w] and not done
                        abandons += 1
                        holds[w] = outstanding = False
                except LeaseLost:
                    claims[w] = None
                except NotReserved:
                    assert not holds[w] or done
                except NotFound:
                    assert runs == 0, "a key that was begun is found"
        assert finishes <= 1
        with psycopg.connect(dsn, autocommit=True) as admin:  # services hold no table privilege
            rows = admin.execute(
                "select status, attempt, takeovers from ai.side_effects where thread_id = %s", (thread_id,)
            ).fetchall()
        if rows:
            status, attempt, takeovers = rows[0]
            assert attempt == runs and (status == "done") == done
            assert takeovers == flagged


def _lost(client: Client, job: Any) -> bool:
    try:
        client.fenced_write(job.job_id, job.fencing_token)
        return False
    except LeaseLost:
        return True


def test_racing_begins_on_a_new_key_reserve_it_once(role_dsn: Callable[[str], str]) -> None:
    """Eight connections begin the same new key at once: one 'execute', seven 'busy'."""
    import threading

    thread_id = f"race-{uuid.uuid4()}"
    with psycopg.connect(role_dsn("app_service"), autocommit=True) as conn:
        Client(conn).create_session(thread_id)
    barrier = threading.Barrier(8, timeout=30)
    outcomes: list[str] = []
    lock = threading.Lock()

    def racer() -> None:
        with psycopg.connect(role_dsn("app_service"), autocommit=True) as conn:
            client = Client(conn)
            barrier.wait()
            begun = client.begin_side_effect(thread_id, "race", {"n": 1})
            with lock:
                outcomes.append(begun.outcome)

    threads = [threading.Thread(target=racer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(outcomes) == ["busy"] * 7 + ["execute"]
