"""Durable graph runs: a compiled LangGraph graph run as jobs of the queue, resumable after any crash.

::

    runs = GraphRuns(Client(conn), graph)                 # graph = builder.compile()
    job = runs.start("thread-42", {"question": "..."})    # enqueues; a second start returns this job

    graph_worker("postgresql:///app", graph).run()        # in any number of processes, until SIGTERM

What a worker does with a claimed run (:meth:`GraphRuns.handler`):

1. It binds the graph to an :class:`~agent_state.langgraph.AgentStateSaver` on the worker's pool
   and invokes it with ``thread_id``, ``job_id`` and ``fencing_token`` in ``configurable``: every
   checkpoint and pending write goes through the queue's fencing check, so once the lease is lost
   (the worker paused, partitioned, declared dead) its writes are rejected (``LeaseLost``) and the
   run stops there. The worker renews the lease in the background while a node runs.
2. **Resume rule.** The checkpoints carry the job id (LangGraph copies ``configurable`` into their
   metadata). When the thread's latest checkpoint was written by this job, the claim is a retry
   (after a crash, an exception, a lost lease, a release at shutdown) and the graph continues
   from that checkpoint (``invoke(None)``): it never starts again from the input. Otherwise it is
   the run's first claim and the graph is invoked with the run's input.
3. **Durability.** Runs use ``durability="sync"`` by default: LangGraph saves each step's
   checkpoint *before* the next step starts. With LangGraph's default (``"async"``) the save
   overlaps the next node, so a process killed in that node may not have saved the step before
   it, and a finished node runs again on resume. ``"sync"`` costs one round trip per step;
   pass ``durability="async"`` (or ``"exit"``) to trade that guarantee for speed.
4. **Side effects.** A node reaches the claim's context with ``job_context(config)`` (or
   ``job_context()``) and calls ``ctx.side_effect(...)`` for anything external: a node that ran
   the tool and crashed before its checkpoint runs again on resume, and the ledger returns the
   recorded result instead of calling the tool twice.
5. **Interrupts.** A node that calls ``interrupt(value)`` ends the invocation; the job moves to
   AWAITING_HUMAN (``ai.request_human``) with the thread's latest checkpoint id and the action
   ``{"interrupt": [values...], "interrupt_ids": [...]}``, holding no worker. ``resolve_human``
   (any process, any time later) makes it PENDING again; the next claim invokes the graph with
   ``Command(resume=decision)`` from that checkpoint.
6. The job completes with the final state (made JSON by ``result``, default: the state values
   with non-JSON objects turned into dicts or strings). An exception fails the job
   (``ai.fail_job``: retried with backoff until its attempts are spent).
7. **Replays.** A job whose payload holds ``"replay": {"from_thread", "from_checkpoint", "model"}``
   (the operator console's *replay with another model*, enqueued on a fork of the thread) runs
   with ``config["configurable"]["model"]`` set to that model: a node that picks its model from
   there replays with it. Its first claim runs again from ``from_checkpoint`` (LangGraph's replay:
   the tasks after it run anew, the writes the source recorded for them are not reused).

:class:`AsyncGraphRuns` is the asyncio twin (``ainvoke``, :class:`~agent_state.AsyncWorker`,
:class:`~agent_state.AsyncJobContext`). See docs/graph-runs.md.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from .client import AsyncClient, Client
from .hitl import human_decision
from .langgraph_saver import AgentStateSaver, AsyncAgentStateSaver
from .models import Job
from .retry import RetryPolicy
from .side_effects import idempotency_key
from .tracing import graph_steps
from .worker import AsyncJobContext, AsyncWorker, JobContext, Worker, WorkerStats

__all__ = [
    "DEFAULT_QUEUE",
    "AsyncGraphRuns",
    "AsyncGraphWorker",
    "GraphRuns",
    "GraphWorker",
    "RunPlan",
    "async_graph_handler",
    "async_graph_worker",
    "graph_handler",
    "graph_worker",
    "job_context",
    "run_dedup_key",
]

Durability = Literal["sync", "async", "exit"]

#: The queue graph runs go to unless told otherwise.
DEFAULT_QUEUE = "graph-runs"
#: Where the claim's context travels in ``config["configurable"]`` (a leading ``__`` keeps it out
#: of the checkpoint metadata).
CONTEXT_KEY = "__agent_state_job_context"
#: The job payload key holding the run's input.
INPUT_KEY = "graph_input"
#: The job payload key of a replay (the console's *replay with another model*: ``{"from_thread",
#: "from_checkpoint", "model"}``, on a fork of the thread): the run gets the model as
#: ``config["configurable"]["model"]``, over any the runs' ``config`` gives.
REPLAY_KEY = "replay"
_TERMINAL = ("COMPLETED", "FAILED", "CANCELLED", "AWAITING_HUMAN")

#: A Worker handler and an AsyncWorker handler.
Handler = Callable[[Job, JobContext], Any]
AsyncHandler = Callable[[Job, AsyncJobContext], Awaitable[Any]]

_current: contextvars.ContextVar[JobContext | AsyncJobContext | None] = contextvars.ContextVar(
    "agent_state_job_context", default=None
)


def job_context(config: RunnableConfig | None = None) -> Any:
    """The :class:`~agent_state.JobContext` (or :class:`~agent_state.AsyncJobContext`) of the graph
    run this node belongs to: from the ``config`` LangGraph passes to a node
    (``def node(state, config)``), else from the running invocation. ``ctx.side_effect(...)``
    on it fires once across crashes. Raises RuntimeError outside a graph run."""
    if config is not None:
        found = (config.get("configurable") or {}).get(CONTEXT_KEY)
        if found is not None:
            return found
    found = _current.get()
    if found is None:
        raise RuntimeError("job_context(): not inside a durable graph run (GraphRuns.handler)")
    return found


def run_dedup_key(thread_id: str, input: Any) -> str:
    """The key a run is deduplicated on when ``start`` gets no ``dedup_key``: the thread and the
    input (as canonical JSON), hashed."""
    return "graph-run:" + idempotency_key(thread_id, json.dumps(_jsonable(input), sort_keys=True))


def _json_default(value: Any) -> Any:
    for attr in ("model_dump", "dict", "to_json"):
        method = getattr(value, attr, None)
        if callable(method):
            try:
                return method()
            except Exception:  # not that kind of object: try the next
                continue
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def _jsonable(value: Any) -> Any:
    """``value`` as JSON the database stores (objects become dicts when they know how, else str)."""
    return json.loads(json.dumps(value, default=_json_default))


@dataclass(frozen=True)
class RunPlan:
    """How a claim invokes the graph: ``"start"`` (the run's input), ``"resume"`` (``None``: on
    from the latest checkpoint) or ``"human"`` (``Command(resume=decision)``); ``checkpoint_id``
    is the checkpoint it continues from (None for a start)."""

    mode: Literal["start", "resume", "human"]
    input: Any
    checkpoint_id: str | None


def _plan(job: Job, latest: Any) -> RunPlan:
    """The resume rule (module docstring, 2), from the thread's latest checkpoint tuple (or None)."""
    ours = latest is not None and (latest.metadata or {}).get("job_id") == job.job_id
    checkpoint_id = latest.config["configurable"]["checkpoint_id"] if latest is not None else None
    human = human_decision(job.payload)
    if ours and human is not None and human.get("checkpoint_id") == checkpoint_id:
        return RunPlan("human", Command(resume=human.get("decision")), checkpoint_id)
    if ours:
        return RunPlan("resume", None, checkpoint_id)
    payload = job.payload if isinstance(job.payload, dict) else {}
    return RunPlan("start", payload.get(INPUT_KEY), None)


def _action(interrupts: Any) -> dict[str, Any]:
    return {
        "interrupt": [_jsonable(i.value) for i in interrupts],
        "interrupt_ids": [getattr(i, "id", None) for i in interrupts],
    }


class _Runs:
    """What the sync and async twins share: options, the run's config, the start arguments."""

    def __init__(
        self,
        graph: Any,
        *,
        queue: str,
        durability: Durability,
        result: Callable[[Any], Any] | None,
        max_attempts: int,
        config: RunnableConfig | None,
        mirror_messages: str | None = None,
        store: Any = None,
    ) -> None:
        if durability not in ("sync", "async", "exit"):
            raise ValueError(f"durability must be 'sync', 'async' or 'exit', not {durability!r}")
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.graph = graph
        self.queue = queue
        self.durability = durability
        self.result = result or _jsonable
        self.max_attempts = max_attempts
        self.config = config or {}
        self.mirror_messages = mirror_messages
        self.store = store  # a LangGraph BaseStore (AgentStateStore): the graph's nodes receive it as `store`
        self._bound: dict[int, Any] = {}

    def _start_args(self, thread_id: str, input: Any, dedup_key: str | None) -> tuple[dict[str, Any], str]:
        return {INPUT_KEY: _jsonable(input)}, dedup_key or run_dedup_key(thread_id, input)

    def _run_config(self, job: Job, ctx: Any, plan: RunPlan | None = None) -> RunnableConfig:
        extra: RunnableConfig = self.config.copy()
        replay = job.payload.get(REPLAY_KEY) if isinstance(job.payload, dict) else None
        replay = replay if isinstance(replay, dict) else {}
        model = {"model": replay["model"]} if replay.get("model") else {}
        # A replay's first claim names the checkpoint it replays from: LangGraph then runs the tasks
        # after it again instead of taking the writes the source recorded for them (which the fork
        # copied); a retry goes on from the replay's own latest checkpoint (the resume rule).
        start = (
            {"checkpoint_id": replay["from_checkpoint"]}
            if plan is not None and plan.mode == "start" and replay.get("from_checkpoint")
            else {}
        )
        configurable = {
            **(extra.pop("configurable", {}) or {}),
            **model,  # a replay's model: the node reads config["configurable"]["model"]
            **start,
            "thread_id": job.thread_id,
            "job_id": job.job_id,
            "fencing_token": job.fencing_token,
            CONTEXT_KEY: ctx,
        }
        extra["configurable"] = configurable
        return extra

    @staticmethod
    def _head(thread_id: str) -> RunnableConfig:
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}


# -- workers that own their pool ------------------------------------------------------------------


def _split(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    run_keys = ("durability", "result", "max_attempts", "config")
    return {k: options.pop(k) for k in run_keys if k in options}, options


# <async>
class AsyncGraphRuns(_Runs):
    """Durable runs of ``graph`` (a compiled LangGraph graph) through the queue ``queue``.

    ``client`` starts runs (any role that may enqueue for the thread: the tenant, or a service
    acting for it). :attr:`handler` is the AsyncWorker handler that executes them;
    :func:`async_graph_worker` builds the AsyncWorker. ``durability="sync"`` (the default) makes
    LangGraph save every step before the next one starts, so a run resumed after a crash never
    repeats a finished node; ``"async"`` is faster but a node that finished just before a crash
    may run again. ``result`` turns the final state into the job's JSON result. ``config`` is
    merged into every invocation's config (e.g. ``{"recursion_limit": 50}``). ``mirror_messages``
    names a list channel (``"messages"``) whose new items each step also appends to the thread's
    messages (``ai.session_messages``), in the same call as the step. See the module docstring
    for the full contract. The graph runs with ``ainvoke``, and its nodes get the claim's
    context from :func:`job_context`.
    """

    def __init__(
        self,
        client: AsyncClient,
        graph: Any,
        *,
        queue: str = DEFAULT_QUEUE,
        durability: Durability = "sync",
        result: Callable[[Any], Any] | None = None,
        max_attempts: int = 5,
        config: RunnableConfig | None = None,
        mirror_messages: str | None = None,
        store: Any = None,
    ) -> None:
        super().__init__(
            graph,
            queue=queue,
            durability=durability,
            result=result,
            max_attempts=max_attempts,
            config=config,
            mirror_messages=mirror_messages,
            store=store,
        )
        self.client = client

    async def start(
        self,
        thread_id: str,
        input: Any = None,
        *,
        dedup_key: str | None = None,
        priority: int = 0,
        max_attempts: int | None = None,
        session_config: dict[str, Any] | None = None,
        timeout: timedelta | None = None,
        deadline: datetime | None = None,
        start_by: datetime | None = None,
    ) -> Job:
        """Enqueues a run of the graph for ``thread_id`` with ``input`` (JSON) and returns its job.

        The session is created when it does not exist (``session_config`` is its config). The run
        is deduplicated on ``dedup_key``, by default on the thread and the input: starting the same
        run again (a retry after a lost reply) writes nothing and returns the first job. Pass a
        fresh ``dedup_key`` (a request id, a turn number) to run the same input again.
        ``timeout``, ``deadline`` and ``start_by`` are the job's deadlines (None: the queue's
        default, else none; docs/queue.md, "Deadlines"): each attempt of the run is cancelled at its
        deadline, and resumes from its last checkpoint on the next attempt."""
        await self.client.create_session(thread_id, session_config)
        payload, key = self._start_args(thread_id, input, dedup_key)
        return await self.client.enqueue_job(
            thread_id,
            payload,
            self.queue,
            priority=priority,
            max_attempts=max_attempts or self.max_attempts,
            idempotency_key=key,
            timeout=timeout,
            deadline=deadline,
            start_by=start_by,
        )

    async def wait(self, job_id: int, *, until: tuple[str, ...] = _TERMINAL, timeout: float = 60.0) -> Job:
        """Polls ``ai.get_job`` until the job's status is one of ``until``; TimeoutError after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while True:
            job = await self.client.get_job(job_id)
            if job.status in until:
                return job
            if time.monotonic() >= deadline:
                raise TimeoutError(f"job {job_id} is still {job.status} after {timeout}s")
            await asyncio.sleep(0.05)

    def _graph_for(self, source: Any) -> Any:
        """The graph with an AsyncAgentStateSaver over ``source`` (unless it was compiled with one)."""
        if isinstance(self.graph.checkpointer, AsyncAgentStateSaver) and self.store in (None, self.graph.store):
            return self.graph
        bound = self._bound.get(id(source))
        if bound is None:
            if isinstance(self.graph.checkpointer, AsyncAgentStateSaver):
                saver = self.graph.checkpointer
            else:
                saver = AsyncAgentStateSaver(
                    source, retry=self.client.retry, mirror_messages=self.mirror_messages
                )  # a lost connection: as the client
            store = {} if self.store is None else {"store": self.store}
            bound = self._bound[id(source)] = self.graph.copy(update={"checkpointer": saver, **store})
        return bound

    async def plan(self, job: Job, graph: Any | None = None) -> RunPlan:
        """What a claim of ``job`` would do now (the resume rule), from the thread's checkpoints."""
        graph = graph if graph is not None else self._graph_for(self.client._source)
        return _plan(job, await graph.checkpointer.aget_tuple(self._head(job.thread_id)))

    async def handler(self, job: Job, ctx: AsyncJobContext) -> Any:
        """The AsyncWorker handler: runs (or resumes) the graph for the claimed job; see the class docstring."""
        graph = self._graph_for(ctx._worker.pool)  # the worker's pool: the identity holding the claim
        plan = await self.plan(job, graph)
        config = self._run_config(job, ctx, plan)
        token = _current.set(ctx)
        try:
            with graph_steps(ctx, plan.checkpoint_id) as steps:  # a span per step when the attempt's span records
                if steps is None:
                    await graph.ainvoke(plan.input, config, durability=self.durability)
                else:
                    async for event in graph.astream(
                        plan.input, config, durability=self.durability, stream_mode=steps.MODES
                    ):
                        steps.seen(event)
        finally:
            _current.reset(token)
        ctx.check()
        state = await graph.aget_state(self._head(job.thread_id))
        if state.interrupts:
            await ctx.request_human(state.config["configurable"]["checkpoint_id"], _action(state.interrupts))
            return None
        return self.result(state.values)


def async_graph_handler(graph: Any, client: AsyncClient, **options: Any) -> AsyncHandler:
    """``GraphRuns(client, graph, **options).handler``: a Worker handler that runs ``graph`` durably."""
    return AsyncGraphRuns(client, graph, **options).handler


class AsyncGraphWorker(AsyncWorker):
    """A :class:`~agent_state.Worker` for graph runs that opens its pool when it runs and closes it
    after (what :func:`graph_worker` returns). ``runs`` is its :class:`GraphRuns`."""

    runs: AsyncGraphRuns

    async def run(self, *, drain: bool = False, install_signal_handlers: bool = True) -> WorkerStats:
        async with _aopened(self.pool):
            return await super().run(drain=drain, install_signal_handlers=install_signal_handlers)


@asynccontextmanager
async def _aopened(pool: AsyncConnectionPool) -> AsyncIterator[AsyncConnectionPool]:
    # Not wait=True: a worker started while the database cannot be reached would die of the
    # pool's PoolTimeout; its loops find the database themselves (the Worker's recovery).
    await pool.open(wait=False)
    try:
        yield pool
    finally:
        await pool.close()


def async_graph_worker(
    conninfo: str, graph: Any, *, queue: str = DEFAULT_QUEUE, concurrency: int = 1, **worker_options: Any
) -> AsyncGraphWorker:
    """A Worker that runs ``graph`` durably for the jobs of ``queue``; ``.run()`` blocks until
    SIGTERM/SIGINT (or ``stop()``), then finishes or releases what it holds.

    ``conninfo`` is a libpq connection string of a member of ai_service. ``worker_options`` go to
    :class:`~agent_state.Worker` (``lease``, ``poll_interval``, ``grace_period``, ``worker_id``,
    ``prefetch`` (default 0 here: a long run does not hoard jobs other processes could start),
    ``listen``) and to :class:`GraphRuns` (``durability``, ``result``, ``max_attempts``, ``config``).
    A connection of the pool that the server ended costs a run nothing: the runs' client and
    savers retry a call safe to retry on another connection (``RetryPolicy()``: a restart or a
    failover: two minutes of tries, and a write refused as read-only is tried again)."""
    run_options, options = _split(dict(worker_options))
    options.setdefault("prefetch", 0)
    pool = AsyncConnectionPool(
        conninfo, min_size=1, max_size=2 * concurrency + 3, kwargs={"autocommit": True}, open=False, name="graph-worker"
    )
    runs = AsyncGraphRuns(
        AsyncClient(pool, retry=RetryPolicy()), graph, queue=queue, **run_options
    )  # lost connections: retried
    worker = AsyncGraphWorker(pool, runs.handler, queue, concurrency, **options)
    worker.runs = runs
    return worker


# </async>


# <sync> generated by scripts/async_to_sync.py from the <async> block above: do not edit
class GraphRuns(_Runs):
    """Durable runs of ``graph`` (a compiled LangGraph graph) through the queue ``queue``.

    ``client`` starts runs (any role that may enqueue for the thread: the tenant, or a service
    acting for it). :attr:`handler` is the Worker handler that executes them;
    :func:`graph_worker` builds the Worker. ``durability="sync"`` (the default) makes
    LangGraph save every step before the next one starts, so a run resumed after a crash never
    repeats a finished node; ``"async"`` is faster but a node that finished just before a crash
    may run again. ``result`` turns the final state into the job's JSON result. ``config`` is
    merged into every invocation's config (e.g. ``{"recursion_limit": 50}``). ``mirror_messages``
    names a list channel (``"messages"``) whose new items each step also appends to the thread's
    messages (``ai.session_messages``), in the same call as the step. See the module docstring
    for the full contract. The graph runs with ``invoke``, and its nodes get the claim's
    context from :func:`job_context`.
    """

    def __init__(
        self,
        client: Client,
        graph: Any,
        *,
        queue: str = DEFAULT_QUEUE,
        durability: Durability = "sync",
        result: Callable[[Any], Any] | None = None,
        max_attempts: int = 5,
        config: RunnableConfig | None = None,
        mirror_messages: str | None = None,
        store: Any = None,
    ) -> None:
        super().__init__(
            graph,
            queue=queue,
            durability=durability,
            result=result,
            max_attempts=max_attempts,
            config=config,
            mirror_messages=mirror_messages,
            store=store,
        )
        self.client = client

    def start(
        self,
        thread_id: str,
        input: Any = None,
        *,
        dedup_key: str | None = None,
        priority: int = 0,
        max_attempts: int | None = None,
        session_config: dict[str, Any] | None = None,
        timeout: timedelta | None = None,
        deadline: datetime | None = None,
        start_by: datetime | None = None,
    ) -> Job:
        """Enqueues a run of the graph for ``thread_id`` with ``input`` (JSON) and returns its job.

        The session is created when it does not exist (``session_config`` is its config). The run
        is deduplicated on ``dedup_key``, by default on the thread and the input: starting the same
        run again (a retry after a lost reply) writes nothing and returns the first job. Pass a
        fresh ``dedup_key`` (a request id, a turn number) to run the same input again.
        ``timeout``, ``deadline`` and ``start_by`` are the job's deadlines (None: the queue's
        default, else none; docs/queue.md, "Deadlines"): each attempt of the run is cancelled at its
        deadline, and resumes from its last checkpoint on the next attempt."""
        self.client.create_session(thread_id, session_config)
        payload, key = self._start_args(thread_id, input, dedup_key)
        return self.client.enqueue_job(
            thread_id,
            payload,
            self.queue,
            priority=priority,
            max_attempts=max_attempts or self.max_attempts,
            idempotency_key=key,
            timeout=timeout,
            deadline=deadline,
            start_by=start_by,
        )

    def wait(self, job_id: int, *, until: tuple[str, ...] = _TERMINAL, timeout: float = 60.0) -> Job:
        """Polls ``ai.get_job`` until the job's status is one of ``until``; TimeoutError after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while True:
            job = self.client.get_job(job_id)
            if job.status in until:
                return job
            if time.monotonic() >= deadline:
                raise TimeoutError(f"job {job_id} is still {job.status} after {timeout}s")
            time.sleep(0.05)

    def _graph_for(self, source: Any) -> Any:
        """The graph with an AgentStateSaver over ``source`` (unless it was compiled with one)."""
        if isinstance(self.graph.checkpointer, AgentStateSaver) and self.store in (None, self.graph.store):
            return self.graph
        bound = self._bound.get(id(source))
        if bound is None:
            if isinstance(self.graph.checkpointer, AgentStateSaver):
                saver = self.graph.checkpointer
            else:
                saver = AgentStateSaver(
                    source, retry=self.client.retry, mirror_messages=self.mirror_messages
                )  # a lost connection: as the client
            store = {} if self.store is None else {"store": self.store}
            bound = self._bound[id(source)] = self.graph.copy(update={"checkpointer": saver, **store})
        return bound

    def plan(self, job: Job, graph: Any | None = None) -> RunPlan:
        """What a claim of ``job`` would do now (the resume rule), from the thread's checkpoints."""
        graph = graph if graph is not None else self._graph_for(self.client._source)
        return _plan(job, graph.checkpointer.get_tuple(self._head(job.thread_id)))

    def handler(self, job: Job, ctx: JobContext) -> Any:
        """The Worker handler: runs (or resumes) the graph for the claimed job; see the class docstring."""
        graph = self._graph_for(ctx._worker.pool)  # the worker's pool: the identity holding the claim
        plan = self.plan(job, graph)
        config = self._run_config(job, ctx, plan)
        token = _current.set(ctx)
        try:
            with graph_steps(ctx, plan.checkpoint_id) as steps:  # a span per step when the attempt's span records
                if steps is None:
                    graph.invoke(plan.input, config, durability=self.durability)
                else:
                    for event in graph.stream(plan.input, config, durability=self.durability, stream_mode=steps.MODES):
                        steps.seen(event)
        finally:
            _current.reset(token)
        ctx.check()
        state = graph.get_state(self._head(job.thread_id))
        if state.interrupts:
            ctx.request_human(state.config["configurable"]["checkpoint_id"], _action(state.interrupts))
            return None
        return self.result(state.values)


def graph_handler(graph: Any, client: Client, **options: Any) -> Handler:
    """``GraphRuns(client, graph, **options).handler``: a Worker handler that runs ``graph`` durably."""
    return GraphRuns(client, graph, **options).handler


class GraphWorker(Worker):
    """A :class:`~agent_state.Worker` for graph runs that opens its pool when it runs and closes it
    after (what :func:`graph_worker` returns). ``runs`` is its :class:`GraphRuns`."""

    runs: GraphRuns

    def run(self, *, drain: bool = False, install_signal_handlers: bool = True) -> WorkerStats:
        with _opened(self.pool):
            return super().run(drain=drain, install_signal_handlers=install_signal_handlers)


@contextmanager
def _opened(pool: ConnectionPool) -> Iterator[ConnectionPool]:
    # Not wait=True: a worker started while the database cannot be reached would die of the
    # pool's PoolTimeout; its loops find the database themselves (the Worker's recovery).
    pool.open(wait=False)
    try:
        yield pool
    finally:
        pool.close()


def graph_worker(
    conninfo: str, graph: Any, *, queue: str = DEFAULT_QUEUE, concurrency: int = 1, **worker_options: Any
) -> GraphWorker:
    """A Worker that runs ``graph`` durably for the jobs of ``queue``; ``.run()`` blocks until
    SIGTERM/SIGINT (or ``stop()``), then finishes or releases what it holds.

    ``conninfo`` is a libpq connection string of a member of ai_service. ``worker_options`` go to
    :class:`~agent_state.Worker` (``lease``, ``poll_interval``, ``grace_period``, ``worker_id``,
    ``prefetch`` (default 0 here: a long run does not hoard jobs other processes could start),
    ``listen``) and to :class:`GraphRuns` (``durability``, ``result``, ``max_attempts``, ``config``).
    A connection of the pool that the server ended costs a run nothing: the runs' client and
    savers retry a call safe to retry on another connection (``RetryPolicy()``: a restart or a
    failover: two minutes of tries, and a write refused as read-only is tried again)."""
    run_options, options = _split(dict(worker_options))
    options.setdefault("prefetch", 0)
    pool = ConnectionPool(
        conninfo, min_size=1, max_size=2 * concurrency + 3, kwargs={"autocommit": True}, open=False, name="graph-worker"
    )
    runs = GraphRuns(Client(pool, retry=RetryPolicy()), graph, queue=queue, **run_options)  # lost connections: retried
    worker = GraphWorker(pool, runs.handler, queue, concurrency, **options)
    worker.runs = runs
    return worker


# </sync>
