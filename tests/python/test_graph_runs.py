"""Durable graph runs (agent_state.graph_runs), sync and async, with real processes where a crash
is the point: a worker SIGKILLed in the middle of a node resumes in a fresh process from the
last checkpoint without repeating a finished node, and the email its node sent is not sent
again; an interrupt pauses the job and another process resumes it; a retry after an exception
continues from the last checkpoint; a zombie's checkpoints are rejected by the fence.

Time never races a lease: worker processes and pools run on a frozen database clock
(ai.frozen_now), and a fresh worker claims the dead one's job because its clock is set past the
lease. Every wait is on a condition (a line from the child, a job's status) and bounded."""

from __future__ import annotations

import asyncio
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool, ConnectionPool
from waiting import DatabaseClock, wait_until

from agent_state import AsyncClient, AsyncJobContext, AsyncWorker, Client, JobContext, LeaseLost, Worker
from agent_state.langgraph import AgentStateSaver, AsyncGraphRuns, GraphRuns

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from graph_run_worker import build  # noqa: E402

# In the pooled run these tests connect to the server itself (see the marker's reason).
pytestmark = pytest.mark.session_features("worker processes and the frozen clock ai.frozen_now, a session setting")

DAY0, LATER, MUCH_LATER = "2030-01-01T00:00:00Z", "2030-01-01T00:05:00Z", "2030-01-01T02:00:00Z"
DAY3 = "2030-01-04T00:00:00Z"
MODES = ["sync", "async"]


# -- helpers --------------------------------------------------------------------------------------


def _env(frozen: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[1] / "python"), env.get("PYTHONPATH", "")])
    env["PGOPTIONS"] = f"-c ai.frozen_now={frozen}"
    env.update(extra)
    return env


def _spawn(dsn: str, queue: str, mode: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(HERE / "graph_run_worker.py"), dsn, queue, mode],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_line(proc: subprocess.Popen[str], text: str, timeout: float = 60) -> None:
    """Reads the child's stdout until a line equals ``text`` (at most ``timeout`` seconds)."""
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while sel.select(timeout):
            line = proc.stdout.readline()
            if line.strip() == text:
                return
            if not line:
                break
    proc.kill()
    raise AssertionError(f"no line {text!r} from the worker: {proc.stderr.read() if proc.stderr else ''}")


def _drain(dsn: str, queue: str, mode: str, env: dict[str, str]) -> None:
    """One worker process that runs what is due and exits (at most 60 seconds)."""
    done = subprocess.run(
        [sys.executable, str(HERE / "graph_run_worker.py"), dsn, queue, mode],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _lines(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


def _latest_log(dsn: str, thread: str) -> list[str]:
    """The log of the thread's latest checkpoint, read as the database owner."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        latest = AgentStateSaver(conn).get_tuple({"configurable": {"thread_id": thread}})
    assert latest is not None
    return list(latest.checkpoint["channel_values"]["log"])


def _frozen_kwargs(at: str) -> dict[str, Any]:
    return {"autocommit": True, "options": f"-c ai.frozen_now={at}"}


def _start(role_dsn: Callable[[str], str], queue: str, thread: str) -> int:
    """tenant_a starts the run (twice: the second start is the first job)."""
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        runs = GraphRuns(Client(conn), build(), queue=queue)
        job = runs.start(thread, {"log": ["input"]})
        again = runs.start(thread, {"log": ["input"]})
        assert again.job_id == job.job_id and again.created_at == job.created_at, "a second start is a no-op"
        return job.job_id


def _job(role_dsn: Callable[[str], str], job_id: int) -> Any:
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        return Client(conn).get_job(job_id)


def _claim(claim: Callable[[], Any]) -> Any:
    """Claims until a job comes back (at most 30 seconds): a claim skips a job whose holder is in
    the middle of a fenced write (``for update skip locked``), so one attempt may find nothing."""
    deadline = time.monotonic() + 30
    while (job := claim()) is None:
        assert time.monotonic() < deadline, "nothing to claim"
        time.sleep(0.02)
    return job


async def _aclaim(claim: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + 30
    while (job := await claim()) is None:
        assert time.monotonic() < deadline, "nothing to claim"
        await asyncio.sleep(0.02)
    return job


# -- crash and resume, in processes ---------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kill_in", ["b", "c"])
def test_a_worker_killed_mid_node_resumes_in_a_fresh_process_from_the_last_checkpoint(
    dsn: str, role_dsn: Callable[[str], str], tmp_path: Path, mode: str, kill_in: str
) -> None:
    """SIGKILL in node b (just after it sent the email) or in c (b finished): the next worker
    continues from the checkpoint before the killed node; no finished node runs again, and the
    email is sent once (in b the node itself runs again, and the ledger answers for the tool)."""
    queue, thread = f"gr-{uuid.uuid4().hex[:8]}", f"gr-{uuid.uuid4()}"
    node_log, sent_log = tmp_path / "nodes", tmp_path / "sent"
    logs = {"NODE_LOG": str(node_log), "SENT_LOG": str(sent_log)}
    job_id = _start(role_dsn, queue, thread)
    service = role_dsn("app_service")

    first = _spawn(service, queue, mode, _env(DAY0, BLOCK_AT=kill_in, **logs))
    try:
        _wait_line(first, f"{kill_in} started")
        # durability="sync": the step before the running node is saved before the node starts
        finished_before = ["a"] if kill_in == "b" else ["a", "b"]
        assert [entry.split()[0] for entry in _latest_log(dsn, thread)] == ["input", *finished_before]
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == -signal.SIGKILL
    assert _job(role_dsn, job_id).status == "IN_PROGRESS", "the dead worker still holds the lease"

    _drain(service, queue, mode, _env(LATER, **logs))  # the lease has expired on this clock

    job = _job(role_dsn, job_id)
    assert job.status == "COMPLETED" and job.attempts == 2
    nodes = _lines(node_log)
    assert [n for n, _ in nodes] == ["a", "b", "c", "approve", "d"], "each node finished exactly once"
    by = {n: int(pid) for n, pid in nodes}
    assert {by[n] for n in finished_before} == {first.pid}, "the finished nodes are the first worker's"
    assert first.pid not in {by[n] for n in by if n not in finished_before}, "the rest ran in the fresh worker"
    assert _lines(sent_log) == [["email", str(first.pid)]], "the email was sent once, by the killed worker"
    assert job.result["log"][0] == "input" and len(job.result["log"]) == 6
    assert job.result["log"][2] == f"b (email sent by {first.pid}) by {by['b']}"


@pytest.mark.parametrize("mode", MODES)
def test_a_killed_workers_run_is_taken_over_within_two_seconds_whatever_the_lease(
    dsn: str, role_dsn: Callable[[str], str], tmp_path: Path, mode: str
) -> None:
    """Issue 41, item 7: SIGKILL in node b while a second worker process runs the same queue; the
    clock stays frozen (the 30-second lease never ends), yet the second worker takes the run over
    within 2 s of the kill, since the dead worker's liveness hold went with its connections
    (docs/queue.md, "Dead workers"), and finishes it from the checkpoint before b."""
    queue, thread = f"gr-{uuid.uuid4().hex[:8]}", f"gr-{uuid.uuid4()}"
    node_log, sent_log = tmp_path / "nodes", tmp_path / "sent"
    logs = {"NODE_LOG": str(node_log), "SENT_LOG": str(sent_log)}
    job_id = _start(role_dsn, queue, thread)
    service = role_dsn("app_service")
    first = _spawn(service, queue, mode, _env(DAY0, BLOCK_AT="b", **logs))
    second = None
    try:
        _wait_line(first, "b started")
        token = _job(role_dsn, job_id).fencing_token
        second = _spawn(service, queue, mode, _env(DAY0, KEEP_RUNNING="1", **logs))
        _wait_line(second, "running")
        first.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        first.wait(timeout=60)
        deadline = killed + 30
        while _job(role_dsn, job_id).fencing_token == token:
            assert time.monotonic() < deadline, "the second worker never took the run over"
            time.sleep(0.005)
        taken = time.monotonic() - killed
        assert taken < 2.0, f"taken over {taken:.2f} s after the kill"
        while (job := _job(role_dsn, job_id)).status == "IN_PROGRESS":
            assert time.monotonic() < deadline, "the second worker never finished the run"
            time.sleep(0.05)
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(timeout=60)
    assert job.status == "COMPLETED" and job.attempts == 2
    assert [n for n, _ in _lines(node_log)] == ["a", "b", "c", "approve", "d"], "each node finished exactly once"
    assert _lines(sent_log) == [["email", str(first.pid)]], "the email was sent once, by the killed worker"


@pytest.mark.parametrize("mode", MODES)
def test_an_interrupt_waits_for_a_person_and_another_process_resumes_it(
    role_dsn: Callable[[str], str], tmp_path: Path, mode: str
) -> None:
    queue, thread = f"gr-{uuid.uuid4().hex[:8]}", f"gr-{uuid.uuid4()}"
    node_log, sent_log = tmp_path / "nodes", tmp_path / "sent"
    env = {"NODE_LOG": str(node_log), "SENT_LOG": str(sent_log), "APPROVAL": "1"}
    job_id = _start(role_dsn, queue, thread)
    service = role_dsn("app_service")

    _drain(service, queue, mode, _env(DAY0, **env))  # runs up to the interrupt, then exits
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:  # three days later
        conn.execute("select set_config('ai.frozen_now', %s, false)", (DAY3,))
        tenant = Client(conn)
        assert tenant.get_job(job_id).status == "AWAITING_HUMAN"
        [approval] = [a for a in tenant.pending_approvals() if a.thread_id == thread]
        assert approval.action["interrupt"] == [{"send": "report", "to": "alice"}]
        assert len(approval.action["interrupt_ids"]) == 1
        assert approval.checkpoint_id == tenant.get_session(thread).current_checkpoint_id
        assert tenant.resolve_human(thread, approval.checkpoint_id, {"approved": True}).decided_at.day == 4

    _drain(service, queue, mode, _env(DAY3, **env))
    job = _job(role_dsn, job_id)
    assert job.status == "COMPLETED"
    nodes = _lines(node_log)
    assert [n for n, _ in nodes] == ["a", "b", "c", "approve", "d"]
    assert nodes[0][1] == nodes[2][1] != nodes[3][1] == nodes[4][1], "a..c in the first process, the rest after"
    assert job.result["log"][4] == f"approve ({{'approved': True}}) by {nodes[3][1]}"
    assert len(_lines(sent_log)) == 1


# -- retries and zombies, in process --------------------------------------------------------------


def _failing_graph(tmp_path: Path, mode: str) -> Any:
    return build(mode=mode, fail_once_at="c", node_log=str(tmp_path / "nodes"), sent_log=str(tmp_path / "sent"))


def _assert_retried(role_dsn: Callable[[str], str], tmp_path: Path, job_id: int) -> None:
    job = _job(role_dsn, job_id)
    assert job.status == "COMPLETED" and job.attempts == 2
    assert "RuntimeError: c failed once" in (job.last_error or "")
    assert [n for n, _ in _lines(tmp_path / "nodes")] == ["a", "b", "c", "approve", "d"], "a and b did not run again"
    assert len(_lines(tmp_path / "sent")) == 1
    assert [e.rsplit(" by ", 1)[0] for e in job.result["log"]] == [
        "input",
        "a",
        f"b (email sent by {os.getpid()})",
        "c",
        "approve",
        "d",
    ]


def test_a_retry_after_an_exception_resumes_from_the_last_checkpoint(
    role_dsn: Callable[[str], str], tmp_path: Path
) -> None:
    queue, thread = f"gr-{uuid.uuid4().hex[:8]}", f"gr-{uuid.uuid4()}"
    job_id = _start(role_dsn, queue, thread)
    graph = _failing_graph(tmp_path, "sync")
    for at, outcome in [(DAY0, "failed"), (MUCH_LATER, "completed")]:  # the retry is due after its backoff
        with ConnectionPool(role_dsn("app_service"), min_size=1, max_size=6, kwargs=_frozen_kwargs(at)) as pool:
            runs = GraphRuns(Client(pool), graph, queue=queue)
            worker = Worker(pool, runs.handler, queue, concurrency=1, poll_interval=0.05, listen=False)
            stats = worker.run(drain=True, install_signal_handlers=False)
            assert getattr(stats, outcome) == 1, stats
    _assert_retried(role_dsn, tmp_path, job_id)


def test_a_retry_after_an_exception_resumes_from_the_last_checkpoint_async(
    role_dsn: Callable[[str], str], tmp_path: Path
) -> None:
    queue, thread = f"gr-{uuid.uuid4().hex[:8]}", f"gr-{uuid.uuid4()}"
    job_id = _start(role_dsn, queue, thread)
    graph = _failing_graph(tmp_path, "async")

    async def scenario() -> None:
        for at, outcome in [(DAY0, "failed"), (MUCH_LATER, "completed")]:
            async with AsyncConnectionPool(
                role_dsn("app_service"), min_size=1, max_size=6, kwargs=_frozen_kwargs(at)
            ) as pool:
                runs = AsyncGraphRuns(AsyncClient(pool), graph, queue=queue)
                worker = AsyncWorker(pool, runs.handler, queue, concurrency=1, poll_interval=0.05, listen=False)
                stats = await worker.run(drain=True, install_signal_handlers=False)
                assert getattr(stats, outcome) == 1, stats

    asyncio.run(scenario())
    _assert_retried(role_dsn, tmp_path, job_id)


def _assert_zombie_fenced(dsn: str, thread: str, zombie_token: int, result: Any) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        tuples = list(AgentStateSaver(conn).list({"configurable": {"thread_id": thread}}))
    zombies = [t for t in tuples if t.metadata.get("fencing_token") == zombie_token]
    assert zombies, "the zombie wrote its checkpoints while it held the job"
    assert all(not any(e.startswith("c ") for e in t.checkpoint["channel_values"].get("log", [])) for t in zombies), (
        "no checkpoint of the zombie after the lease was taken over"
    )
    assert [e.rsplit(" by ", 1)[0] for e in result["log"]][3:] == ["c", "approve", "d"]


def test_a_zombies_checkpoints_are_rejected(dsn: str, role_dsn: Callable[[str], str], tmp_path: Path) -> None:
    """A worker stalls in node c past its lease; another claims the job. When the zombie's c
    returns, its checkpoint is refused (LeaseLost) and the new holder finishes from b's checkpoint."""
    queue, thread = f"gr-{uuid.uuid4().hex[:8]}", f"gr-{uuid.uuid4()}"
    job_id = _start(role_dsn, queue, thread)
    blocker, started = threading.Event(), threading.Event()
    graph = build(block_at="c", blocker=blocker, started=started, node_log=str(tmp_path / "nodes"))
    service = role_dsn("app_service")
    with (
        ConnectionPool(service, min_size=1, max_size=6, kwargs=_frozen_kwargs(DAY0)) as old,
        ConnectionPool(service, min_size=1, max_size=6, kwargs=_frozen_kwargs(LATER)) as new,
    ):
        zombie_runs, runs = GraphRuns(Client(old), graph, queue=queue), GraphRuns(Client(new), graph, queue=queue)
        claimed = Client(old).claim_job("zombie", queue=queue)
        assert claimed is not None and claimed.job_id == job_id
        outcome: list[BaseException | Any] = []

        def zombie() -> None:
            try:
                ctx = JobContext(Worker(old, zombie_runs.handler, queue), claimed)
                outcome.append(zombie_runs.handler(claimed, ctx))
            except BaseException as error:  # asserted below
                outcome.append(error)

        thread_ = threading.Thread(target=zombie)
        thread_.start()
        assert started.wait(30), "the zombie reached node c"
        taken = _claim(lambda: Client(new).claim_job("new", queue=queue))  # the lease expired on this clock
        assert taken is not None and taken.fencing_token > claimed.fencing_token
        blocker.set()
        thread_.join(30)
        assert not thread_.is_alive() and isinstance(outcome[0], LeaseLost), outcome

        result = runs.handler(taken, JobContext(Worker(new, runs.handler, queue), taken))
        Client(new).complete_job(taken.job_id, taken.fencing_token, result)
    _assert_zombie_fenced(dsn, thread, claimed.fencing_token, result)
    assert _job(role_dsn, job_id).status == "COMPLETED"


def test_a_zombies_checkpoints_are_rejected_async(dsn: str, role_dsn: Callable[[str], str], tmp_path: Path) -> None:
    queue, thread = f"gr-{uuid.uuid4().hex[:8]}", f"gr-{uuid.uuid4()}"
    job_id = _start(role_dsn, queue, thread)
    blocker, started = threading.Event(), threading.Event()
    graph = build(mode="async", block_at="c", blocker=blocker, started=started, node_log=str(tmp_path / "nodes"))
    service = role_dsn("app_service")

    async def scenario() -> tuple[int, Any]:
        async with (
            AsyncConnectionPool(service, min_size=1, max_size=6, kwargs=_frozen_kwargs(DAY0)) as old,
            AsyncConnectionPool(service, min_size=1, max_size=6, kwargs=_frozen_kwargs(LATER)) as new,
        ):
            zombie_runs = AsyncGraphRuns(AsyncClient(old), graph, queue=queue)
            runs = AsyncGraphRuns(AsyncClient(new), graph, queue=queue)
            claimed = await AsyncClient(old).claim_job("zombie", queue=queue)
            assert claimed is not None and claimed.job_id == job_id
            zombie_ctx = AsyncJobContext(AsyncWorker(old, zombie_runs.handler, queue), claimed)
            zombie = asyncio.create_task(zombie_runs.handler(claimed, zombie_ctx))
            assert await asyncio.to_thread(started.wait, 30), "the zombie reached node c"
            taken = await _aclaim(lambda: AsyncClient(new).claim_job("new", queue=queue))
            assert taken is not None and taken.fencing_token > claimed.fencing_token
            blocker.set()
            with pytest.raises(LeaseLost):
                await asyncio.wait_for(zombie, 30)
            result = await runs.handler(taken, AsyncJobContext(AsyncWorker(new, runs.handler, queue), taken))
            await AsyncClient(new).complete_job(taken.job_id, taken.fencing_token, result)
            return claimed.fencing_token, result

    token, result = asyncio.run(scenario())
    _assert_zombie_fenced(dsn, thread, token, result)
    assert _job(role_dsn, job_id).status == "COMPLETED"


def test_start_dedups_on_the_thread_and_input_unless_given_a_key(role_dsn: Callable[[str], str]) -> None:
    queue, thread = f"gr-{uuid.uuid4().hex[:8]}", f"gr-{uuid.uuid4()}"
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        runs = GraphRuns(Client(conn), build(), queue=queue)
        first = runs.start(thread, {"log": ["x"]})
        assert runs.start(thread, {"log": ["x"]}).job_id == first.job_id
        assert runs.start(thread, {"log": ["y"]}).job_id != first.job_id
        turn2 = runs.start(thread, {"log": ["x"]}, dedup_key="turn-2")
        assert turn2.job_id != first.job_id
        assert runs.start(thread, {"log": ["x"]}, dedup_key="turn-2").job_id == turn2.job_id
        assert first.payload == {"graph_input": {"log": ["x"]}} and first.queue == queue

        async def twin() -> None:
            async with await psycopg.AsyncConnection.connect(role_dsn("tenant_a"), autocommit=True) as aconn:
                aruns = AsyncGraphRuns(AsyncClient(aconn), build(), queue=queue)
                assert (await aruns.start(thread, {"log": ["x"]})).job_id == first.job_id

        asyncio.run(twin())


# -- the lease, renewed while a node runs --------------------------------------------------------

RENEWAL_LEASE = timedelta(seconds=0.9)  # the worker renews every 0.3 s of real time


def _kept_past_its_first_lease(clock: DatabaseClock, read: Callable[[], Any]) -> None:
    """Moves the worker's database clock half a lease at a time, each step only once the worker
    has renewed the lease on the clock of the step before, three times: the claim is then past
    its first lease, and held. Nothing here races the lease: it ends only if renewals stop."""
    first = read().lease_expires_at
    for _ in range(3):
        now = clock.advance(RENEWAL_LEASE / 2)

        def renewed(now: datetime = now) -> bool:
            job = read()
            assert job.status == "IN_PROGRESS", job.status
            return bool(job.lease_expires_at >= now + RENEWAL_LEASE)

        wait_until(renewed, f"a renewal of the lease on the clock {now}")
    assert clock.now > first, "the claim is past its first lease"


@pytest.mark.parametrize("mode", MODES)
def test_the_lease_is_renewed_while_a_node_runs(role_dsn: Callable[[str], str], mode: str) -> None:
    """Node c holds the run (on an event) while the test moves the worker's database clock past
    the claim's first lease, a renewal at a time: the claim outlives its lease and the run
    completes on its first attempt."""
    queue, thread = f"gr-{uuid.uuid4().hex[:8]}", f"gr-{uuid.uuid4()}"
    job_id = _start(role_dsn, queue, thread)
    blocker, started = threading.Event(), threading.Event()
    graph = build(mode=mode, block_at="c", blocker=blocker, started=started)
    service = role_dsn("app_service")
    read = lambda: _job(role_dsn, job_id)  # noqa: E731
    options: dict[str, Any] = {"concurrency": 1, "lease": RENEWAL_LEASE, "poll_interval": 0.05, "listen": False}
    clock = DatabaseClock(datetime.fromisoformat(DAY0))

    if mode == "sync":
        with ConnectionPool(service, min_size=1, max_size=6, kwargs={"autocommit": True}, check=clock.check) as pool:
            worker = Worker(pool, GraphRuns(Client(pool), graph, queue=queue).handler, queue, **options)
            outcome: list[Any] = []
            runner = threading.Thread(
                target=lambda: outcome.append(worker.run(drain=True, install_signal_handlers=False))
            )
            runner.start()
            try:
                assert started.wait(30), "node c started"
                _kept_past_its_first_lease(clock, read)
            finally:
                blocker.set()
                runner.join(30)
            stats = outcome[0]
    else:

        async def scenario() -> Any:
            async with AsyncConnectionPool(
                service, min_size=1, max_size=6, kwargs={"autocommit": True}, check=clock.acheck
            ) as pool:
                runs = AsyncGraphRuns(AsyncClient(pool), graph, queue=queue)
                task = asyncio.create_task(
                    AsyncWorker(pool, runs.handler, queue, **options).run(drain=True, install_signal_handlers=False)
                )
                try:
                    assert await asyncio.to_thread(started.wait, 30), "node c started"
                    await asyncio.to_thread(_kept_past_its_first_lease, clock, read)
                finally:
                    blocker.set()
                return await asyncio.wait_for(task, 30)

        stats = asyncio.run(scenario())
    assert (stats.completed, stats.lost, stats.failed) == (1, 0, 0), stats
    job = read()
    assert job.status == "COMPLETED" and job.attempts == 1


def test_a_claim_after_the_graph_finished_completes_with_the_final_state_and_runs_nothing(
    role_dsn: Callable[[str], str], tmp_path: Path
) -> None:
    """The worker died after the last checkpoint, before complete_job: the next claim finds the
    graph at its end (plan "resume"), runs no node and completes the job with the final state."""
    queue, thread = f"gr-{uuid.uuid4().hex[:8]}", f"gr-{uuid.uuid4()}"
    job_id = _start(role_dsn, queue, thread)
    graph = build(node_log=str(tmp_path / "nodes"), sent_log=str(tmp_path / "sent"))
    service = role_dsn("app_service")
    with (
        ConnectionPool(service, min_size=1, max_size=6, kwargs=_frozen_kwargs(DAY0)) as old,
        ConnectionPool(service, min_size=1, max_size=6, kwargs=_frozen_kwargs(LATER)) as new,
    ):
        runs = GraphRuns(Client(new), graph, queue=queue)
        first = Client(old).claim_job("dies-before-complete", queue=queue)
        assert first is not None and runs.plan(first).mode == "start"
        final = GraphRuns(Client(old), graph, queue=queue).handler(first, JobContext(Worker(old, runs.handler), first))
        assert len(_lines(tmp_path / "nodes")) == 5  # ...and the worker dies here, the job not completed

        again = _claim(lambda: Client(new).claim_job("next", queue=queue))
        assert again is not None and again.job_id == job_id and runs.plan(again).mode == "resume"
        Client(new).release_job(again.job_id, again.fencing_token)  # let a real worker take it
        worker = Worker(new, runs.handler, queue, concurrency=1, poll_interval=0.05, listen=False)
        assert worker.run(drain=True, install_signal_handlers=False).completed == 1
    assert len(_lines(tmp_path / "nodes")) == 5, "no node ran again"
    job = _job(role_dsn, job_id)
    assert job.status == "COMPLETED" and job.result == final
