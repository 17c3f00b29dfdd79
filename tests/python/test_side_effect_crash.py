"""Exactly-once side effects with real processes: workers SIGKILL themselves before a tool call,
during it (the payment went through, the agent never heard), and after it but before the
checkpoint. After recovery every logical tool call is recorded exactly once in the ledger and in
the external payment table, and the result the agent checkpointed is the recorded one. Bounded:
gives up after SE_CRASH_TEST_SECONDS (default 90) and always cleans up."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import psycopg

from agent_state import Client, idempotency_key

HERE = Path(__file__).resolve().parent
DEADLINE = float(os.environ.get("SE_CRASH_TEST_SECONDS", "90"))
POINTS = ["before_call", "during_call", "before_checkpoint"]
STEPS = 3


def _spawn(dsn: str, queue: str, api: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[1] / "python"), env.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, str(HERE / "side_effect_crash_worker.py"), dsn, queue, api],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def test_sigkill_before_during_and_after_a_tool_call_records_each_call_once(
    dsn: str, role_dsn: Callable[[str], str]
) -> None:
    rng = random.Random(int(os.environ.get("SE_CRASH_TEST_SEED", "0")) or None)
    queue, api = f"se-crash-{uuid.uuid4().hex[:8]}", f"se_api_{uuid.uuid4().hex[:8]}"
    service = role_dsn("app_service")
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(
            f"create table public.{api}_calls (key text not null, taken_over boolean not null, pid int not null)"
        )
        admin.execute(
            f"create table public.{api}_payments (payment_id bigint generated always as identity,"
            " key text primary key, job_id bigint not null, step int not null)"
        )
        admin.execute(
            f"create table public.{api}_progress (job_id bigint, step int, result jsonb not null,"
            " primary key (job_id, step))"
        )
        admin.execute(f"create table public.{api}_crashes (job_id bigint, point text, step int)")
        for t in ("calls", "payments", "progress", "crashes"):
            admin.execute(f"grant select, insert, update on public.{api}_{t} to app_service")
    # Every kill point on every step at least once, one or two crashes per job, random attempts.
    plans: list[list[list[object]]] = [[[point, step]] for point in POINTS for step in range(STEPS)]
    for _ in range(3):
        first, second = sorted(rng.sample(range(STEPS * len(POINTS)), 2))  # in the order they can happen
        plans.append([[POINTS[first % 3], first // 3], [POINTS[second % 3], second // 3]])
    plans += [[], []]
    with psycopg.connect(service, autocommit=True) as conn:
        client = Client(conn)
        jobs = []
        for plan in plans:
            thread = f"se-crash-{uuid.uuid4()}"
            client.create_session(thread)
            jobs.append(client.enqueue_job(thread, {"crash": plan}, queue=queue, max_attempts=100).job_id)

    procs = [_spawn(service, queue, api) for _ in range(2)]
    respawns = 0
    start = time.monotonic()
    try:
        with psycopg.connect(
            dsn, autocommit=True, prepare_threshold=None
        ) as conn:  # the observer: the superuser reads the tables
            while time.monotonic() - start < DEADLINE:
                left = conn.execute(
                    "select count(*) from ai.agent_jobs where queue = %s and status <> 'COMPLETED'", (queue,)
                ).fetchone()
                if left is not None and left[0] == 0:
                    break
                for i, p in enumerate(procs):
                    if p.poll() is not None:  # it killed itself: a fresh process takes its place
                        procs[i] = _spawn(service, queue, api)
                        respawns += 1
                time.sleep(0.2)
            elapsed = time.monotonic() - start
            rows = conn.execute(
                "select job_id, thread_id, status, result from ai.agent_jobs where queue = %s", (queue,)
            ).fetchall()
            ledger = {
                (r[0], r[1]): r[2:]
                for r in conn.execute(
                    "select thread_id, idempotency_key, status, result, attempt, takeovers from ai.side_effects"
                    " where thread_id = any(%s)",
                    ([r[1] for r in rows],),
                )
            }
            payments = conn.execute(f"select key, job_id, step, payment_id from public.{api}_payments").fetchall()
            calls = conn.execute(f"select key, taken_over from public.{api}_calls").fetchall()
            crashes = conn.execute(f"select job_id, point, step from public.{api}_crashes").fetchall()
            progress = {
                (r[0], r[1]): r[2] for r in conn.execute(f"select job_id, step, result from public.{api}_progress")
            }
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(
                f"drop table if exists public.{api}_calls, public.{api}_payments, public.{api}_progress,"
                f" public.{api}_crashes"
            )

    assert elapsed < DEADLINE, f"not every job completed within {DEADLINE} s"
    planned = sorted((job_id, p, s) for job_id, plan in zip(jobs, plans, strict=True) for p, s in plan)
    # A planned kill can be skipped when another job's kill took the process down first (a step
    # whose result was recorded is not called again), so: only planned kills, and every kind.
    assert set(crashes) <= set(planned), "only planned kills"
    assert {p for _, p, _ in crashes} == set(POINTS), "killed before, during and after a call"
    assert respawns >= 1
    assert len(rows) == len(plans) and all(r[2] == "COMPLETED" for r in rows)
    by_key = {p[0]: p for p in payments}
    assert len(payments) == len(plans) * STEPS, "one payment per logical call, none lost, none doubled"
    for job_id, thread_id, _, result in rows:
        seen = []
        for step in range(STEPS):
            key = idempotency_key("charge", job_id, step)
            status, recorded, _, _ = ledger[(thread_id, key)]
            assert status == "done"
            assert recorded == {"payment_id": by_key[key][3]}, "the ledger holds the payment that was made"
            assert progress[(job_id, step)] == recorded, "the agent checkpointed the recorded result"
            seen.append(recorded)
        assert result == {"seen": seen}
    # The tool ran again only as a takeover (a worker died holding the key), and was told so. A
    # process may die between begin and the call (another job's kill takes it down), so a key may
    # have been taken over without its first holder ever calling: hence "at most", not "exactly".
    per_key: dict[str, list[bool]] = {}
    for key, taken_over in calls:
        per_key.setdefault(key, []).append(taken_over)
    takeovers = {key: t for (_, key), (_, _, _, t) in ledger.items()}
    assert set(per_key) == set(takeovers), "the tool was called for every key"
    for key, flags in per_key.items():
        assert flags.count(False) <= 1, f"key {key}: the tool ran twice without a takeover: {flags}"
        assert flags.count(True) <= takeovers[key], f"key {key}: more takeover calls than takeovers: {flags}"
    assert any(True in flags for flags in per_key.values()), "a during_call crash was taken over"
