"""A worker process of the human-in-the-loop tests (test_hitl.py): drains a queue, then exits.

``python hitl_worker.py DSN QUEUE``. The handler pauses a job for a person the first time
(``ctx.request_human``) and, once the job comes back carrying the decision, finishes it. Prints
one JSON line per job it paused. (A LangGraph graph paused by ``interrupt()`` runs through the
durable graph-run API instead: graph_run_worker.py, test_graph_runs.py.)
"""

from __future__ import annotations

import json
import os
import sys
from datetime import timedelta
from typing import Any

from psycopg_pool import ConnectionPool

from agent_state import Job, JobContext, Worker, human_decision


def main() -> None:
    dsn, queue = sys.argv[1:3]

    with ConnectionPool(dsn, min_size=2, max_size=6, kwargs={"autocommit": True}, open=True) as pool:

        def plain(job: Job, ctx: JobContext) -> Any:
            human = human_decision(job.payload)
            if human is None:
                approval = ctx.request_human("step-1", {"refund": 30})
                print(json.dumps({"paused": approval, "pid": os.getpid()}), flush=True)
                return None
            return {"decision": human["decision"], "resumed_by": os.getpid()}

        worker = Worker(pool, plain, queue, concurrency=1, lease=timedelta(seconds=30), poll_interval=0.1, listen=False)
        worker.run(drain=True, install_signal_handlers=False)


if __name__ == "__main__":
    main()
