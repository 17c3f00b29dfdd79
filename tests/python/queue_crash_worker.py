"""One worker process of the crash test (test_queue_crash.py): runs agent_state.Worker on a queue.

Its handler writes one side-effect row per job through ctx.fenced() and completes the job in the
same transaction. Every write the database (or the context, once it knows) refuses is logged to
<logdir>/rejected-<pid>.log as "job_id token" lines. SIGTERM stops it gracefully.
"""

from __future__ import annotations

import os
import random
import sys
import time
from datetime import timedelta

from psycopg_pool import ConnectionPool

from agent_state import Job, JobContext, LeaseLost, Worker


def main() -> None:
    dsn, queue, table, logdir = sys.argv[1:5]
    pid = os.getpid()
    rejected = open(os.path.join(logdir, f"rejected-{pid}.log"), "a", buffering=1)  # noqa: SIM115

    def handler(job: Job, ctx: JobContext) -> None:
        time.sleep(random.uniform(0.0, 0.02))
        try:
            with ctx.fenced() as conn:
                conn.execute(
                    f"insert into public.{table} (job_id, token, pid) values (%s, %s, %s)",
                    (job.job_id, job.fencing_token, pid),
                )
                ctx.complete({"pid": pid}, conn)
        except LeaseLost:
            rejected.write(f"{job.job_id} {job.fencing_token}\n")
            raise

    with ConnectionPool(dsn, min_size=2, max_size=8, kwargs={"autocommit": True}, open=True) as pool:
        worker = Worker(
            pool,
            handler,
            queue,
            concurrency=4,
            prefetch=2,
            lease=timedelta(seconds=1),
            poll_interval=0.1,
            grace_period=2,
        )
        worker.run()


if __name__ == "__main__":
    main()
