"""Racing claimers on few threads with many jobs each: the one-thread rule holds without a
single unique-violation error, every job is claimed exactly once, and batches and single claims
mix. (The thread lock plus the second look with a fresh snapshot is what makes it so.)"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import psycopg

from agent_state import Client

CLAIMERS = 6
THREADS = 4
JOBS_PER_THREAD = 60


def test_racing_claimers_never_run_two_jobs_of_a_thread(dsn: str, role_dsn: Callable[[str], str]) -> None:
    service = role_dsn("app_service")
    queue = f"race-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(service, autocommit=True) as conn:
        client = Client(conn)
        threads = [f"race-{uuid.uuid4()}" for _ in range(THREADS)]
        with conn.transaction():
            for t in threads:
                client.create_session(t)
            for i in range(THREADS * JOBS_PER_THREAD):
                client.enqueue_job(threads[i % THREADS], {"n": i}, queue=queue)

    claimed: list[int] = []
    errors: list[BaseException] = []
    overlaps: list[Any] = []
    lock = threading.Lock()

    def claimer(n: int) -> None:
        try:
            with (
                psycopg.connect(service, autocommit=True, prepare_threshold=None) as conn,
                psycopg.connect(dsn, autocommit=True, prepare_threshold=None) as watch,
            ):
                client = Client(conn)
                idle = 0
                while idle < 20:
                    jobs = (
                        client.claim_jobs(f"w{n}", timedelta(minutes=1), queue, 3)
                        if n % 2
                        else [j for j in [client.claim_job(f"w{n}", timedelta(minutes=1), queue)] if j]
                    )
                    idle = 0 if jobs else idle + 1
                    running = watch.execute(  # the superuser reads the table (services hold no privilege)
                        "select thread_id, count(*) from ai.agent_jobs where queue = %s and status = 'IN_PROGRESS'"
                        " group by thread_id having count(*) > 1",
                        (queue,),
                    ).fetchall()
                    with lock:
                        claimed.extend(j.job_id for j in jobs)
                        overlaps.extend(running)
                    if jobs:
                        client.complete_jobs([(j.job_id, j.fencing_token, None) for j in jobs])
        except BaseException as error:  # reported below
            errors.append(error)

    workers = [threading.Thread(target=claimer, args=(n,)) for n in range(CLAIMERS)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert not errors, errors[:3]
    assert not overlaps, overlaps[:3]
    assert sorted(claimed) == sorted(set(claimed)) and len(claimed) == THREADS * JOBS_PER_THREAD
