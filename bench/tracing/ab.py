"""The cost of tracing (issue 39): a worker's time per job (claim, hand-out, completion) and a
graph run's time per step, with tracing off, with the OpenTelemetry API but no SDK, and with the
SDK recording (a batch span processor whose exporter drops the spans, an in-memory metric
reader), against the same loop of a base tree without tracing (BASE_PYTHONPATH: main where this branch
left it).

    ab.py URL ROUNDS JOBS STEPS          the driver (bench/tracing.sh): paired rounds, medians
    ab.py one VARIANT URL JOBS STEPS     one measurement, in a process of its own (JSON on stdout)

Each round runs every variant once, in a rotated order, each in a fresh process; the ratios are
taken within a round (the machine's load falls on all variants of a round alike), then their
median over the rounds. URL: a member of ai_service, in a database whose threads bt-0 ... exist."""

from __future__ import annotations

import itertools
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from typing import Any

VARIANTS = ("base", "off", "api", "on")


def _sdk() -> None:
    """The SDK, recording everything, exporting nowhere (the cost of the spans and instruments)."""
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Drop(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Drop()))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))


def _graph(steps: int) -> Any:
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class State(TypedDict, total=False):
        n: int

    builder = StateGraph(State)
    names = [f"n{i}" for i in range(steps)]
    for name in names:
        builder.add_node(name, lambda state: {"n": state.get("n", 0) + 1})
    builder.add_edge(START, names[0])
    for a, b in itertools.pairwise(names):
        builder.add_edge(a, b)
    builder.add_edge(names[-1], END)
    return builder.compile()


def one(variant: str, url: str, jobs: int, steps: int) -> dict[str, float]:
    if variant == "on":
        _sdk()
    from psycopg_pool import ConnectionPool

    from agent_state import Client, NewJob, Worker
    from agent_state.graph_runs import GraphRuns

    options: dict[str, Any] = {"poll_interval": 0.01, "listen": False, "liveness": False}
    with ConnectionPool(url, min_size=4, max_size=8, kwargs={"autocommit": True}) as pool:
        client = Client(pool)
        queue = f"bt-{uuid.uuid4().hex[:8]}"
        client.enqueue_jobs([NewJob(f"bt-{i}") for i in range(jobs)], queue)
        worker = Worker(pool, lambda job, ctx: None, queue, concurrency=4, prefetch=16, **options)
        started = time.perf_counter()
        worker.run(drain=True, install_signal_handlers=False)
        per_job = (time.perf_counter() - started) * 1000 / jobs

        runs = GraphRuns(client, _graph(steps), queue=f"{queue}-g")
        thread = f"bt-g-{uuid.uuid4().hex[:8]}"
        runs.start(thread, {"n": 0})
        worker = Worker(pool, runs.handler, runs.queue, concurrency=1, **options)
        started = time.perf_counter()
        worker.run(drain=True, install_signal_handlers=False)
        per_step = (time.perf_counter() - started) * 1000 / steps
    return {"job_ms": per_job, "step_ms": per_step}


def driver(url: str, rounds: int, jobs: int, steps: int) -> None:
    head = os.environ.get("HEAD_PYTHONPATH", "")
    base = os.environ.get("BASE_PYTHONPATH", "")
    variants = [v for v in VARIANTS if v != "base" or base]
    ratios: dict[str, dict[str, list[float]]] = {k: {v: [] for v in variants} for k in ("job_ms", "step_ms")}
    figures: dict[str, dict[str, list[float]]] = {k: {v: [] for v in variants} for k in ("job_ms", "step_ms")}
    for r in range(rounds):
        got: dict[str, dict[str, float]] = {}
        for variant in variants[r % len(variants) :] + variants[: r % len(variants)]:
            env = dict(os.environ, PYTHONPATH=base if variant == "base" else head, PYTHONDONTWRITEBYTECODE="1")
            env["AGENT_STATE_OTEL"] = "off" if variant == "off" else "on"
            done = subprocess.run(
                [sys.executable, __file__, "one", variant, url, str(jobs), str(steps)],
                env=env,
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                sys.exit(f"tracing bench: the {variant} variant failed:\n{done.stderr}")
            got[variant] = json.loads(done.stdout.strip().splitlines()[-1])
        reference = "base" if base else "off"
        for k in ratios:
            for v in variants:
                figures[k][v].append(got[v][k])
                ratios[k][v].append(got[v][k] / got[reference][k])
    print(f"tracing cost: {rounds} paired rounds, {jobs} no-op jobs (4 handlers) and a {steps}-step graph run each;")
    print(f"medians; ratio: per round against {'the base tree (tracing absent)' if base else 'tracing off'}")
    names = {
        "base": "base tree (no tracing)",
        "off": "AGENT_STATE_OTEL=off",
        "api": "API, no SDK",
        "on": "SDK recording",
    }
    print(f"{'variant':<26}{'ms/job':>9}{'ratio':>8}{'ms/step':>10}{'ratio':>8}")
    for v in variants:
        print(
            f"{names[v]:<26}{statistics.median(figures['job_ms'][v]):>9.3f}{statistics.median(ratios['job_ms'][v]):>8.3f}"
            f"{statistics.median(figures['step_ms'][v]):>10.3f}{statistics.median(ratios['step_ms'][v]):>8.3f}"
        )


if __name__ == "__main__":
    if sys.argv[1] == "one":
        print(json.dumps(one(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))))
    else:
        driver(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
