"""`agent-state metrics` and the Worker's log records (issue 39, items 2 and 3).

A known sequence on a queue of its own (enqueue, claim, complete, fail for good, fail and retry
later), then a scrape of `agent-state metrics --once` parsed with Prometheus' own text parser: the
service sees every figure of that queue, another tenant none. The HTTP endpoint serves the same
scrape and stops on SIGTERM. A Worker's handler logs: the line carries the job's ids.

Bounded: every wait has a deadline; the served process is always killed."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import threading
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta

import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families
from psycopg_pool import ConnectionPool
from test_cli import AGENT_STATE, run

from agent_state import Client, Job, JobContext, Worker
from agent_state.logs import FIELDS, JobLogFilter


@pytest.fixture
def queue() -> str:
    return f"m-{uuid.uuid4().hex[:12]}"


def _samples(text: str, queue: str) -> dict[tuple[str, str], float]:
    """(metric, state or '') -> value, for the samples of one queue."""
    found: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(text):
        assert family.type == "gauge", family.name
        for sample in family.samples:
            if sample.labels.get("queue") == queue:
                found[(sample.name, sample.labels.get("state", ""))] = sample.value
    return found


def _known_sequence(role_dsn: Callable[[str], str], queue: str) -> None:
    with (
        psycopg.connect(role_dsn("tenant_a"), autocommit=True) as tenant_conn,
        psycopg.connect(role_dsn("app_service"), autocommit=True) as service_conn,
    ):
        _sequence(Client(tenant_conn), Client(service_conn), queue)


def _sequence(tenant: Client, service: Client, queue: str) -> None:
    threads = [f"m-{uuid.uuid4()}" for _ in range(3)]
    for thread in threads:
        tenant.create_session(thread)
    tenant.enqueue_job(threads[0], queue=queue)
    tenant.enqueue_job(threads[1], queue=queue, max_attempts=1)
    tenant.enqueue_job(threads[2], queue=queue)
    done = service.claim_job("metrics-test", queue=queue)
    assert done is not None
    service.complete_job(done.job_id, done.fencing_token)
    dead = service.claim_job("metrics-test", queue=queue)
    assert dead is not None
    service.fail_job(dead.job_id, dead.fencing_token, "boom")  # attempts spent: FAILED
    later = service.claim_job("metrics-test", queue=queue)
    assert later is not None
    service.fail_job(later.job_id, later.fencing_token, "boom", retry_in=timedelta(hours=1))
    tenant.enqueue_job(threads[0], queue=queue)  # due now


EXPECTED = {
    ("agent_state_jobs", "PENDING"): 2.0,
    ("agent_state_jobs", "IN_PROGRESS"): 0.0,
    ("agent_state_jobs", "AWAITING_HUMAN"): 0.0,
    ("agent_state_jobs", "FAILED"): 1.0,
    ("agent_state_jobs", "CANCELLED"): 0.0,
    ("agent_state_jobs_due", ""): 1.0,
    ("agent_state_leases_expired", ""): 0.0,
    ("agent_state_attempts_expired", ""): 0.0,
    ("agent_state_attempts_failed", ""): 2.0,
    ("agent_state_dead_jobs", ""): 1.0,
    ("agent_state_attempts_deadline_exceeded", ""): 0.0,
}


def test_a_scrape_after_a_known_sequence_parses_with_the_figures_of_the_queue(
    role_dsn: Callable[[str], str], queue: str
) -> None:
    _known_sequence(role_dsn, queue)
    done = run("metrics", "--once", dsn=role_dsn("app_service"))
    assert done.returncode == 0, done.stderr
    found = _samples(done.stdout, queue)
    oldest = found.pop(("agent_state_oldest_due_job_age_seconds", ""))
    assert 0 <= oldest < 60, "the one due job was enqueued just now"
    assert found == EXPECTED
    assert "# HELP agent_state_dead_jobs FAILED jobs" in done.stdout

    other = run("metrics", "--once", dsn=role_dsn("tenant_b"))
    assert other.returncode == 0, other.stderr
    assert _samples(other.stdout, queue) == {}, "another tenant sees none of tenant_a's figures"
    mine = run("metrics", "--once", dsn=role_dsn("tenant_a"))
    assert _samples(mine.stdout, queue).get(("agent_state_dead_jobs", "")) == 1.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def served(role_dsn: Callable[[str], str]) -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = _free_port()
    env = {"DATABASE_URL": role_dsn("app_service")}
    process = subprocess.Popen(
        [AGENT_STATE, "metrics", "--port", str(port)],
        env={**{k: v for k, v in os.environ.items() if k != "DATABASE_URL"}, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield process, port
    finally:
        process.kill()
        process.wait(timeout=30)


def test_the_endpoint_serves_the_same_scrape_and_stops_on_sigterm(
    served: tuple[subprocess.Popen[str], int], role_dsn: Callable[[str], str], queue: str
) -> None:
    process, port = served
    assert process.stdout is not None
    line = process.stdout.readline()  # printed once it listens (the process is killed at the end)
    assert f":{port}/metrics" in line, line
    _known_sequence(role_dsn, queue)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as answer:
        text = answer.read().decode()
    found = _samples(text, queue)
    found.pop(("agent_state_oldest_due_job_age_seconds", ""))
    assert found == EXPECTED
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0


def test_without_the_database_a_scrape_fails_in_one_line() -> None:
    done = run("metrics", "--once", "--database-url", "host=/nonexistent dbname=x connect_timeout=2")
    assert done.returncode == 2
    assert "cannot connect" in done.stderr and "Traceback" not in done.stderr


def test_a_workers_log_lines_carry_the_jobs_ids(role_dsn: Callable[[str], str], queue: str) -> None:
    thread_id = f"m-{uuid.uuid4()}"
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as tenant_conn:
        Client(tenant_conn).create_session(thread_id)
        job = Client(tenant_conn).enqueue_job(thread_id, queue=queue)

    lines: list[str] = []
    records: list[logging.LogRecord] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)
            lines.append(self.format(record))

    handler = Collect()
    handler.addFilter(JobLogFilter())  # the user's handler: every logger's records get the ids
    handler.setFormatter(logging.Formatter("%(name)s %(message)s " + " ".join(f"{f}=%({f})s" for f in FIELDS)))
    app_log = logging.getLogger(f"app-{queue}")
    worker_log = logging.getLogger("agent_state.worker")
    levels = {logger: logger.level for logger in (app_log, worker_log)}
    for logger in levels:
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    try:

        def work(job: Job, ctx: JobContext) -> None:
            app_log.info("working")
            worker_log.info("inside the worker")

        with ConnectionPool(role_dsn("app_service"), min_size=1, max_size=4, kwargs={"autocommit": True}) as pool:
            worker = Worker(pool, work, queue, concurrency=1, poll_interval=0.05, listen=False)
            runner = threading.Thread(target=worker.run, kwargs={"drain": True, "install_signal_handlers": False})
            runner.start()
            runner.join(60)
            if runner.is_alive():
                worker.stop()
                runner.join(30)
            assert not runner.is_alive()
        outside = logging.LogRecord("x", logging.INFO, __file__, 1, "outside", None, None)
        assert JobLogFilter().filter(outside) and outside.job_id is None  # type: ignore[attr-defined]
    finally:
        for logger, level in levels.items():
            logger.removeHandler(handler)
            logger.setLevel(level)

    ids = f"thread_id={thread_id} job_id={job.job_id} attempt=1 fencing_token={job.fencing_token + 1} queue={queue}"
    assert f"app-{queue} working {ids}" in lines, lines
    assert f"agent_state.worker inside the worker {ids}" in lines, lines
    worker_record = next(r for r in records if r.getMessage() == "inside the worker")
    assert worker_record.job_id == job.job_id  # type: ignore[attr-defined]


def test_the_docs_and_the_dashboard_name_only_the_metrics_there_are() -> None:
    """docs/observability.md's table lists every metric of the exporter's HELP (the names
    ai.metrics() returns: test_a_scrape... checks those), and the Grafana dashboard queries no
    other."""
    import json
    import re
    from pathlib import Path

    from agent_state.prometheus import HELP

    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "observability.md").read_text()
    assert set(re.findall(r"^\| `(agent_state_\w+)`", page, re.M)) == set(HELP)
    dashboard = json.loads((root / "docs" / "grafana" / "agent-state.json").read_text())
    queried = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"agent_state_\w+", target["expr"])
    }
    assert queried and queried <= set(HELP), queried - set(HELP)
    sql = (root / "deploy" / "metrics.sql").read_text()
    assert [name for name in HELP if f"'{name}'" not in sql] == [], "a HELP for a metric ai.metrics() has not"
