"""Python workers with a no-op handler: agent_state.Worker against pgqueuer (its own enqueue and
dequeue, over the same psycopg driver), each run as N worker processes draining the same number
of jobs. Prints "<system> <processes> <jobs/s>" lines; the clock runs from the first job any
process starts to the last one any process finishes (process start-up is not counted).

    python python_workers.py DSN SERVICE_DSN PROCESSES JOBS agent_state|pgqueuer
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from datetime import timedelta
from typing import Any

import psycopg

QUEUE = "pybench"


def _agent_state_enqueue(service_dsn: str, jobs: int) -> None:
    from agent_state import Client, NewJob
    from agent_state.queue import MAX_ENQUEUE_BATCH

    with psycopg.connect(service_dsn, autocommit=True) as conn:
        client = Client(conn)
        for start in range(0, jobs, MAX_ENQUEUE_BATCH):  # batch enqueue (ai.enqueue_jobs)
            n = min(MAX_ENQUEUE_BATCH, jobs - start)
            client.enqueue_jobs([NewJob(f"bq-{i % 1000}") for i in range(start, start + n)], queue=QUEUE)


def _agent_state_worker(service_dsn: str) -> dict[str, Any]:
    from psycopg_pool import ConnectionPool

    from agent_state import Job, JobContext, Worker

    times: list[float] = []

    def noop(job: Job, ctx: JobContext) -> None:
        times.append(time.time())

    with ConnectionPool(service_dsn, min_size=3, max_size=4, kwargs={"autocommit": True}, open=True) as pool:
        pool.wait()
        Worker(pool, noop, QUEUE, concurrency=1, prefetch=9, poll_interval=0.05).run(drain=True)
    return {"first": min(times, default=0), "last": max(times, default=0), "count": len(times)}


async def _pgqueuer_install_and_enqueue(dsn: str, jobs: int) -> None:
    from pgqueuer import PsycopgDriver, Queries

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        queries = Queries(PsycopgDriver(conn))
        if not await queries.schema_is_installed():
            await queries.install()
        await queries.clear_queue()
        for start in range(0, jobs, 5000):
            n = min(5000, jobs - start)
            await queries.enqueue(["noop"] * n, [None] * n, [0] * n)


async def _pgqueuer_worker(dsn: str) -> dict[str, Any]:
    from pgqueuer import PsycopgDriver, Queries, QueueManager
    from pgqueuer.domain.types import QueueExecutionMode

    times: list[float] = []
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        qm = QueueManager(Queries(PsycopgDriver(conn)))

        @qm.entrypoint("noop")
        async def noop(job: Any) -> None:
            times.append(time.time())

        await qm.run(batch_size=10, mode=QueueExecutionMode.drain, log_aggregation_interval=timedelta(0))
    return {"first": min(times, default=0), "last": max(times, default=0), "count": len(times)}


def main() -> None:
    if sys.argv[1] == "--child":
        system, dsn = sys.argv[2], sys.argv[3]
        result = _agent_state_worker(dsn) if system == "agent_state" else asyncio.run(_pgqueuer_worker(dsn))
        print(json.dumps(result), flush=True)
        return
    dsn, service_dsn, system = sys.argv[1], sys.argv[2], sys.argv[5]
    processes, jobs = int(sys.argv[3]), int(sys.argv[4])
    if system == "agent_state":
        _agent_state_enqueue(service_dsn, jobs)
        child_dsn = service_dsn
    else:
        asyncio.run(_pgqueuer_install_and_enqueue(dsn, jobs))
        child_dsn = dsn
    children = [
        subprocess.Popen([sys.executable, __file__, "--child", system, child_dsn], stdout=subprocess.PIPE, text=True)
        for _ in range(processes)
    ]
    results = []
    for child in children:
        out, _ = child.communicate(timeout=600)
        results.append(json.loads(out.strip().splitlines()[-1]))
    done = sum(r["count"] for r in results)
    busy = [r for r in results if r["count"]]
    elapsed = max(r["last"] for r in busy) - min(r["first"] for r in busy)
    assert done == jobs, f"{system}: {done} of {jobs} jobs ran"
    print(f"{system} {processes} {jobs / elapsed:.0f}")


if __name__ == "__main__":
    main()
