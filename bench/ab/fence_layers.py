"""The fenced append, layer by layer, against a plain INSERT (issue 34 item 8), paired A/B.

Per call, one connection per database, autocommit, prepared statements, synchronous_commit off
(so no loop is paced by fsync): the backend's CPU microseconds per call (/proc/<pid>/schedstat:
the server must run on this machine) of
  * ``select 1``: the round trip and the empty transaction, the floor under every call;
  * ``plain INSERT``: one message row into a table shaped like the stock stack's
    (bench/capacity/setup.sql: identity key, unique (thread_id, idempotency_key), ON CONFLICT DO
    NOTHING), as the superuser: the target's baseline;
  * ``raw INSERT, same table``: the same row straight into ai.session_messages as the superuser
    (its seq trigger, the session foreign key, the primary key and the key's unique index; no
    function, no RLS);
  * ``unfenced append``: ai.append_message_idempotent without a job (the worker's role);
  * ``fenced_write alone``: ai.fenced_write in a transaction of its own (the fence's check now and
    its check at commit);
  * ``fenced append``: ai.append_message_idempotent with job_id and fencing_token, one call.
Medians of ROUNDS interleaved rounds (each layer, each database in turn) of CALLS calls, a fresh
thread and job per round; the ratios to the plain INSERT are taken per round, then their median.
Usage (superuser DSNs of databases of this machine's server, deployed,
with the roles tenant_a and app_service of the test fixtures; the worker's calls log in as app_service):

  python bench/ab/fence_layers.py DSN_A [DSN_B] [ROUNDS [CALLS]]
"""

from __future__ import annotations

import statistics
import sys
import uuid
from collections.abc import Callable
from typing import Any

import psycopg

STOCK = (
    "create table if not exists public.fence_layers_plain (seq bigint generated always as identity primary key,"
    " thread_id text not null, role text not null, content jsonb not null, idempotency_key text not null,"
    " created_at timestamptz not null default now(), unique (thread_id, idempotency_key))"
)


def cpu_ns(pid: int) -> int:
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


class Side:
    def __init__(self, dsn: str) -> None:
        self.super = psycopg.connect(dsn, autocommit=True)
        self.super.execute("set synchronous_commit = off")
        self.super.execute(STOCK)
        self.worker = psycopg.connect(dsn, user="app_service", autocommit=True)  # a worker's login
        self.worker.execute("set synchronous_commit = off")
        self.i = 0
        self.fresh()

    def fresh(self) -> None:
        c = self.super
        self.thread = f"fl-{uuid.uuid4()}"
        q = f"flq-{uuid.uuid4().hex[:8]}"
        c.execute("set role tenant_a")
        c.execute("select ai.create_session(%s)", (self.thread,))
        c.execute("select ai.enqueue_job(%s, queue => %s)", (self.thread, q))
        c.execute("set role app_service")
        row = c.execute("select job_id, fencing_token from ai.claim_job('fl', '1 hour', %s)", (q,)).fetchone()
        assert row is not None
        self.job, self.token = row
        c.execute("reset role")
        self.seq = 0

    def layers(self) -> dict[str, tuple[psycopg.Connection[Any], Callable[[], tuple[str, tuple[Any, ...]]]]]:
        def nxt() -> int:
            self.i += 1
            return self.i

        def raw() -> tuple[str, tuple[Any, ...]]:
            self.seq += 1
            return (
                "insert into ai.session_messages (thread_id, seq, owner, role, content, token_count, turn,"
                " idempotency_key) values (%s, %s, 'tenant_a', 'assistant', %s, 3, null, %s)",
                (self.thread, self.seq, '{"text": "r"}', f"r{nxt()}"),
            )

        return {
            "select 1": (self.super, lambda: ("select 1", ())),
            "plain INSERT": (
                self.super,
                lambda: (
                    "insert into public.fence_layers_plain (thread_id, role, content, idempotency_key)"
                    " values (%s, 'assistant', %s, %s) on conflict (thread_id, idempotency_key) do nothing",
                    (self.thread, '{"text": "p"}', f"p{nxt()}"),
                ),
            ),
            "raw INSERT, same table": (self.super, raw),
            "unfenced append": (
                self.worker,
                lambda: (
                    "select from ai.append_message_idempotent(%s, 'assistant', %s, null, %s)",
                    (self.thread, '{"text": "u"}', f"u{nxt()}"),
                ),
            ),
            "fenced_write alone": (
                self.worker,
                lambda: ("select ai.fenced_write(%s, %s)", (self.job, self.token)),
            ),
            "fenced append": (
                self.worker,
                lambda: (
                    "select from ai.append_message_idempotent(%s, 'assistant', %s, null, %s, null, %s, %s)",
                    (self.thread, '{"text": "f"}', f"f{nxt()}", self.job, self.token),
                ),
            ),
        }


def measure(conn: psycopg.Connection[Any], call: Callable[[], tuple[str, tuple[Any, ...]]], n: int) -> float:
    pid = conn.info.backend_pid
    for _ in range(30):
        conn.execute(*call(), prepare=True)
    t0 = cpu_ns(pid)
    for _ in range(n):
        conn.execute(*call(), prepare=True)
    return (cpu_ns(pid) - t0) / n / 1e3


def main() -> None:
    dsns = [a for a in sys.argv[1:] if "=" in a or "://" in a]
    nums = [int(a) for a in sys.argv[1:] if a.isdigit()]
    rounds = nums[0] if nums else 7
    calls = nums[1] if len(nums) > 1 else 500
    sides = {f"{'ABCD'[k]}": Side(d) for k, d in enumerate(dsns)}
    got: dict[str, dict[str, list[float]]] = {s: {} for s in sides}
    for _ in range(rounds):
        for s, side in sides.items():
            side.fresh()
            for name, (conn, call) in side.layers().items():
                got[s].setdefault(name, []).append(measure(conn, call, calls))
    names = list(next(iter(got.values())))
    # ratios per round (each layer against the plain INSERT of the same round and database), then
    # their median: steadier than a ratio of medians on a machine others load
    head = f"{'backend CPU us per call, median of ' + str(rounds):40}" + "".join(f"{s:>8}" for s in sides)
    head += "".join(f"{s + '/plain':>9}" for s in sides)
    print(head)
    for name in names:
        meds = {s: statistics.median(got[s][name]) for s in sides}
        ratios = {
            s: statistics.median(v / p for v, p in zip(got[s][name], got[s]["plain INSERT"], strict=True))
            for s in sides
        }
        print(f"{name:40}" + "".join(f"{meds[s]:8.1f}" for s in sides) + "".join(f"{ratios[s]:9.2f}" for s in sides))


if __name__ == "__main__":
    main()
