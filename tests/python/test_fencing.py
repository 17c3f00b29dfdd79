"""One live writer per thread: a fenced transaction (one that began with ai.fenced_write) commits
only if, at its commit, its job is still held under its token with a lease that has not ended
(or the transaction itself finished it). Every path that takes a job from its holder therefore
fences out a transaction that is open at the time, whichever commits first:

- the taker committed first: the zombie's COMMIT fails with AS006 and nothing it wrote remains;
- the taker is still in flight when the zombie commits: the zombie's commit waits for it (seen in
  pg_stat_activity as a lock wait), then fails if it committed, or commits if it rolled back.

Paths: reap_expired, cancel_job (by the tenant), release_job and complete_job by another
transaction holding the token, the reclaim in claim_job, and the lease ending mid-transaction.
Time is the frozen clock ai.frozen_now, per connection; every wait is on a condition, bounded.
And the claim's per-thread lock is one no tenant can take (a tenant's advisory lock on the same
key starved another tenant's job before)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest

# Two connections and the frozen clock, watched through pg_stat_activity by backend pid: a real
# session each, never a pooler.
pytestmark = pytest.mark.session_features("backend pids in pg_stat_activity, the frozen clock ai.frozen_now")

T0 = "2031-01-01 00:00:00+00"
LATER = "2031-01-01 00:02:00+00"  # past the one-minute lease of the claims below
WAIT = 20.0  # seconds: bound on every wait for a condition
OPTIONS = "-c lock_timeout=30s -c statement_timeout=30s"


def _connect(dsn: str, clock: str = T0) -> psycopg.Connection[Any]:
    conn = psycopg.connect(dsn, autocommit=True, options=OPTIONS)
    conn.execute("select set_config('ai.frozen_now', %s, false)", (clock,))
    return conn


@dataclass
class Scene:
    """A thread of tenant_a with two jobs; the zombie holds the first (one-minute lease from T0)
    and has a fenced transaction open in which it wrote one row to the effects table."""

    admin: psycopg.Connection[Any]
    tenant: psycopg.Connection[Any]
    zombie: psycopg.Connection[Any]
    other: psycopg.Connection[Any]
    queue: str
    thread_id: str
    job_id: int
    token: int
    sibling_id: int
    effects: str

    def effect_rows(self) -> list[tuple[int, int, str]]:
        return self.admin.execute(f"select job_id, token, who from public.{self.effects} order by who").fetchall()

    def fenced_effect(self, conn: psycopg.Connection[Any], job_id: int, token: int, who: str) -> None:
        conn.execute("select ai.fenced_write(%s, %s)", (job_id, token))
        conn.execute(f"insert into public.{self.effects} values (%s, %s, %s)", (job_id, token, who))


@pytest.fixture
def scene(dsn: str, role_dsn: Callable[[str], str]) -> Iterator[Scene]:
    effects = f"fence_effects_{uuid.uuid4().hex[:8]}"
    queue = f"fence-{uuid.uuid4().hex[:8]}"
    thread_id = f"fence-{uuid.uuid4()}"
    with (
        _connect(dsn) as admin,
        _connect(role_dsn("tenant_a")) as tenant,
        _connect(role_dsn("app_service")) as zombie,
        _connect(role_dsn("app_service"), LATER) as other,
    ):
        admin.execute(f"create table public.{effects} (job_id bigint, token bigint, who text not null)")
        admin.execute(f"grant insert, select on public.{effects} to app_service")
        tenant.execute("select ai.create_session(%s)", (thread_id,))
        job_id = tenant.execute("select (ai.enqueue_job(%s, queue => %s)).job_id", (thread_id, queue)).fetchone()[0]  # type: ignore[index]
        sibling_id = tenant.execute("select (ai.enqueue_job(%s, queue => %s)).job_id", (thread_id, queue)).fetchone()[0]  # type: ignore[index]
        claim = "select job_id, fencing_token from ai.claim_job('zombie', '1 minute', %s)"
        row = zombie.execute(claim, (queue,)).fetchone()
        assert row is not None and row[0] == job_id
        s = Scene(admin, tenant, zombie, other, queue, thread_id, job_id, row[1], sibling_id, effects)
        zombie.execute("begin")
        s.fenced_effect(zombie, job_id, s.token, "zombie")
        try:
            yield s
        finally:
            for conn in (zombie, other, tenant):
                if not conn.closed:
                    conn.execute("rollback")
            admin.execute(f"drop table public.{effects}")


def _commit_fails_with_lease_lost(conn: psycopg.Connection[Any]) -> None:
    with pytest.raises(psycopg.Error) as caught:
        conn.execute("commit")
    assert caught.value.sqlstate == "AS006", caught.value


def _new_holder_writes(s: Scene, conn: psycopg.Connection[Any]) -> tuple[int, int]:
    """Claims the thread's next job (the reclaimed one or its sibling) and commits a fenced write."""
    row = conn.execute("select job_id, fencing_token from ai.claim_job('new', '1 minute', %s)", (s.queue,)).fetchone()
    assert row is not None, "the job was taken from the zombie, so the thread is free again"
    conn.execute("begin")
    s.fenced_effect(conn, row[0], row[1], "new")
    conn.execute("commit")
    return row[0], row[1]


# Each taker: what it does on the connection given (clock LATER: the zombie's lease has ended
# for it, but not for the zombie, whose clock stays at T0 unless a test moves it).
def _reap(s: Scene, conn: psycopg.Connection[Any]) -> None:
    assert conn.execute("select ai.reap_expired(%s)", (s.queue,)).fetchone() == (1,)


def _cancel(s: Scene, conn: psycopg.Connection[Any]) -> None:
    assert conn.execute("select (ai.cancel_job(%s)).status", (s.job_id,)).fetchone() == ("CANCELLED",)


def _release(s: Scene, conn: psycopg.Connection[Any]) -> None:
    conn.execute("select set_config('ai.frozen_now', %s, false)", (T0,))  # the holder's own clock
    assert conn.execute("select (ai.release_job(%s, %s)).status", (s.job_id, s.token)).fetchone() == ("PENDING",)


def _complete(s: Scene, conn: psycopg.Connection[Any]) -> None:
    conn.execute("select set_config('ai.frozen_now', %s, false)", (T0,))
    assert conn.execute("select (ai.complete_job(%s, %s)).status", (s.job_id, s.token)).fetchone() == ("COMPLETED",)


def _reclaim(s: Scene, conn: psycopg.Connection[Any]) -> None:
    claim = "select job_id, fencing_token from ai.claim_job('reclaimer', '1 minute', %s)"
    row = conn.execute(claim, (s.queue,)).fetchone()
    assert row == (s.job_id, s.token + 1), "an expired lease is reclaimed even while its holder's transaction is open"


TAKERS: dict[str, tuple[Callable[[Scene, psycopg.Connection[Any]], None], str]] = {
    "reap": (_reap, "other"),
    "cancel": (_cancel, "tenant"),
    "release by another": (_release, "other"),
    "complete by another": (_complete, "other"),
    "reclaim in claim_job": (_reclaim, "other"),
}


@pytest.mark.parametrize("path", list(TAKERS))
def test_a_job_taken_from_its_holder_fails_the_holders_open_fenced_transaction(scene: Scene, path: str) -> None:
    take, on = TAKERS[path]
    taker = scene.tenant if on == "tenant" else scene.other
    take(scene, taker)  # does not wait for the zombie's open transaction
    if path != "reclaim in claim_job":
        _new_holder_writes(scene, scene.other)
    else:  # the reclaimer is the new holder
        token = scene.token + 1
        scene.other.execute("begin")
        scene.fenced_effect(scene.other, scene.job_id, token, "new")
        scene.other.execute("commit")
    _commit_fails_with_lease_lost(scene.zombie)
    rows = scene.effect_rows()
    assert [r[2] for r in rows] == ["new"], "only the new holder's write remains: one live writer"


def _wait_for_lock_wait(admin: psycopg.Connection[Any], pid: int, outcome: list[BaseException | None]) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and not outcome:
        row = admin.execute("select wait_event_type from pg_stat_activity where pid = %s", (pid,)).fetchone()
        if row is not None and row[0] == "Lock":
            return
        time.sleep(0.01)  # polling a condition, not racing a lease
    pytest.fail(f"the fenced COMMIT did not wait for the taker in flight (it ended with {outcome})")


def _commit_in_background(conn: psycopg.Connection[Any]) -> tuple[threading.Thread, list[BaseException | None]]:
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            conn.execute("commit")
            outcome.append(None)
        except BaseException as error:  # reported by the caller
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


@pytest.mark.parametrize("taker_commits", [True, False], ids=["taker commits", "taker rolls back"])
@pytest.mark.parametrize("path", list(TAKERS))
def test_a_fenced_commit_waits_for_a_taker_in_flight_then_fails_if_it_committed(
    scene: Scene, path: str, taker_commits: bool
) -> None:
    take, on = TAKERS[path]
    taker = scene.tenant if on == "tenant" else scene.other
    taker.execute("begin")
    take(scene, taker)
    zombie_pid = scene.zombie.info.backend_pid
    thread, outcome = _commit_in_background(scene.zombie)
    _wait_for_lock_wait(scene.admin, zombie_pid, outcome)
    taker.execute("commit" if taker_commits else "rollback")
    thread.join(WAIT)
    assert not thread.is_alive() and len(outcome) == 1
    if taker_commits:
        assert isinstance(outcome[0], psycopg.Error) and outcome[0].sqlstate == "AS006", outcome[0]
        assert scene.effect_rows() == []
    else:
        assert outcome[0] is None, outcome[0]
        assert [r[2] for r in scene.effect_rows()] == ["zombie"]


def test_a_fenced_transaction_cannot_commit_after_its_lease_ended(scene: Scene) -> None:
    scene.zombie.execute("select set_config('ai.frozen_now', %s, false)", (LATER,))
    _commit_fails_with_lease_lost(scene.zombie)
    assert scene.effect_rows() == []
    # nobody took the job meanwhile: the next claim reclaims it under a new token
    _reclaim(scene, scene.other)


def test_a_lease_renewed_by_another_connection_keeps_the_fenced_transaction_alive(scene: Scene) -> None:
    scene.other.execute("select set_config('ai.frozen_now', %s, false)", (T0,))
    scene.other.execute("select ai.renew_lease(%s, %s, '10 minutes')", (scene.job_id, scene.token))  # not blocked
    scene.zombie.execute("select set_config('ai.frozen_now', %s, false)", (LATER,))  # past the first lease only
    scene.zombie.execute("commit")
    assert [r[2] for r in scene.effect_rows()] == ["zombie"]


def test_the_holder_finishing_its_job_in_the_fenced_transaction_commits(scene: Scene) -> None:
    scene.zombie.execute("select ai.complete_job(%s, %s)", (scene.job_id, scene.token))
    scene.zombie.execute("commit")
    assert [r[2] for r in scene.effect_rows()] == ["zombie"]
    status = scene.admin.execute("select status from ai.agent_jobs where job_id = %s", (scene.job_id,)).fetchone()
    assert status == ("COMPLETED",)


def test_a_tenant_cannot_starve_another_tenants_job(dsn: str, role_dsn: Callable[[str], str]) -> None:
    """Tenant B holds every lock it can reach on tenant A's thread; A's job is claimed all the same."""
    queue = f"starve-{uuid.uuid4().hex[:8]}"
    victim = f"starve-{uuid.uuid4()}"
    with (
        _connect(role_dsn("tenant_a")) as a,
        _connect(role_dsn("tenant_b")) as b,
        _connect(role_dsn("app_service")) as service,
    ):
        a.execute("select ai.create_session(%s)", (victim,))
        job_id = a.execute("select (ai.enqueue_job(%s, queue => %s)).job_id", (victim, queue)).fetchone()[0]  # type: ignore[index]
        b.execute("begin")
        # the advisory key the claim used to take for a thread
        b.execute("select pg_advisory_xact_lock(1634296929, hashtext(%s))", (victim,))
        # the victim's session row: not B's to see, let alone lock
        try:
            b.execute("savepoint s")
            locked = b.execute(
                "select thread_id from ai.agent_sessions where thread_id = %s for no key update", (victim,)
            ).fetchall()
            assert locked == []
        except psycopg.errors.InsufficientPrivilege:
            b.execute("rollback to savepoint s")
        row = service.execute("select job_id from ai.claim_job('w', '1 minute', %s)", (queue,)).fetchone()
        b.execute("rollback")
        assert row == (job_id,), "tenant B's locks kept tenant A's job from being claimed"
