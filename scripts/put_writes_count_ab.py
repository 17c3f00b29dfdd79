"""Paired A/B on one server: ai._insert_writes as deployed (A) against the body that counts what
INSERT ... RETURNING returns (B, the fix of put_writes' count through a Citus coordinator).

Each round replaces ai._insert_writes with A or B (ABAB..., committed), then as tenant_a runs, in
one rolled-back transaction and a DO loop on the server (no client round trips in the figure),
N put_writes of 2 writes (insert path) and the same N again (the conflict path), and N put_checkpoint
with 2 held writes (the step's hot path, which calls _insert_writes too). Prints the median us per
call of each variant and each path, and the median of the per-pair differences.

    .venv/bin/python scripts/put_writes_count_ab.py DSN_OF_A_SCRATCH_DATABASE [ROUNDS] [N]

B (NEW below) is the body ai.distribute()'s rewrite gives ai._insert_writes on a formation
(ai._formation_rewrites, deploy/distribution.sql). Measured
2026-12-06 on this 2-core machine under other load: 20 rounds of 500, put_writes +17 us (+10.6%)
on the insert path, +2 us on a repeat, put_checkpoint with two writes +7 us (+2.2%); 30 rounds:
+5.7 us (+4.2%), +9.6 us (+9.8%), +3.4 us (+1.3%); so one server keeps its ROW_COUNT.
"""

from __future__ import annotations

import statistics
import sys
from functools import partial

import psycopg

NEW = """
create or replace function ai._insert_writes(thread_id text, checkpoint_ns text, checkpoint_id text, owner text,
                                             task_id text, task_path text, idx integer[], channels text[],
                                             types text[], blobs bytea[]) returns integer
language plpgsql volatile
as $$
declare
  v_count integer;
begin
  with w as (
    insert into ai.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, owner, channel,
                                      type, blob, task_path)
    select distinct on (u.idx)
           $1, $2, $3, $5, u.idx, $4, u.channel, u.type, u.blob, $6
    from unnest($7, $8, $9, $10) with ordinality as u(idx, channel, type, blob, ord)
    order by u.idx, case when u.idx < 0 then -u.ord else u.ord end
    on conflict on constraint checkpoint_writes_pkey do update
    set channel = excluded.channel, type = excluded.type, blob = excluded.blob, task_path = excluded.task_path
    where ai.checkpoint_writes.idx < 0
    returning 1
  )
  select pg_catalog.count(*) into v_count from w;
  return v_count;
end
$$;
"""

LOOP = """
do $ab$
declare
  t0 timestamptz; t1 timestamptz; t2 timestamptz; t3 timestamptz;
  th text := 'ab-' || md5(clock_timestamp()::text);
begin
  perform ai.create_session(th);
  perform ai.put_checkpoint(th, '', 'c0', null, 'test', '\\x01'::bytea, '{}');
  t0 := clock_timestamp();
  for i in 1 .. %(n)s loop
    perform ai.put_writes(th, '', 'c0', 'task-' || i, array[0, 1], array['a', 'b'], array['t', 't'],
                          array['\\x01', '\\x02']::bytea[]);
  end loop;
  t1 := clock_timestamp();
  for i in 1 .. %(n)s loop
    perform ai.put_writes(th, '', 'c0', 'task-' || i, array[0, 1], array['a', 'b'], array['t', 't'],
                          array['\\x09', '\\x09']::bytea[]);
  end loop;
  t2 := clock_timestamp();
  for i in 1 .. %(n)s loop
    perform ai.put_checkpoint(th, '', 'k' || i, 'c0', 'test', '\\x01'::bytea, '{}', '{}', null,
                              row('step-' || i, '', array[0, 1], array['a', 'b'], array['t', 't'],
                                  array['\\x01', '\\x02']::bytea[])::ai.task_writes);
  end loop;
  t3 := clock_timestamp();
  raise notice 'ab %% %% %%', extract(epoch from t1 - t0), extract(epoch from t2 - t1), extract(epoch from t3 - t2);
end
$ab$;
"""


def note(notes: list[str], diagnostic: psycopg.errors.Diagnostic) -> None:
    notes.append(str(diagnostic.message_primary))


def main(dsn: str, rounds: int, n: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as admin:
        old = str(admin.execute("select pg_get_functiondef('ai._insert_writes'::regproc)").fetchone()[0])  # type: ignore[index]
        res: dict[str, list[list[float]]] = {"A": [], "B": []}
    try:
        for r in range(rounds):
            for name, body in (("A", old), ("B", NEW)) if r % 2 == 0 else (("B", NEW), ("A", old)):
                with psycopg.connect(dsn, autocommit=True) as admin:
                    admin.execute(body)
                notes: list[str] = []
                with psycopg.connect(dsn) as conn:
                    conn.add_notice_handler(partial(note, notes))
                    conn.execute("set local role tenant_a")
                    conn.execute(LOOP % {"n": n})
                    conn.rollback()
                res[name].append([float(x) * 1e6 / n for x in notes[-1].split()[1:]])
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(old)
    for i, path in enumerate(("put_writes insert", "put_writes repeat", "put_checkpoint+2 writes")):
        a = [x[i] for x in res["A"]]
        b = [x[i] for x in res["B"]]
        d = [y - x for x, y in zip(a, b, strict=True)]
        print(
            f"{path}: A median {statistics.median(a):.1f} us, B median {statistics.median(b):.1f} us, "
            f"B-A per pair median {statistics.median(d):+.1f} us ({statistics.median(d) / statistics.median(a):+.1%}),"
            f" B faster in {sum(1 for x in d if x < 0)}/{len(d)} pairs"
        )


if __name__ == "__main__":
    main(
        sys.argv[1],
        int(sys.argv[2]) if len(sys.argv) > 2 else 10,
        int(sys.argv[3]) if len(sys.argv) > 3 else 500,
    )
