"""OpenTelemetry traces and the Worker's instruments (agent_state.tracing; docs/observability.md),
read back through the SDK's in-memory span exporter and metric reader:

- an enqueue stores the caller's W3C trace context in the job's headers (and refuses headers that
  are no object of strings: AS002);
- ``make demo``'s crash-and-resume run, in this process: worker 1 stalls in the model call of
  node ``draft`` after the email went out, worker 2 takes its job over, the run waits for a person,
  is approved and completes. One trace, the enqueuing request's: three attempt spans (the first
  ends with its lease lost, the second carries the takeover event), a span per node with its
  checkpoint, and one email executed (the rerun of ``draft`` finds it cached);
- the instruments' values after a known sequence (a completion, a retry, a dead letter, a fence
  refusal, a takeover);
- off: no span, no header.

Time never races a lease: the workers' pools run on frozen database clocks (ai.frozen_now), worker
2's past worker 1's lease; every wait is on a condition and bounded."""

from __future__ import annotations

import asyncio
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psycopg
import pytest
from langchain_core.runnables import RunnableConfig
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from psycopg_pool import ConnectionPool
from waiting import wait_until

from agent_state import Client, InvalidArgument, Job, JobContext, LeaseLost, NewJob, Worker, tracing
from agent_state.graph_runs import GraphRuns

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
import demo  # noqa: E402

pytestmark = pytest.mark.session_features("the frozen clock ai.frozen_now of the workers' pools, a session setting")

DAY0, LATER = "2030-01-01T00:00:00Z", "2030-01-01T00:05:00Z"


def _frozen(at: str) -> dict[str, Any]:
    return {"autocommit": True, "options": f"-c ai.frozen_now={at}"}


@pytest.fixture
def otel() -> Iterator[SimpleNamespace]:
    exporter = InMemorySpanExporter()
    spans = TracerProvider()
    spans.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    tracing.configure(tracer_provider=spans, meter_provider=meters)
    try:
        yield SimpleNamespace(exporter=exporter, reader=reader, tracer=spans.get_tracer("test"))
    finally:
        tracing.configure()
        spans.shutdown()
        meters.shutdown()


def _hex(trace_id: int) -> str:
    return format(trace_id, "032x")


# -- the enqueuer ---------------------------------------------------------------------------------


def test_an_enqueue_stores_the_trace_context_of_its_caller(
    otel: SimpleNamespace, conn: psycopg.Connection[Any], thread_id: str
) -> None:
    client = Client(conn)
    queue = f"tr-{uuid.uuid4().hex[:8]}"
    client.create_session(thread_id)
    with otel.tracer.start_as_current_span("POST /runs") as request:
        job = client.enqueue_job(thread_id, {"n": 1}, queue, headers={"x-request-id": "r-1"})
        batch = client.enqueue_jobs([NewJob(thread_id, {"n": 2}), NewJob(thread_id, {"n": 3})], queue)
    trace_id = _hex(request.get_span_context().trace_id)
    assert job.headers is not None and job.headers["x-request-id"] == "r-1"
    assert job.headers["traceparent"].split("-")[1] == trace_id
    assert [j.headers["traceparent"].split("-")[1] for j in batch if j.headers] == [trace_id, trace_id]
    assert client.get_job(job.job_id).headers == job.headers
    assert client.enqueue_job(thread_id, {"n": 4}, queue).headers is None  # no current trace: none
    for bad in ({"n": 1}, {"a": ["b"]}, {"big": "x" * 9000}):
        with pytest.raises(InvalidArgument):
            client.enqueue_job(thread_id, {}, queue, headers=bad)  # type: ignore[arg-type]
    with pytest.raises(psycopg.Error) as raised:
        conn.execute("select ai.enqueue_job(%s, '{}', %s, headers => '[1]')", (thread_id, queue))
    assert raised.value.sqlstate == "AS002"


def test_nothing_is_emitted_when_tracing_is_off(client: Client, thread_id: str) -> None:
    exporter = InMemorySpanExporter()
    spans = TracerProvider()
    spans.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.configure(enabled=False, tracer_provider=spans)
    try:
        assert not tracing.enabled()
        queue = f"tr-{uuid.uuid4().hex[:8]}"
        client.create_session(thread_id)
        with spans.get_tracer("test").start_as_current_span("POST /runs"):
            job = client.enqueue_job(thread_id, {}, queue)
        assert job.headers is None
        assert tracing.worker_telemetry(queue, "w") is None
        assert [s.name for s in exporter.get_finished_spans()] == ["POST /runs"]
    finally:
        tracing.configure()


# -- make demo's crash and resume, as one trace ---------------------------------------------------


def _spans(otel: SimpleNamespace) -> list[ReadableSpan]:
    return list(otel.exporter.get_finished_spans())


def test_the_demo_run_is_one_trace_with_its_attempts_steps_and_one_email(
    otel: SimpleNamespace, role_dsn: Callable[[str], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue, thread = f"demo-{uuid.uuid4().hex[:8]}", f"research-{uuid.uuid4().hex[:8]}"
    outbox = tmp_path / "outbox.jsonl"
    outbox.touch()
    monkeypatch.setenv(demo.OUTBOX_ENV, str(outbox))
    monkeypatch.setenv(demo.STALL_ENV, "draft")  # worker 1's model call in draft hangs
    service = role_dsn("app_service")
    demo.STALL.clear()
    with (
        ConnectionPool(service, min_size=1, max_size=6, kwargs=_frozen(DAY0)) as old,
        ConnectionPool(service, min_size=1, max_size=6, kwargs=_frozen(LATER)) as new,
    ):
        client = Client(old)
        with otel.tracer.start_as_current_span("POST /research") as request, client.acting_as(demo.USER) as user:
            job = GraphRuns(user, demo.graph, queue=queue).start(thread, {"question": demo.QUESTION})
        trace_id = request.get_span_context().trace_id

        def run(worker: Worker) -> threading.Thread:
            thread_ = threading.Thread(target=worker.run, kwargs={"install_signal_handlers": False}, daemon=True)
            thread_.start()
            return thread_

        options: dict[str, Any] = {"concurrency": 1, "poll_interval": 0.05, "listen": False, "liveness": False}
        first = Worker(old, GraphRuns(Client(old), demo.graph, queue=queue).handler, queue, worker_id="w1", **options)
        second = Worker(new, GraphRuns(Client(new), demo.graph, queue=queue).handler, queue, worker_id="w2", **options)
        first_thread = run(first)
        try:
            wait_until(
                lambda: any(e.payload.get("node") == "draft" for e in client.get_events(thread, kinds=["model_call"])),
                "worker 1 to reach the model call in draft",
            )
            monkeypatch.delenv(demo.STALL_ENV)  # worker 2's draft runs through
            second_thread = run(second)
            wait_until(lambda: client.get_job(job.job_id).status == "AWAITING_HUMAN", "the run to wait for a person")
            demo.STALL.set()  # worker 1 wakes up fenced out: its attempt ends with its lease lost
            wait_until(lambda: first.stats.lost == 1, "worker 1 to find its lease lost")
            first.stop()  # the run's last claim is worker 2's
            first_thread.join(30)
            [approval] = [a for a in client.pending_approvals() if a.thread_id == thread]
            with client.acting_as(demo.USER) as user:
                user.resolve_human(thread, approval.checkpoint_id, {"approved": True, "note": "ship it"})
            wait_until(lambda: client.get_job(job.job_id).status == "COMPLETED", "the run to complete")
        finally:
            demo.STALL.set()
            first.stop()
            second.stop()
            first_thread.join(30)
            if "second_thread" in locals():
                second_thread.join(30)

    assert len(outbox.read_text().splitlines()) == 1  # the one email
    spans = _spans(otel)
    assert {s.context.trace_id for s in spans} == {trace_id}, "one trace, the enqueuing request's"
    by_id = {s.context.span_id: s for s in spans}
    attempts = sorted((s for s in spans if s.name == f"process {queue}"), key=lambda s: s.start_time or 0)
    # the claim after the person's decision is no new attempt (a pause does not count one)
    assert [(a.attributes["agent_state.attempt"], a.attributes["agent_state.worker_id"],
             a.attributes["agent_state.outcome"]) for a in attempts] == [
        (1, "w1", "lost"), (2, "w2", "paused"), (2, "w2", "completed")]  # fmt: skip
    for a in attempts:
        assert (
            a.kind is SpanKind.CONSUMER
            and a.parent is not None
            and a.parent.span_id == request.get_span_context().span_id
        )
        assert [link.context.span_id for link in a.links] == [request.get_span_context().span_id]
        assert a.attributes["messaging.system"] == "agent_state"
        assert a.attributes["messaging.destination.name"] == queue
        assert a.attributes["agent_state.thread_id"] == thread and a.attributes["agent_state.job_id"] == job.job_id
    assert attempts[0].status.status_code is StatusCode.ERROR
    assert attempts[1].attributes["agent_state.fencing_token"] > attempts[0].attributes["agent_state.fencing_token"]
    [takeover] = [e for e in attempts[1].events if e.name == "agent_state.takeover"]
    assert takeover.attributes["agent_state.previous.worker_id"] == "w1"
    assert not [e for a in (attempts[0], attempts[2]) for e in a.events if e.name == "agent_state.takeover"]

    def steps(attempt: ReadableSpan) -> list[tuple[str, bool]]:
        """Its step spans, in order: the node and whether a checkpoint was saved."""
        found = [s for s in spans if s.parent is not None and s.parent.span_id == attempt.context.span_id]
        found.sort(key=lambda s: s.start_time or 0)
        return [(s.attributes["langgraph.node"], "agent_state.checkpoint_id" in s.attributes) for s in found]

    assert steps(attempts[0]) == [("plan", True), ("research", True), ("draft", False)]
    assert steps(attempts[1]) == [("draft", True), ("approve", True)]
    assert steps(attempts[2]) == [("approve", True), ("publish", True)]
    emails = [s for s in spans if s.name == "side_effect email"]
    assert sorted(s.attributes["agent_state.side_effect.outcome"] for s in emails) == ["cached", "executed"]
    for email in emails:  # each under the draft step that ran it
        assert email.parent is not None and by_id[email.parent.span_id].name == "step draft"
    [executed] = [s for s in emails if s.attributes["agent_state.side_effect.outcome"] == "executed"]
    assert by_id[executed.parent.span_id].parent.span_id == attempts[0].context.span_id  # type: ignore[union-attr]
    checkpoint = next(s for s in spans if s.name == "step research").attributes["agent_state.checkpoint_id"]
    with psycopg.connect(service, autocommit=True) as conn:
        assert Client(conn).get_checkpoint(thread, checkpoint_id=str(checkpoint)) is not None


# -- the Worker's instruments ---------------------------------------------------------------------


def _points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    data = reader.get_metrics_data()
    found: dict[str, list[Any]] = {}
    for resource in data.resource_metrics if data else []:
        for scope in resource.scope_metrics:
            if scope.scope.name == tracing.INSTRUMENTATION:
                for metric in scope.metrics:
                    found[metric.name] = list(metric.data.data_points)
    return found


def _total(points: dict[str, list[Any]], name: str) -> int:
    return sum(int(p.value) for p in points.get(name, []))


def test_the_worker_instruments_count_a_known_sequence(
    otel: SimpleNamespace, role_dsn: Callable[[str], str], thread_id: str
) -> None:
    queue = f"tr-{uuid.uuid4().hex[:8]}"
    service = role_dsn("app_service")
    threads = {name: f"{thread_id}-{name}" for name in ("take", "ok", "retry", "cancel")}
    with (
        ConnectionPool(service, min_size=1, max_size=6, kwargs=_frozen(DAY0)) as old,
        ConnectionPool(service, min_size=1, max_size=8, kwargs=_frozen(LATER)) as new,
    ):
        setup = Client(old)
        jobs: dict[str, Job] = {}
        for name, thread in threads.items():
            setup.create_session(thread)
            jobs[name] = setup.enqueue_job(thread, {"do": name}, queue, max_attempts=2)
        ghost = setup.claim_job("ghost", timedelta(seconds=60), queue)  # dies at once: its lease ends before LATER
        assert ghost is not None and ghost.job_id == jobs["take"].job_id
        refusals: list[LeaseLost] = []

        def handler(job: Job, ctx: JobContext) -> Any:
            if job.payload["do"] == "retry":
                if job.attempts == 1:
                    ctx.fail("try again", retry_in=timedelta(0))
                    return None
                raise RuntimeError("still failing")  # the last attempt: a dead letter
            if job.payload["do"] == "cancel":
                Client(new).cancel_job(job.job_id)
                try:
                    with ctx.fenced():
                        pass
                except LeaseLost as error:
                    refusals.append(error)
                    raise
            return "done"

        worker = Worker(new, handler, queue, concurrency=1, poll_interval=0.05, listen=False, liveness=False)
        stats = worker.run(drain=True, install_signal_handlers=False)

    assert len(refusals) == 1
    points = _points(otel.reader)
    assert _total(points, "agent_state.worker.takeovers") == 1
    assert _total(points, "agent_state.worker.fence_refusals") == 1
    assert _total(points, "agent_state.worker.leases_lost") == 1 == stats.lost
    assert _total(points, "agent_state.worker.retries") == 1
    assert _total(points, "agent_state.worker.dead_letters") == 1
    runs = {p.attributes["agent_state.outcome"]: p.count for p in points["agent_state.worker.run.duration"]}
    assert runs == {"completed": 2, "failed": 2, "lost": 1}
    assert sum(p.count for p in points["agent_state.worker.claim.duration"]) >= 1
    assert sum(p.count for p in points["agent_state.worker.job.wait"]) == sum(runs.values()) - 1  # not the takeover
    for p in points["agent_state.worker.takeovers"]:
        assert p.attributes == {"messaging.system": "agent_state", "messaging.destination.name": queue}
    spans = [s for s in _spans(otel) if s.name == f"process {queue}"]
    [taken] = [s for s in spans if any(e.name == "agent_state.takeover" for e in s.events)]
    assert taken.attributes["agent_state.job_id"] == ghost.job_id
    assert taken.attributes["agent_state.attempt"] == 2
    assert {s.attributes["agent_state.thread_id"] for s in spans} == set(threads.values())
    assert len({s.context.trace_id for s in spans if s.attributes["agent_state.job_id"] == jobs["retry"].job_id}) == 1


def test_an_async_graph_run_has_its_steps_under_its_attempt(
    otel: SimpleNamespace, role_dsn: Callable[[str], str], thread_id: str
) -> None:
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph
    from psycopg_pool import AsyncConnectionPool

    from agent_state import AsyncClient, AsyncWorker
    from agent_state.graph_runs import AsyncGraphRuns, job_context

    class State(TypedDict, total=False):
        n: int

    async def tool(state: State, config: RunnableConfig) -> State:
        await job_context(config).side_effect("notify", state.get("n")).arun(_receipt)
        return {"n": state.get("n", 0) + 1}

    builder = StateGraph(State)
    builder.add_node("first", lambda state: {"n": state.get("n", 0) + 1})
    builder.add_node("second", tool)
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", END)
    graph = builder.compile()
    queue = f"tr-{uuid.uuid4().hex[:8]}"

    async def scenario() -> None:
        async with AsyncConnectionPool(role_dsn("app_service"), min_size=1, max_size=4, kwargs=_frozen(DAY0)) as pool:
            runs = AsyncGraphRuns(AsyncClient(pool), graph, queue=queue)
            job = await runs.start(thread_id, {"n": 0})
            worker = AsyncWorker(pool, runs.handler, queue, concurrency=1, poll_interval=0.05, listen=False)
            stats = await worker.run(drain=True, install_signal_handlers=False)
            assert stats.completed == 1, (await AsyncClient(pool).get_job(job.job_id)).last_error

    asyncio.run(scenario())
    spans = _spans(otel)
    [attempt] = [s for s in spans if s.name == f"process {queue}"]
    steps = sorted(
        (s for s in spans if s.parent is not None and s.parent.span_id == attempt.context.span_id),
        key=lambda s: s.start_time or 0,
    )
    assert [(s.name, s.attributes["langgraph.step"]) for s in steps] == [("step first", 1), ("step second", 2)]
    assert all(s.attributes["agent_state.checkpoint_id"] for s in steps)
    [notify] = [s for s in spans if s.name == "side_effect notify"]
    assert notify.parent is not None and notify.parent.span_id == steps[1].context.span_id
    assert notify.attributes["agent_state.side_effect.outcome"] == "executed"


async def _receipt(call: Any) -> dict[str, str]:
    return {"key": call.key}
