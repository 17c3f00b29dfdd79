"""Stateful property test: random enqueue / claim / renew / complete / fail / release / cancel /
reap / time steps, run against the SQL functions and against a small Python model of the queue;
after every step the two must agree on every job (status, attempts, fencing token, due time and
lease). Time moves only through ai.frozen_now, so leases expire without sleeping."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from agent_state import Client, LeaseLost

pytestmark = pytest.mark.session_features("the frozen clock ai.frozen_now is a session setting")

LEASE = timedelta(seconds=60)
SERVICE_DSN = ""
ADMIN_DSN = ""


@dataclass
class ModelJob:
    job_id: int
    thread: str
    priority: int
    run_at: datetime
    max_attempts: int
    status: str = "PENDING"
    attempts: int = 0
    token: int = 0
    lease_expires: datetime | None = None

    @property
    def available_at(self) -> datetime | None:
        return self.lease_expires if self.status == "IN_PROGRESS" else self.run_at


class QueueModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.conn = psycopg.connect(SERVICE_DSN, autocommit=True)
        self.admin = psycopg.connect(ADMIN_DSN, autocommit=True)  # reads the table: services hold no privilege
        self.client = Client(self.conn)
        self.queue = f"model-{uuid.uuid4().hex[:12]}"
        self.now = datetime(2031, 1, 1, tzinfo=timezone.utc)
        self.jobs: dict[int, ModelJob] = {}
        self.threads: list[str] = []

    @initialize()
    def start(self) -> None:
        self._set_clock()
        self.threads = [f"model-{uuid.uuid4()}" for _ in range(3)]
        for t in self.threads:
            self.client.create_session(t)

    def teardown(self) -> None:
        self.conn.close()
        self.admin.close()

    def _set_clock(self) -> None:
        self.conn.execute("select set_config('ai.frozen_now', %s, false)", (self.now.isoformat(),))

    # -- the model's claim, as the SQL states it ------------------------------------------------

    def _model_claim(self, worker: str) -> ModelJob | None:
        for _ in range(5):
            busy = {j.thread: j.job_id for j in self.jobs.values() if j.status == "IN_PROGRESS"}
            candidates = [
                j
                for j in self.jobs.values()
                if j.status in ("PENDING", "IN_PROGRESS")
                and j.available_at is not None
                and j.available_at <= self.now
                and busy.get(j.thread, j.job_id) == j.job_id
            ]
            if not candidates:
                return None
            j = min(candidates, key=lambda c: (-c.priority, c.available_at, c.job_id))
            j.token += 1
            if j.status == "IN_PROGRESS" and j.attempts >= j.max_attempts:
                j.status, j.lease_expires = "FAILED", None
                continue
            j.status, j.attempts, j.lease_expires = "IN_PROGRESS", j.attempts + 1, self.now + LEASE
            return j
        return None

    def _held(self, j: ModelJob, token: int) -> bool:
        return (
            j.status == "IN_PROGRESS"
            and j.token == token
            and j.lease_expires is not None
            and j.lease_expires > self.now
        )

    def _pick(self, data: st.DataObject) -> tuple[ModelJob, int] | None:
        if not self.jobs:
            return None
        job = self.jobs[data.draw(st.sampled_from(sorted(self.jobs)))]
        token = job.token - data.draw(st.sampled_from([0, 0, 1]))
        return job, token

    # -- rules -----------------------------------------------------------------------------------

    @rule(
        thread=st.integers(0, 2),
        priority=st.integers(0, 2),
        delay=st.sampled_from([0, 0, 30]),
        max_attempts=st.integers(1, 3),
    )
    def enqueue(self, thread: int, priority: int, delay: int, max_attempts: int) -> None:
        run_at = self.now + timedelta(seconds=delay)
        job = self.client.enqueue_job(
            self.threads[thread], queue=self.queue, run_at=run_at, priority=priority, max_attempts=max_attempts
        )
        self.jobs[job.job_id] = ModelJob(job.job_id, self.threads[thread], priority, run_at, max_attempts)

    @rule(worker=st.sampled_from(["w1", "w2"]))
    def claim(self, worker: str) -> None:
        expected = self._model_claim(worker)
        got = self.client.claim_job(worker, LEASE, self.queue)
        assert (got and got.job_id) == (expected and expected.job_id)
        if got is not None and expected is not None:
            assert (got.fencing_token, got.attempts, got.lease_owner) == (expected.token, expected.attempts, worker)

    @rule(data=st.data())
    def renew(self, data: st.DataObject) -> None:
        picked = self._pick(data)
        if picked is None:
            return
        job, token = picked
        if self._held(job, token):
            assert self.client.renew_lease(job.job_id, token, LEASE) == self.now + LEASE
            job.lease_expires = self.now + LEASE
        else:
            self._refused(lambda: self.client.renew_lease(job.job_id, token, LEASE))

    @rule(data=st.data())
    def complete(self, data: st.DataObject) -> None:
        picked = self._pick(data)
        if picked is None:
            return
        job, token = picked
        if self._held(job, token):
            assert self.client.complete_job(job.job_id, token).status == "COMPLETED"
            job.status, job.lease_expires = "COMPLETED", None
        elif job.status == "COMPLETED" and job.token == token:
            # its holder's retry after a lost answer (ai.complete_job): the same answer, nothing changed
            assert self.client.complete_job(job.job_id, token).status == "COMPLETED"
        else:
            self._refused(lambda: self.client.complete_job(job.job_id, token))

    @rule(data=st.data(), retry_in=st.sampled_from([0, 30]))
    def fail(self, data: st.DataObject, retry_in: int) -> None:
        picked = self._pick(data)
        if picked is None:
            return
        job, token = picked
        if self._held(job, token):
            self.client.fail_job(job.job_id, token, "boom", timedelta(seconds=retry_in))
            job.lease_expires = None
            if job.attempts >= job.max_attempts:
                job.status = "FAILED"
            else:
                job.status, job.run_at = "PENDING", self.now + timedelta(seconds=retry_in)
        else:
            self._refused(lambda: self.client.fail_job(job.job_id, token, "boom", timedelta(0)))

    @rule(data=st.data())
    def release(self, data: st.DataObject) -> None:
        picked = self._pick(data)
        if picked is None:
            return
        job, token = picked
        if self._held(job, token):
            self.client.release_job(job.job_id, token)
            job.status, job.attempts, job.run_at, job.lease_expires = "PENDING", job.attempts - 1, self.now, None
        else:
            self._refused(lambda: self.client.release_job(job.job_id, token))

    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        picked = self._pick(data)
        if picked is None:
            return
        job, _ = picked
        if job.status in ("PENDING", "IN_PROGRESS"):
            self.client.cancel_job(job.job_id)
            job.status = "CANCELLED"

    @rule()
    def reap(self) -> None:
        moved = 0
        for j in self.jobs.values():
            if j.status == "IN_PROGRESS" and j.lease_expires is not None and j.lease_expires <= self.now:
                moved += 1
                j.lease_expires = None
                if j.attempts >= j.max_attempts:
                    j.status = "FAILED"
                else:
                    j.status, j.run_at = "PENDING", self.now
        assert self.client.reap_expired(self.queue) == moved

    @rule(seconds=st.sampled_from([1, 10, 30, 59, 60, 61, 120]))
    def advance(self, seconds: int) -> None:
        self.now += timedelta(seconds=seconds)
        self._set_clock()

    @rule(call=st.sampled_from(["complete", "renew", "fail", "release"]))
    def holder_at_its_lease_end(self, call: str) -> None:
        """The worker whose lease ends this very instant tries to finish or renew: refused, as the
        lease is held only while now < its end (right after advance_to_a_lease_end)."""
        ending = [j for j in self.jobs.values() if j.status == "IN_PROGRESS" and j.lease_expires == self.now]
        if not ending:
            return
        job = ending[0]
        calls: dict[str, Callable[[], Any]] = {
            "complete": lambda: self.client.complete_job(job.job_id, job.token),
            "renew": lambda: self.client.renew_lease(job.job_id, job.token, LEASE),
            "fail": lambda: self.client.fail_job(job.job_id, job.token, "too late"),
            "release": lambda: self.client.release_job(job.job_id, job.token),
        }
        self._refused(calls[call])

    @rule()
    def advance_to_a_lease_end(self) -> None:
        """Time lands exactly on the end of the next lease: the instant where "still held" and
        "claimable again" meet, which random steps of time rarely hit (a `>` for `>=` there must
        not go unnoticed)."""
        ends = [j.lease_expires for j in self.jobs.values() if j.status == "IN_PROGRESS" and j.lease_expires]
        later = [end for end in ends if end > self.now]
        if later:
            self.now = min(later)
            self._set_clock()

    def _refused(self, call: Callable[[], Any]) -> None:
        try:
            call()
        except LeaseLost:
            return
        raise AssertionError("a call without the lease was accepted")

    @invariant()
    def sql_and_model_agree(self) -> None:
        rows = self.admin.execute(
            "select job_id, status, attempts, fencing_token, run_at, lease_expires_at"
            " from ai.agent_jobs where queue = %s",
            (self.queue,),
        ).fetchall()
        got = {r[0]: r[1:] for r in rows}
        for j in self.jobs.values():
            status, attempts, token, run_at, lease = got[j.job_id]
            assert (status, attempts, token) == (j.status, j.attempts, j.token), j
            if status == "PENDING":
                assert run_at == j.run_at, j
            if status == "IN_PROGRESS":
                assert lease == j.lease_expires, j
        busy = [j.thread for j in self.jobs.values() if j.status == "IN_PROGRESS"]
        assert len(busy) == len(set(busy)), "one job per thread at a time"


def test_queue_agrees_with_its_model(dsn: str, role_dsn: Callable[[str], str]) -> None:
    global SERVICE_DSN, ADMIN_DSN
    SERVICE_DSN = role_dsn("app_service")
    ADMIN_DSN = dsn
    run_state_machine_as_test(
        QueueModel,
        settings=settings(
            max_examples=40,
            stateful_step_count=40,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
