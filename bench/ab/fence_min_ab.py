"""Paired A/B, backend CPU per call (min of 7 interleaved rounds of 500, a fresh job per measurement):
a fenced transaction of one and two fenced_write calls, the fenced append (base: BEGIN; fenced_write;
append; COMMIT; head: one call), an unfenced append, a renewal. Usage:
python bench/ab/fence_min_ab.py DSN_BASE DSN_HEAD (superuser DSNs of two databases of this machine's server)."""
# ruff: noqa: B007, B023
# (the measured closures read the round's job on purpose: late binding)

import sys

sys.path.insert(0, "bench/ab")
import psycopg
from fence_per_call import measure, setup

conns = {}
for name, dsn in (("base", sys.argv[1]), ("head", sys.argv[2])):
    c = psycopg.connect(dsn, autocommit=True)
    t, j, tok = setup(c)
    conns[name] = (c, t, j, tok)
res = {k: {} for k in conns}
for rep in range(7):
    for name, (c, t0_, j0_, tok0_) in conns.items():
        t = j = tok = None
        i = [rep * 100000]

        def twice():
            with c.transaction():
                c.execute("select ai.fenced_write(%s, %s)", (j, tok))
                c.execute("select ai.fenced_write(%s, %s)", (j, tok))

        def once():
            with c.transaction():
                c.execute("select ai.fenced_write(%s, %s)", (j, tok))

        def app():
            i[0] += 1
            if name == "head":
                c.execute(
                    "select ai.append_message_idempotent(%s, 'assistant', %s, job_id => %s, fencing_token => %s)",
                    (t, f'"m{i[0]}"', j, tok),
                )
            else:
                with c.transaction():
                    c.execute("select ai.fenced_write(%s, %s)", (j, tok))
                    c.execute("select ai.append_message_idempotent(%s, 'assistant', %s)", (t, f'"m{i[0]}"'))

        def app_plain():
            i[0] += 1
            c.execute("select ai.append_message_idempotent(%s, 'assistant', %s)", (t, f'"p{i[0]}"'))

        def renew():
            c.execute("select ai.renew_lease(%s, %s, '1 hour')", (j, tok))

        def sel():
            c.execute("select 1")

        for k, f in (
            ("select 1", sel),
            ("fenced tx, 1 call", once),
            ("fenced tx, 2 calls", twice),
            ("fenced append", app),
            ("unfenced append", app_plain),
            ("renew_lease", renew),
        ):
            c.execute("reset role")
            t, j, tok = setup(c)  # a fresh job (and thread) for each measurement: no chain of old versions
            us = measure(c, k, f, 500)[0]
            res[name][k] = min(res[name].get(k, 1e9), us)
print(f"{'min of 7 (backend CPU us)':28} {'base':>7} {'head':>7}")
for k in res["base"]:
    print(f"{k:28} {res['base'][k]:7.1f} {res['head'][k]:7.1f}")
