"""The fence on the thread's shard (issue 40, item 2; docs/scaling.md, "The fence on the shard").

On a formation the claim writes the thread's fence (ai.thread_fences, co-located with the thread)
in its own transaction, and every write made for a job checks it where the thread lives. A zombie
(a holder whose job was taken over, or finished) is refused there; its write never lands.
"""

from __future__ import annotations

import time
import uuid

import psycopg
import pytest
from formation import connect, thread
from psycopg.types.json import Jsonb


def setup_job(lease: str = "1 minute") -> tuple[str, str, int, int]:
    """A tenant's thread with one job, claimed by worker w1: (queue, thread, job, token)."""
    q, t = f"f-{uuid.uuid4().hex[:10]}", thread("fence")
    with connect("tenant_a") as conn:
        conn.execute("select ai.create_session(%s)", (t,))
        conn.execute("select ai.enqueue_job(%s, '{}', %s)", (t, q))
    with connect("app_service") as conn:
        row = conn.execute("select job_id, fencing_token from ai.claim_job('w1', %s, %s)", (lease, q)).fetchone()
    assert row is not None
    return q, t, int(str(row[0])), int(str(row[1]))


def append(t: str, job: int, token: int, text: str) -> None:
    with connect("app_service") as conn:
        conn.execute(
            "select ai.append_message_idempotent(%s, 'assistant', %s, job_id => %s, fencing_token => %s)",
            (t, Jsonb(text), job, token),
        )


def fence(t: str) -> tuple[object, ...] | None:
    with connect("postgres") as conn:
        return conn.execute(
            "select job_id, fencing_token, held from ai.thread_fences where thread_id = %s", (t,)
        ).fetchone()


def messages(t: str) -> list[object]:
    with connect("tenant_a") as conn:
        return [r[0] for r in conn.execute("select content from ai.get_messages(%s)", (t,)).fetchall()]


def test_the_claim_writes_the_threads_fence_and_the_finish_lowers_it() -> None:
    _, t, job, token = setup_job()
    assert fence(t) == (job, token, True)
    append(t, job, token, "while held")
    with connect("app_service") as conn:
        conn.execute("select ai.complete_job(%s, %s)", (job, token))
    assert fence(t) == (job, token, False)
    assert messages(t) == ["while held"]


def test_a_finished_jobs_holder_is_refused_on_the_shard() -> None:
    _, t, job, token = setup_job()
    with connect("app_service") as conn:
        conn.execute("select ai.complete_job(%s, %s)", (job, token))
    with pytest.raises(psycopg.Error) as exc:
        append(t, job, token, "after the finish")
    assert exc.value.sqlstate == "AS006"
    assert messages(t) == []


def test_a_zombies_write_after_a_takeover_is_refused_on_the_shard() -> None:
    q, t, job, old = setup_job(lease="1 second")
    # the lease runs out; another worker takes the job over (bounded: the claim returns it)
    new = None
    deadline = time.monotonic() + 60
    with connect("app_service") as conn:
        while new is None and time.monotonic() < deadline:
            row = conn.execute("select fencing_token from ai.claim_job('w2', '1 minute', %s)", (q,)).fetchone()
            new = None if row is None else int(str(row[0]))
            if new is None:
                time.sleep(0.2)
    assert new is not None and new > old
    assert fence(t) == (job, new, True)
    with pytest.raises(psycopg.Error) as exc:
        append(t, job, old, "zombie")
    assert exc.value.sqlstate == "AS006"
    append(t, job, new, "new holder")
    assert messages(t) == ["new holder"]


def test_a_token_of_another_threads_job_is_refused() -> None:
    _, _, job, token = setup_job()
    other = thread("other")
    with connect("tenant_a") as conn:
        conn.execute("select ai.create_session(%s)", (other,))
    with pytest.raises(psycopg.Error) as exc:
        append(other, job, token, "elsewhere")
    assert exc.value.sqlstate in ("AS006", "AS002")
