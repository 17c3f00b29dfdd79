"""A worker process of the dead-worker test (test_queue_dead_worker.py): runs agent_state.Worker
on a queue, under a worker_id and a one-hour lease, with a handler that never returns. The test
SIGKILLs it, or stops it (SIGSTOP) and kills it afterwards."""

from __future__ import annotations

import sys
import threading
from datetime import timedelta

from psycopg_pool import ConnectionPool

from agent_state import Job, JobContext, Worker


def main() -> None:
    dsn, queue, worker_id = sys.argv[1:4]

    def handler(job: Job, ctx: JobContext) -> None:
        threading.Event().wait()  # holds the job until the process dies

    with ConnectionPool(dsn, min_size=2, max_size=4, kwargs={"autocommit": True}, open=True) as pool:
        Worker(
            pool,
            handler,
            queue,
            concurrency=1,
            prefetch=0,
            lease=timedelta(hours=1),
            worker_id=worker_id,
            poll_interval=0.1,
        ).run()


if __name__ == "__main__":
    main()
