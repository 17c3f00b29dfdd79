"""The capacity bench's profile: backend CPU and WAL bytes of each call a node step makes, per stack.

One connection per stack (a pool of one), one held run with a mid-run state (26 messages), each
operation repeated REPEAT times in a row: the serving backend's CPU (/proc/<pid>/schedstat) and
the WAL written (pg_current_wal_lsn; nothing else runs on the cluster meanwhile) per call.
Operations are interleaved across the stacks, ROUNDS rounds; medians printed. This is where the
per-step difference of the fleet comes from, call by call. "message append" is one message: for
ours the fenced append (one call where ai.append_message_idempotent takes the job and its token,
else fenced_write + append in one transaction), for stock a plain INSERT. "node step" is the
save and the step's two messages (for ours with the saver's message mirror, the save alone). The
HOT share of the renewals' updates of each jobs table is printed after the table.

    python per_op.py ADMIN_DSN TENANT_DSN WORKER_DSN STOCK_DSN
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("BENCH_CAPACITY_POOL", "1")
os.environ["BENCH_CAPACITY_PROCS"] = "1"  # one connection per stack, in this process
# the held runs' leases outlast the profile (rounds of synchronous commits), renewed or not
os.environ.setdefault("BENCH_CAPACITY_LEASE", "600")
sys.path.insert(0, str(Path(__file__).parent))

import psycopg
from capacity import Ours, Run, Stack, Stock, message

REPEAT = int(os.environ.get("BENCH_CAPACITY_OP_REPEAT", "100"))
ROUNDS = int(os.environ.get("BENCH_CAPACITY_OP_ROUNDS", "3"))


def _cpu(pid: int) -> float:
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9


async def held_run(stack: Stack, no: int) -> tuple[Run, int]:
    thread = f"op-{stack.name}-{no}-{time.monotonic_ns()}"
    await stack.enqueue(thread, no)
    got = await stack.claim()
    assert got is not None
    job_id, token, thread, no = got
    run = Run(job_id, token, thread, no, 24, 24)
    await stack.save(run, -1, [], None)
    async with stack.pool.connection() as conn:  # type: ignore[union-attr]
        cur = await conn.execute("select pg_backend_pid()")
        row = await cur.fetchone()
        pid = row["pg_backend_pid"] if isinstance(row, dict) else row[0]  # type: ignore[index,call-overload]
    return run, pid


async def main() -> None:
    admin_dsn, tenant_dsn, worker_dsn, stock_dsn = sys.argv[1:5]
    stacks: list[Stack] = [Ours("op-ours", tenant_dsn, worker_dsn, "ours"), Stock("op-stock", stock_dsn)]
    runs: dict[str, tuple[Run, int]] = {}
    for i, stack in enumerate(stacks):
        await stack.open()
        runs[stack.name] = await held_run(stack, i)
    # a worker holding 100 runs, for the batched renewal
    many: dict[str, list[Run]] = {}
    for stack in stacks:
        many[stack.name] = [(await held_run(stack, 1000 + k))[0] for k in range(100)]

    step = [0]

    async def save(stack: Stack, run: Run) -> list[dict[str, Any]]:
        step[0] += 1
        new = [message(run.no, 2 * step[0]), message(run.no, 2 * step[0] + 1)]
        run.messages = run.messages[:24] + new
        await stack.save(run, step[0], new, None)
        return new

    async def node_step(stack: Stack, run: Run) -> None:
        new = await save(stack, run)
        await stack.append(run, step[0], new, in_step=True)

    async def append(stack: Stack, run: Run) -> None:
        step[0] += 1
        await stack.append(run, step[0], [{**message(run.no, step[0]), "id": f"append-{step[0]}"}])

    async def side_effect(stack: Stack, run: Run) -> None:
        step[0] += 1
        await stack.side_effect(run, step[0])

    async def renew(stack: Stack, run: Run) -> None:
        await stack.renew([run])

    async def renew_100(stack: Stack, run: Run) -> None:
        if stack.batched_renewals:
            await stack.renew(many[stack.name])
        else:
            for r in many[stack.name]:
                await stack.renew([r])

    ops = {
        "node save (put_writes + put)": (save, 1),
        "node step (save + its 2 messages)": (node_step, 1),
        "message append": (append, 1),
        "side effect (reserve + result)": (side_effect, 1),
        "lease renewal (1 lease)": (renew, 1),
        "lease renewal, 100 leases (per lease)": (renew_100, 100),
    }
    got: dict[tuple[str, str], list[tuple[float, float]]] = {}
    updates: dict[str, list[int]] = {s.name: [0, 0] for s in stacks}  # renewals' (updates, HOT updates)
    async with await psycopg.AsyncConnection.connect(admin_dsn, autocommit=True) as admin:

        async def lsn() -> Any:
            cur = await admin.execute("select pg_current_wal_lsn()")
            return (await cur.fetchone())[0]  # type: ignore[index]

        async def upd(stack: Stack) -> tuple[int, int]:
            await asyncio.sleep(1.1)  # a backend flushes its table counters at most once a second
            await admin.execute("select pg_stat_clear_snapshot()")
            cur = await admin.execute(
                "select n_tup_upd, n_tup_hot_upd from pg_stat_user_tables where relid = %s::regclass",
                (stack.jobs_table,),
            )
            row = await cur.fetchone()
            return (int(row[0]), int(row[1])) if row else (0, 0)

        for _ in range(ROUNDS):
            for name, (op, per) in ops.items():
                for stack in stacks:
                    run, pid = runs[stack.name]
                    for _ in range(5):  # plans cached
                        await op(stack, run)
                    renewal = name.startswith("lease renewal")
                    before = await upd(stack) if renewal else (0, 0)
                    a_lsn, a_cpu = await lsn(), _cpu(pid)
                    for _ in range(REPEAT):
                        await op(stack, run)
                    b_cpu, b_lsn = _cpu(pid), await lsn()
                    if renewal:
                        after = await upd(stack)
                        updates[stack.name][0] += after[0] - before[0]
                        updates[stack.name][1] += after[1] - before[1]
                    cur = await admin.execute("select pg_wal_lsn_diff(%s, %s)", (b_lsn, a_lsn))
                    wal = float((await cur.fetchone())[0])  # type: ignore[index]
                    got.setdefault((name, stack.name), []).append(
                        ((b_cpu - a_cpu) / REPEAT / per * 1e6, wal / REPEAT / per)
                    )
    for stack in stacks:
        await stack.close()
    print(f"\nper call, one connection, median of {ROUNDS} rounds of {REPEAT}:")
    print("| call | ours CPU us | stock CPU us | CPU ratio | ours WAL B | stock WAL B | WAL ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in ops:
        o = got[(name, "ours")]
        s = got[(name, "stock")]
        oc, sc = statistics.median(x[0] for x in o), statistics.median(x[0] for x in s)
        ow, sw = statistics.median(x[1] for x in o), statistics.median(x[1] for x in s)
        print(f"| {name} | {oc:.0f} | {sc:.0f} | {oc / sc:.2f} | {ow:.0f} | {sw:.0f} | {ow / sw:.2f} |")
    ours = stacks[0]
    print(
        f"\nours: message append {'fenced in one call' if ours.fenced_append else 'fenced_write + append'}"  # type: ignore[attr-defined]
        f", node step's messages {'in the save (mirror_messages)' if ours.mirror else 'appended apart'}"  # type: ignore[attr-defined]
    )
    for stack in stacks:
        n, hot = updates[stack.name]
        share = f"{hot / n:.2f}" if n else "n/a"
        print(f"lease renewal HOT share ({stack.jobs_table}): {share} of {n} updates")


if __name__ == "__main__":
    asyncio.run(main())
