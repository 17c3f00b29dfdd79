"""One worker process of the side-effect crash test (test_side_effect_crash.py).

Each job runs STEPS logical tool calls. A step is: the tool (ctx.side_effect) "charges" through an
external payment API, here the table public.<api>_payments, which deduplicates on the idempotency
key as real payment APIs do, then the handler checkpoints the result it saw into
public.<api>_progress through ctx.fenced(). Steps already checkpointed are skipped on a retry.

The job's payload lists where the process SIGKILLs itself, in order, whatever the attempt:
{"crash": [["before_call" | "during_call" | "before_checkpoint", step], ...]}; each crash is
written to public.<api>_crashes just before the kill, so the next one on the list comes next.
"""

from __future__ import annotations

import os
import signal
import sys
from datetime import timedelta
from typing import Any

import psycopg
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from agent_state import Job, JobContext, SideEffectCall, Worker

STEPS = 3


def main() -> None:
    dsn, queue, api = sys.argv[1:4]

    def die_if(job: Job, point: str, step: int) -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            row = conn.execute(f"select count(*) from public.{api}_crashes where job_id = %s", (job.job_id,)).fetchone()
            plan = job.payload.get("crash", [])
            crashed = row[0] if row else 0
            if crashed < len(plan) and plan[crashed] == [point, step]:
                conn.execute(
                    f"insert into public.{api}_crashes (job_id, point, step) values (%s, %s, %s)",
                    (job.job_id, point, step),
                )
                os.kill(os.getpid(), signal.SIGKILL)

    def handler(job: Job, ctx: JobContext) -> Any:
        with ctx.fenced() as conn:
            done = {
                r[0]: r[1]
                for r in conn.execute(
                    f"select step, result from public.{api}_progress where job_id = %s", (job.job_id,)
                )
            }
        seen = []
        for step in range(STEPS):
            if step in done:
                seen.append(done[step])
                continue
            die_if(job, "before_call", step)

            @ctx.side_effect("charge", job.job_id, step)
            def charge(call: SideEffectCall, step: int = step) -> dict[str, Any]:
                # The payment API, in its own transaction: a unique key hit means "already applied".
                with psycopg.connect(dsn, autocommit=True) as api_conn:
                    api_conn.execute(
                        f"insert into public.{api}_calls (key, taken_over, pid) values (%s, %s, %s)",
                        (call.key, call.taken_over, os.getpid()),
                    )
                    row = api_conn.execute(
                        f"insert into public.{api}_payments (key, job_id, step) values (%s, %s, %s)"
                        f" on conflict (key) do update set key = excluded.key returning payment_id",
                        (call.key, job.job_id, step),
                    ).fetchone()
                die_if(job, "during_call", step)  # charged, but the agent never hears of it
                assert row is not None
                return {"payment_id": row[0]}

            result = charge()
            die_if(job, "before_checkpoint", step)
            with ctx.fenced() as conn:
                conn.execute(
                    f"insert into public.{api}_progress (job_id, step, result) values (%s, %s, %s)",
                    (job.job_id, step, Jsonb(result)),
                )
            seen.append(result)
        return {"seen": seen}

    with ConnectionPool(dsn, min_size=2, max_size=6, kwargs={"autocommit": True}, open=True) as pool:
        Worker(
            pool,
            handler,
            queue,
            concurrency=2,
            prefetch=0,
            lease=timedelta(seconds=1),
            poll_interval=0.1,
            grace_period=2,
        ).run()


if __name__ == "__main__":
    main()
