"""The Citus formation of `make test-citus` as the tests see it (scripts/citus.sh builds it).

Ports: the coordinator on CITUS_PORT (6200), worker N on CITUS_PORT + N. The schema is deployed
on the coordinator by the non-superuser owner and distributed with ``select ai.distribute()``.
"""

from __future__ import annotations

import os
import uuid

import psycopg

PORT = int(os.environ.get("CITUS_PORT", "6200"))
WORKERS = int(os.environ.get("CITUS_WORKERS", "2"))
WORKER_PORTS = [PORT + n for n in range(1, WORKERS + 1)]
OWNER = "agent_state_owner"


def url(user: str, port: int = PORT) -> str:
    return f"postgresql://{user}@127.0.0.1:{port}/agent_state?connect_timeout=5"


def connect(user: str, port: int = PORT) -> psycopg.Connection[tuple[object, ...]]:
    """A connection as this role, in autocommit (each call its own transaction, as the client's)."""
    return psycopg.connect(url(user, port), autocommit=True)


def thread(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def worker_of(thread_id: str) -> int:
    """The port of the worker that holds this thread's shard of ai.agent_sessions."""
    with connect("postgres") as conn:
        row = conn.execute(
            "select nodeport from citus_shards s join pg_dist_shard d using (shardid)"
            " where s.table_name = 'ai.agent_sessions'::regclass"
            " and d.shardid = get_shard_id_for_distribution_column('ai.agent_sessions', %s::text)",
            (thread_id,),
        ).fetchone()
    assert row is not None
    return int(str(row[0]))
