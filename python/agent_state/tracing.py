"""OpenTelemetry traces and metrics of the Worker: run attempts, graph steps, side effects (issue 39).

Built on ``opentelemetry-api`` only (the extra ``otel``); the application brings the SDK, its
exporters and its sampler, as with any instrumented library. What is emitted
(docs/observability.md, "Traces" and "The Worker's instruments", has every name):

- **a span per run attempt**, ``process <queue>`` (kind CONSUMER, OpenTelemetry's messaging
  conventions: ``messaging.system`` ``agent_state``, ``messaging.destination.name`` the queue,
  ``messaging.operation`` ``process``), from the claim to the completion, the failure, the pause
  for a person, the release or the lost lease, with ``agent_state.thread_id``,
  ``agent_state.job_id``, ``agent_state.attempt``, ``agent_state.fencing_token``,
  ``agent_state.queue`` and ``agent_state.outcome``. A claim that took over an expired lease adds
  the event ``agent_state.takeover`` (the previous attempt's worker, token, claim and lease expiry);
  a retry after a failure the event ``agent_state.retry``;
- **a span per graph step**, ``step <node>`` (a child of the attempt), with ``langgraph.node``,
  ``langgraph.step`` and ``agent_state.checkpoint_id`` (the checkpoint the step saved);
- **a span per side effect**, ``side_effect <first key part>`` (a child of the running step, else
  of the attempt), with ``agent_state.idempotency_key`` and ``agent_state.side_effect.outcome``:
  ``executed``, ``cached`` (the recorded result, the tool not called) or ``taken_over`` (executed
  again after a dead holder's reservation was taken over);
- **the enqueuer's trace context**: ``enqueue_job`` stores the current W3C ``traceparent`` and
  ``tracestate`` (the global propagator's fields) in the job's ``headers``; every attempt span is a
  child of that context and links to it (the messaging conventions' creation context), so an
  HTTP request, the run it enqueued, each attempt, each step and each tool call are one trace. A job
  enqueued without one gets a trace id derived from the job, so its attempts are one trace still.

Off: without ``opentelemetry-api``, with ``AGENT_STATE_OTEL=off`` in the environment, or after
``configure(enabled=False)``, nothing here runs: the hooks see ``None`` and return (the API is
imported once, when the first worker is made or the first job enqueued, never on a job's path).
With the API but no SDK the spans are OpenTelemetry's non-recording ones and the graph runs as
without tracing (``invoke``, not the step stream).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, ClassVar

__all__ = ["ENV", "INSTRUMENTATION", "configure", "enabled", "inject_headers"]

#: The environment variable that turns the spans and instruments off (``off``, ``0``, ``false``).
ENV = "AGENT_STATE_OTEL"
#: The instrumentation scope (tracer and meter name) and the ``messaging.system`` value.
INSTRUMENTATION = "agent_state"

_UNSET: Any = object()
_resolved: Any = _UNSET  # _Api, or None when off
_lock = threading.Lock()
_enabled: bool | None = None
_tracer_provider: Any = None
_meter_provider: Any = None


def configure(*, enabled: bool | None = None, tracer_provider: Any = None, meter_provider: Any = None) -> None:
    """Turns tracing on or off (``None``: on when opentelemetry-api is installed and
    ``AGENT_STATE_OTEL`` is not ``off``), and names the providers to use instead of the global
    ones (``trace.set_tracer_provider``, ``metrics.set_meter_provider``). Workers made afterwards,
    and enqueues from now on, follow it."""
    global _resolved, _enabled, _tracer_provider, _meter_provider
    with _lock:
        _enabled, _tracer_provider, _meter_provider = enabled, tracer_provider, meter_provider
        _resolved = _UNSET


def enabled() -> bool:
    """Whether spans and instruments are emitted (the SDK may still sample or drop them)."""
    return _api() is not None


def _api() -> _Api | None:
    resolved = _resolved
    if resolved is _UNSET:
        with _lock:
            if _resolved is _UNSET:
                _set(_make())
            resolved = _resolved
    return resolved  # type: ignore[no-any-return]


def _set(value: _Api | None) -> None:
    global _resolved
    _resolved = value


def _make() -> _Api | None:
    on = _enabled
    if on is None:
        on = os.environ.get(ENV, "").strip().lower() not in ("off", "0", "false", "no")
    if not on:
        return None
    try:
        return _Api(_tracer_provider, _meter_provider)
    except ImportError:
        return None


def _version() -> str | None:
    try:
        from importlib.metadata import version

        return version("agent-state")
    except Exception:  # not installed as a distribution (a source tree on sys.path)
        return None


class _Api:
    """The OpenTelemetry modules, the tracer, and the Worker's instruments (made once)."""

    def __init__(self, tracer_provider: Any, meter_provider: Any) -> None:
        from opentelemetry import metrics, propagate, trace

        self.trace = trace
        self.propagate = propagate
        version = _version()
        self.tracer = trace.get_tracer(INSTRUMENTATION, version, tracer_provider)
        meter = metrics.get_meter(INSTRUMENTATION, version or "", meter_provider)
        for attribute, kind, name, unit, description in INSTRUMENTS:
            make = meter.create_histogram if kind == "histogram" else meter.create_counter
            setattr(self, attribute, make(name, unit=unit, description=description))

    claim_duration: Any
    job_wait: Any
    run_duration: Any
    takeovers: Any
    leases_lost: Any
    fence_refusals: Any
    retries: Any
    dead_letters: Any


#: The Worker's instruments: attribute, kind, name, unit, description (docs/observability.md).
#: Every one carries ``messaging.system`` and ``messaging.destination.name`` (the queue); the claim's
#: ``messaging.operation.name`` too, the run's ``agent_state.outcome``.
INSTRUMENTS = (
    ("claim_duration", "histogram", "agent_state.worker.claim.duration", "s",
     "The round trip of one claim (ai.claim_jobs, or ai.complete_and_claim with completions)"),
    ("job_wait", "histogram", "agent_state.worker.job.wait", "s",
     "From the time a job was due (run_at) to its claim, by the database's clock (not for takeovers)"),
    ("run_duration", "histogram", "agent_state.worker.run.duration", "s",
     "One run attempt, from its claim to its end, by outcome"),
    ("takeovers", "counter", "agent_state.worker.takeovers", "{attempt}",
     "Claims that took over a job whose previous attempt's lease had expired"),
    ("leases_lost", "counter", "agent_state.worker.leases_lost", "{attempt}",
     "Attempts of this worker that ended with their lease lost (expired, taken over, cancelled)"),
    ("fence_refusals", "counter", "agent_state.worker.fence_refusals", "{refusal}",
     "Writes refused by the fence (AS006, LeaseLost) that the Worker met"),
    ("retries", "counter", "agent_state.worker.retries", "{attempt}",
     "Failed attempts whose job is retried (attempts remain)"),
    ("dead_letters", "counter", "agent_state.worker.dead_letters", "{job}",
     "Failed attempts that were their job's last (the job is FAILED)"),
)  # fmt: skip


# -- the enqueuer ---------------------------------------------------------------------------------


def inject_headers(headers: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """The headers an enqueue stores: the current trace context (``traceparent``, ``tracestate``,
    as the global propagator writes them) under the caller's ``headers`` (which win). None when
    there is neither."""
    api = _api()
    carrier: dict[str, str] = {}
    if api is not None:
        api.propagate.inject(carrier)
    if headers:
        carrier.update(headers)
    return carrier or None


# -- the worker -----------------------------------------------------------------------------------


def worker_telemetry(queue: str, worker_id: str) -> WorkerTelemetry | None:
    """The telemetry of one worker, or None when tracing is off."""
    api = _api()
    return None if api is None else WorkerTelemetry(api, queue, worker_id)


class _Attempt:
    """What one claimed job's telemetry keeps (``ctx.trace``)."""

    __slots__ = ("refusals", "span", "started", "steps")

    def __init__(self, span: Any, started: float) -> None:
        self.span = span
        self.started = started  # monotonic seconds
        self.refusals: set[int] = set()  # id() of the LeaseLost errors counted
        self.steps: dict[str, Any] = {}  # task id -> the span of a graph step that is running


def _previous_attempt(job: Any) -> dict[str, Any] | None:
    log = getattr(job, "attempt_log", None)
    if not log or not isinstance(log, list):
        return None
    last = log[-1]
    if isinstance(last, dict) and last.get("attempt") == job.attempts - 1:
        return last
    return None


def _job_context(api: Any, job: Any) -> tuple[Any, list[Any]]:
    """The attempt span's parent and links: the enqueuer's context (parent and link), else a
    context derived from the job, so that every attempt of it is one trace."""
    headers = getattr(job, "headers", None)
    if headers:
        parent = api.propagate.extract(headers)
        found = api.trace.get_current_span(parent).get_span_context()
        if found.is_valid:
            return parent, [api.trace.Link(found)]
    digest = hashlib.sha256(f"agent_state job\0{job.owner}\0{job.thread_id}\0{job.job_id}".encode())  # as TypeScript's
    raw = digest.digest()
    derived = api.trace.SpanContext(
        trace_id=int.from_bytes(raw[:16], "big") or 1,
        span_id=int.from_bytes(raw[16:24], "big") or 1,
        is_remote=True,
        trace_flags=api.trace.TraceFlags(api.trace.TraceFlags.SAMPLED),
    )
    return api.trace.set_span_in_context(api.trace.NonRecordingSpan(derived)), []


class WorkerTelemetry:
    """One worker's spans and instruments. The core calls :meth:`started` at the claim and
    :meth:`ended` when the job leaves the worker; the drivers :meth:`claim_took` and
    :meth:`scope` (the attempt span as the current span while the handler runs)."""

    def __init__(self, api: _Api, queue: str, worker_id: str) -> None:
        self.api = api
        self.queue = queue
        self.worker_id = worker_id
        self.labels = {"messaging.system": INSTRUMENTATION, "messaging.destination.name": queue}
        self._kind = api.trace.SpanKind.CONSUMER
        self._error = api.trace.StatusCode.ERROR

    def claim_took(self, seconds: float, operation: str) -> None:
        self.api.claim_duration.record(seconds, {**self.labels, "messaging.operation.name": operation})

    def started(self, ctx: Any, now: float) -> None:
        """A job was claimed: its attempt span starts (``ctx.trace``)."""
        api, job = self.api, ctx.job
        parent, links = _job_context(api, job)
        span = api.tracer.start_span(
            f"process {job.queue}",
            context=parent,
            kind=self._kind,
            links=links,
            attributes={
                "messaging.system": INSTRUMENTATION,
                "messaging.destination.name": job.queue,
                "messaging.operation": "process",
                "messaging.operation.type": "process",
                "messaging.message.id": str(job.job_id),
                "agent_state.thread_id": job.thread_id,
                "agent_state.job_id": job.job_id,
                "agent_state.attempt": job.attempts,
                "agent_state.fencing_token": job.fencing_token,
                "agent_state.queue": job.queue,
                "agent_state.worker_id": self.worker_id,
            },
        )
        ctx.trace = _Attempt(span, now)
        previous = _previous_attempt(job)
        if previous is not None and previous.get("outcome") == "expired":
            self.api.takeovers.add(1, self.labels)
            span.add_event(
                "agent_state.takeover",
                {
                    "agent_state.previous.worker_id": str(previous.get("worker") or ""),
                    "agent_state.previous.fencing_token": int(previous.get("fencing_token") or 0),
                    "agent_state.previous.claimed_at": str(previous.get("claimed_at") or ""),
                    "agent_state.previous.lease_expires_at": str(previous.get("lease_expires_at") or ""),
                },
            )
        elif previous is not None and previous.get("outcome") == "failed":
            span.add_event("agent_state.retry", {"agent_state.previous.error": str(previous.get("error") or "")})
        if previous is None or previous.get("outcome") != "expired":
            claimed_at, run_at = getattr(job, "claimed_at", None), getattr(job, "run_at", None)
            if claimed_at is not None and run_at is not None:
                self.api.job_wait.record(max(0.0, (claimed_at - run_at).total_seconds()), self.labels)

    def scope(self, ctx: Any) -> AbstractContextManager[Any]:
        """The attempt span as the current span (the handler's logs, steps and side effects)."""
        attempt = ctx.trace
        if attempt is None:
            return nullcontext()
        scope: AbstractContextManager[Any] = self.api.trace.use_span(
            attempt.span, end_on_exit=False, record_exception=False, set_status_on_exception=False
        )
        return scope

    def refused(self, ctx: Any, error: BaseException) -> None:
        """A fence refusal (LeaseLost, AS006) met while running ``ctx``'s job; each error once."""
        attempt = ctx.trace
        if attempt is not None:
            if id(error) in attempt.refusals:
                return
            attempt.refusals.add(id(error))
            attempt.span.add_event("agent_state.fence_refusal", {"exception.message": str(error)[:500]})
        self.api.fence_refusals.add(1, self.labels)

    def ended(self, ctx: Any, outcome: str, error: BaseException | None, now: float) -> None:
        """The job left the worker: ``completed``, ``failed``, ``paused`` (a person's turn),
        ``snoozed``, ``timed_out`` (its attempt's deadline passed), ``released`` or ``lost``; its
        attempt span ends."""
        attempt = ctx.trace
        if attempt is None:
            return
        ctx.trace = None
        span, api = attempt.span, self.api
        for step in attempt.steps.values():  # a step the handler left running
            step.set_status(self._error, "the attempt ended first")
            step.end()
        api.run_duration.record(max(0.0, now - attempt.started), {**self.labels, "agent_state.outcome": outcome})
        span.set_attribute("agent_state.outcome", outcome)
        if outcome == "lost":
            api.leases_lost.add(1, self.labels)
            span.set_status(self._error, "lease lost")
        elif outcome == "timed_out":
            span.set_status(self._error, "deadline exceeded")
        elif outcome == "failed":
            job = ctx.job
            if job.attempts >= job.max_attempts:
                api.dead_letters.add(1, self.labels)
            else:
                api.retries.add(1, self.labels)
            if error is not None:
                span.record_exception(error)
            span.set_status(self._error, f"{type(error).__name__}: {error}"[:500] if error is not None else "failed")
        span.end()


def attempt_scope(ctx: Any) -> AbstractContextManager[Any]:
    """For the drivers: ``telemetry.scope(ctx)``, or nothing when the job has no span."""
    if getattr(ctx, "trace", None) is None:
        return nullcontext()
    return _api_of(ctx).scope(ctx)


def _api_of(ctx: Any) -> WorkerTelemetry:
    return ctx.telemetry  # type: ignore[no-any-return]


# -- graph steps ----------------------------------------------------------------------------------


class GraphSteps:
    """The spans of a graph run's steps, from LangGraph's ``tasks`` and ``checkpoints`` stream
    events: a task's start opens ``step <node>``, its result marks it done (an error or an
    interrupt on it), and the checkpoint that follows names the step's checkpoint and ends it. A
    step that ends without one (an interrupt: its writes are kept with the checkpoint it ran from,
    the one a person's decision resumes) names that checkpoint; ``langgraph.checkpoint_id_from``
    is the checkpoint a step ran from, when known."""

    MODES: ClassVar[list[str]] = ["tasks", "checkpoints"]

    def __init__(self, telemetry: WorkerTelemetry, attempt: _Attempt, job: Any, checkpoint_id: str | None) -> None:
        self.api = telemetry.api
        self.attempt = attempt
        self.job = job
        self.parent = self.api.trace.set_span_in_context(attempt.span)
        self.done: list[Any] = []  # steps whose result came, waiting for their checkpoint
        self.interrupted: set[Any] = set()
        self.checkpoint_id = checkpoint_id  # the latest checkpoint: the one the next step runs from

    def seen(self, event: Any) -> None:
        mode, chunk = event
        if mode == "tasks" and isinstance(chunk, dict):
            task_id, name = str(chunk.get("id")), str(chunk.get("name"))
            if "input" in chunk:
                attributes: dict[str, Any] = {
                    "langgraph.node": name,
                    "langgraph.task_id": task_id,
                    "agent_state.thread_id": self.job.thread_id,
                    "agent_state.job_id": self.job.job_id,
                }
                if self.checkpoint_id is not None:
                    attributes["langgraph.checkpoint_id_from"] = self.checkpoint_id
                self.attempt.steps[task_id] = self.api.tracer.start_span(
                    f"step {name}", context=self.parent, attributes=attributes
                )
                return
            span = self.attempt.steps.pop(task_id, None)
            if span is None:
                return
            error = chunk.get("error")
            if error is not None:
                if isinstance(error, BaseException):
                    span.record_exception(error)
                span.set_status(self.api.trace.StatusCode.ERROR, str(error)[:500])
            for interrupt in chunk.get("interrupts") or []:
                span.add_event("langgraph.interrupt", {"langgraph.interrupt_id": str(getattr(interrupt, "id", ""))})
                self.interrupted.add(span)
            self.done.append(span)
        elif mode == "checkpoints" and isinstance(chunk, dict):
            configurable = (chunk.get("config") or {}).get("configurable") or {}
            step = (chunk.get("metadata") or {}).get("step")
            self.checkpoint_id = str(configurable.get("checkpoint_id"))
            for span in self.done:
                span.set_attribute("agent_state.checkpoint_id", self.checkpoint_id)
                if isinstance(step, int):
                    span.set_attribute("langgraph.step", step)
                span.end()
            self.done = []

    def close(self, error: BaseException | None) -> None:
        """The invocation ended: a step still open ends (with the error that ended the run)."""
        for span in [*self.done, *self.attempt.steps.values()]:
            if span in self.interrupted and self.checkpoint_id is not None:
                span.set_attribute("agent_state.checkpoint_id", self.checkpoint_id)
            if error is not None:
                span.record_exception(error)
                span.set_status(self.api.trace.StatusCode.ERROR, f"{type(error).__name__}: {error}"[:500])
            span.end()
        self.done = []
        self.attempt.steps.clear()


@contextmanager
def graph_steps(ctx: Any, checkpoint_id: str | None = None) -> Iterator[GraphSteps | None]:
    """The step spans of one invocation of a graph run that continues from ``checkpoint_id``
    (None when the attempt records no span: the run then uses ``invoke``, as without tracing)."""
    attempt = getattr(ctx, "trace", None)
    if attempt is None or not attempt.span.is_recording():
        yield None
        return
    steps = GraphSteps(ctx.telemetry, attempt, ctx.job, checkpoint_id)
    try:
        yield steps
    except BaseException as error:
        steps.close(error)
        raise
    steps.close(None)


# -- side effects ---------------------------------------------------------------------------------


def side_effect_parent(ctx: Any) -> Any:
    """The context a side effect's span is a child of: the one graph step running in the attempt
    (a side effect runs inside a node), else None (the current context: the attempt)."""
    attempt = getattr(ctx, "trace", None)
    if attempt is None or len(attempt.steps) != 1:
        return None
    telemetry: WorkerTelemetry = ctx.telemetry
    return telemetry.api.trace.set_span_in_context(next(iter(attempt.steps.values())))


def start_side_effect(name: str, key: str, thread_id: str, job_id: int | None, parent: Any) -> Any:
    """The span of one bracketed tool call (None when tracing is off)."""
    api = _api()
    if api is None:
        return None
    attributes: dict[str, Any] = {"agent_state.idempotency_key": key, "agent_state.thread_id": thread_id}
    if job_id is not None:
        attributes["agent_state.job_id"] = job_id
    return api.tracer.start_span(f"side_effect {name}", context=parent, attributes=attributes)


def side_effect_begun(span: Any, outcome: str, attempt: int) -> None:
    """What ``begin_side_effect`` said: ``executed``, ``cached``, ``taken_over`` or ``busy``."""
    if span is None:
        return
    span.set_attribute("agent_state.side_effect.outcome", outcome)
    span.set_attribute("agent_state.side_effect.attempt", attempt)


def end_side_effect(span: Any, error: BaseException | None) -> None:
    if span is None:
        return
    if error is not None:
        api = _api()
        span.record_exception(error)
        if api is not None:
            span.set_status(api.trace.StatusCode.ERROR, f"{type(error).__name__}: {error}"[:500])
    span.end()
