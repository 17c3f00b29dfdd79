"""Server CPU and WAL of one durable step, call by call (issue 34 item 8): a PL/pgSQL loop of
capacity-like ``ai.put_checkpoint`` calls (a task's held writes: two new messages and a counter;
the list channel's delta, the same two messages; the two messages mirrored; each put its own
transaction) in each of several databases, in rotating order, ROUNDS times; per put the backend's
CPU (``/proc/<pid>/schedstat``: run it on the server's machine) and WAL bytes
(``pg_current_wal_lsn``: a server nothing else writes to). The databases are variants of the
schema (one per tree's ``sql/ai.sql``, or one with a change made by hand, e.g. its foreign keys
dropped), the login a member of ai_user.

    python bench/ab/step_cpu.py HOST USER ROUNDS PUTS DB [DB ...]

Prints per database the median per put and, against the first database, the median of the
paired ratios.
"""

from __future__ import annotations

import statistics
import sys
import uuid

import psycopg

LOOP = r"""
do $$
declare
  th text := current_setting('ab.th');
  a bytea := convert_to(repeat('the agent reads the report ', 30), 'UTF8');
  b bytea := convert_to(repeat('and calls a tool to fetch ', 30), 'UTF8');
  -- a msgpack array of two str 16
  msg bytea := '\x92'::bytea || '\xda'::bytea || int2send(length(a)::smallint) || a
               || '\xda'::bytea || int2send(length(b)::smallint) || b;
begin
  for i in 1 .. current_setting('ab.n')::int loop
    perform ai.put_checkpoint(th, '', 'c' || lpad(i::text, 5, '0'), 'c' || lpad((i - 1)::text, 5, '0'), 'msgpack',
      '\x80', jsonb_build_object('source', 'loop', 'step', i, 'parents', '{}'::jsonb),
      jsonb_build_object('m', 'v' || lpad(i::text, 5, '0')),
      channel_values => row(array['m'], array['v' || lpad(i::text, 5, '0')], array['msgpack'], array[msg],
                            array['v' || lpad((i - 1)::text, 5, '0')])::ai.checkpoint_values,
      writes => row('task-' || i, '~__pregel_pull, agent', array[0, 1], array['m', 'step'], array['msgpack', 'msgpack'],
                    array[msg, '\x01'::bytea])::ai.task_writes,
      messages => jsonb_build_array(
        jsonb_build_object('role', 'assistant', 'idempotency_key', 'lg:a-' || i,
                           'content', jsonb_build_object('content', repeat('the agent reads ', 50))),
        jsonb_build_object('role', 'tool_result', 'idempotency_key', 'lg:b-' || i,
                           'content', jsonb_build_object('content', repeat('a tool result ', 50)))));
    commit;
  end loop;
end $$
"""


def cpu_ns(pid: int) -> int:
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def main() -> None:
    host, user, rounds, puts, dbs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
    got: dict[str, dict[str, list[float]]] = {d: {"cpu_us": [], "wal_b": []} for d in dbs}
    for r in range(rounds):
        for d in dbs[r % len(dbs) :] + dbs[: r % len(dbs)]:
            with psycopg.connect(f"postgresql:///{d}?host={host}&user={user}", autocommit=True) as c:
                th = f"step-cpu-{uuid.uuid4()}"
                c.execute("select ai.create_session(%s)", (th,))
                c.execute("select set_config('ab.th', %s, false), set_config('ab.n', %s, false)", (th, str(puts)))
                c.execute(
                    "select ai.put_checkpoint(%s, '', 'c00000', null, 'msgpack', '\\x80', '{}', '{\"m\": \"v00000\"}',"
                    " channel_values => row(array['m'], array['v00000'], array['msgpack'], array['\\x9101'::bytea],"
                    " array[null])::ai.checkpoint_values)",
                    (th,),
                )
                row = c.execute("select pg_backend_pid(), pg_current_wal_lsn()::text").fetchone()
                assert row is not None
                pid, lsn0 = row
                cpu0 = cpu_ns(pid)
                c.execute(LOOP)
                cpu = cpu_ns(pid) - cpu0
                wal = c.execute("select pg_current_wal_lsn() - %s::pg_lsn", (lsn0,)).fetchone()
                assert wal is not None
                got[d]["cpu_us"].append(cpu / 1000 / puts)
                got[d]["wal_b"].append(float(wal[0]) / puts)
    for d in dbs:
        line = "  ".join(
            f"{k} {statistics.median(v):.0f} ({', '.join(f'{x:.0f}' for x in v)})" for k, v in got[d].items()
        )
        if d != dbs[0]:
            ratios = {
                k: statistics.median([b / a for a, b in zip(got[dbs[0]][k], got[d][k], strict=True)]) for k in got[d]
            }
            line += "  /first: " + "  ".join(f"{k} {v:.3f}" for k, v in ratios.items())
        print(f"{d}: {line}")


if __name__ == "__main__":
    main()
