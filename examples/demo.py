"""`make demo`: a research agent, built as a LangGraph graph, crashes and resumes through the queue.

Run with DATABASE_URL pointing at a database where agent-state is deployed (``make demo``, or
``agent-state deploy``: a superuser's URL deploys as the owner role ``agent_state_owner``):
``python examples/demo.py``. The demo's service must be a member of ai_service: the URL's role
when it is one (a superuser is); else, when the role may create roles (a CREATEROLE database
owner), the demo makes ``agent_state_demo_service`` and runs as it (SET ROLE). What happens:

1. The run is started (a job in a queue of its own). Worker 1, a separate process, claims it and
   runs the graph ``plan -> research -> draft -> approve -> publish`` with a scripted model (no
   network, no API key): checkpoints after every node, messages, events, and in ``draft`` one
   email to the user through the side-effect ledger.
2. Worker 1's model call in ``draft`` hangs (on purpose, so the kill lands mid-node); the demo
   kills it with SIGKILL.
3. Worker 2 claims the job when the dead worker's short lease runs out, resumes from the last
   checkpoint (the one after ``research``): ``draft`` runs again, the ledger hands it the recorded
   receipt, and the email is not sent again.
4. ``approve`` calls ``interrupt()``: the job waits as AWAITING_HUMAN, held by no worker. The
   demo approves as the user (``resolve_human``); worker 2 resumes it and the run completes.
5. The session's timeline (events, the job's attempts, checkpoints and their lineage, messages,
   the side effect) and a verdict; the exit status is 1 when a promise failed. Every claim the demo
   tells of, in its steps and its timeline, is read from ``ai.job_attempts`` (what the console's run
   page shows); the one thing the timeline adds of its own is the moment it sent SIGKILL.

``python examples/demo.py worker --queue Q`` is the worker process (a :func:`graph_worker`).
"""

from __future__ import annotations

import argparse
import itertools
import json
import operator
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, TypedDict

import psycopg
import psycopg.sql
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from agent_state import Client, JobAttempt, MessageRole, SideEffectCall, idempotency_key
from agent_state.graph_runs import GraphRuns, graph_worker, job_context

#: The demo's lease: short, so the dead worker's job comes back within seconds.
LEASE = timedelta(seconds=5)
QUESTION = "How do long-running AI agents survive crashes without repeating their side effects?"
USER = "alice"  # the end user the demo's service acts for (ai.act_as)
USER_EMAIL = "alice@example.com"
SUBJECT = "Your research run: first findings"
STALL_ENV = "AGENT_STATE_DEMO_STALL"  # the node whose model call hangs (worker 1 only)
OUTBOX_ENV = "AGENT_STATE_DEMO_OUTBOX"  # the "mail server": a file, one line per email sent
LABEL_ENV = "AGENT_STATE_DEMO_WORKER"
NODES = ["plan", "research", "draft", "approve", "publish"]
BOUND = 60.0  # no wait of the demo lasts longer (seconds)
#: What the stalled model call waits for: never set by the demo (worker 1 is killed there); a test
#: that runs the demo's workers in its own process sets it (tests/python/test_tracing.py)
STALL = threading.Event()


# -- the agent: a scripted model, two tools, five nodes --------------------------------------------

CORPUS = {
    "durable execution postgres": [
        {"url": "https://example.org/durable-execution", "title": "Durable execution: checkpoints, leases, fencing"},
        {"url": "https://example.org/queues-in-postgres", "title": "A job queue in PostgreSQL with SKIP LOCKED"},
    ],
    "exactly once side effects": [
        {"url": "https://example.org/idempotency-keys", "title": "Idempotency keys for external calls"},
    ],
}
PAGES = {
    "https://example.org/durable-execution": "Save state after every step; resume from the last save.",
    "https://example.org/queues-in-postgres": "Leases expire; a fencing token rejects a stale worker.",
    "https://example.org/idempotency-keys": "Record the result of an external call under a key.",
}


class ScriptedModel:
    """A deterministic stand-in for an LLM: the same input always gives the same answer."""

    def plan(self, question: str) -> dict[str, Any]:
        queries = ["durable execution postgres", "exactly once side effects"]
        return {
            "text": f"To answer {question!r} I will search for: " + "; ".join(queries),
            "tool_calls": [{"id": f"call-{i}", "name": "search", "args": {"query": q}} for i, q in enumerate(queries)],
        }

    def draft(self, notes: list[dict[str, Any]]) -> str:
        points = " ".join(n["summary"] for n in notes)
        return f"Draft report. Agents persist state per step and fence stale workers. {points}"

    def publish(self, draft: str, decision: dict[str, Any]) -> str:
        return f"{draft} (approved by the user: {decision.get('note', 'ok')})"


MODEL = ScriptedModel()


def search(query: str) -> list[dict[str, str]]:
    """Tool: the corpus's results for a query."""
    return CORPUS.get(query, [])


def read(url: str) -> str:
    """Tool: a page's text."""
    return PAGES.get(url, "")


class State(TypedDict, total=False):
    question: str
    tool_calls: list[dict[str, Any]]
    notes: Annotated[list[dict[str, Any]], operator.add]
    draft: str
    email: dict[str, Any]
    decision: dict[str, Any]
    answer: str


def _label() -> str:
    return os.environ.get(LABEL_ENV, f"pid {os.getpid()}")


def _write(
    config: RunnableConfig, *messages: tuple[MessageRole, Any, str], events: tuple[tuple[str, Any], ...] = ()
) -> None:
    """Messages (idempotent: a node that runs again appends nothing twice) and events, written in
    one transaction fenced on the job: a worker that lost its lease writes nothing."""
    ctx = job_context(config)
    with ctx.fenced() as conn:
        client = Client(conn)
        for role, content, key in messages:
            client.append_message(ctx.job.thread_id, role, content, idempotency_key=key)
        for kind, payload in events:
            client.record_event(ctx.job.thread_id, kind, payload)


def _event(config: RunnableConfig, kind: str, node: str, **payload: Any) -> None:
    _write(config, events=((kind, {"node": node, "worker": _label(), **payload}),))


def plan(state: State, config: RunnableConfig) -> State:
    _event(config, "node_started", "plan")
    answer = MODEL.plan(state["question"])
    _write(
        config,
        ("user", {"text": state["question"]}, "question"),
        ("assistant", answer, "plan"),
        events=(("node_finished", {"node": "plan", "worker": _label()}),),
    )
    return {"tool_calls": answer["tool_calls"]}


def research(state: State, config: RunnableConfig) -> State:
    _event(config, "node_started", "research")
    notes: list[dict[str, Any]] = []
    messages: list[tuple[MessageRole, Any, str]] = []
    for call in state["tool_calls"]:
        results = search(call["args"]["query"])
        pages = [read(r["url"]) for r in results]
        notes.append(
            {"query": call["args"]["query"], "sources": [r["url"] for r in results], "summary": " ".join(pages)}
        )
        messages.append(("tool_call", call, f"{call['id']}-call"))
        messages.append(("tool_result", {"id": call["id"], "results": results}, f"{call['id']}-result"))
    _write(config, *messages, events=(("node_finished", {"node": "research", "worker": _label()}),))
    return {"notes": notes}


def send_email(call: SideEffectCall, to: str, subject: str, body: str) -> dict[str, Any]:
    """The external action: appends the email to the outbox file (the demo's mail server)."""
    receipt = {"message_id": f"<{call.key[:12]}@demo>", "to": to, "sent_by": _label()}
    path = os.environ.get(OUTBOX_ENV) or os.path.join(tempfile.gettempdir(), "agent-state-demo-outbox.jsonl")
    with open(path, "a") as outbox:
        outbox.write(json.dumps({**receipt, "subject": subject, "body": body}) + "\n")
    return receipt


def draft(state: State, config: RunnableConfig) -> State:
    _event(config, "node_started", "draft")
    ctx = job_context(config)
    body = "; ".join(n["query"] for n in state["notes"])
    # Once per key in the thread, across crashes: a rerun of this node gets the recorded receipt.
    receipt = ctx.side_effect("email", USER_EMAIL, SUBJECT).run(
        lambda call: send_email(call, USER_EMAIL, SUBJECT, body)
    )
    _write(config, ("assistant", {"text": f"Emailed {USER_EMAIL}: {SUBJECT}", "receipt": receipt}, "email-notice"))
    # read before the event is recorded: a test that waits for the event and then lets the next
    # worker's draft run through (drops the setting) must still find this one hanging
    stall = os.environ.get(STALL_ENV) == "draft"
    _event(config, "model_call", "draft", prompt="write the report")
    if stall:
        STALL.wait()  # the model call hangs: the demo kills this process here
    text = MODEL.draft(state["notes"])
    _write(
        config,
        ("assistant", {"text": text}, "draft"),
        events=(("node_finished", {"node": "draft", "worker": _label()}),),
    )
    return {"draft": text, "email": receipt}


def approve(state: State, config: RunnableConfig) -> State:
    _event(config, "node_started", "approve")
    decision = interrupt({"question": "Publish this report?", "draft": state["draft"]})
    _write(
        config,
        ("user", {"decision": decision}, "approval"),
        events=(("node_finished", {"node": "approve", "worker": _label()}),),
    )
    return {"decision": decision}


def publish(state: State, config: RunnableConfig) -> State:
    _event(config, "node_started", "publish")
    answer = MODEL.publish(state["draft"], state["decision"]) if state["decision"].get("approved") else "Not published."
    _write(
        config,
        ("assistant", {"text": answer}, "answer"),
        events=(("node_finished", {"node": "publish", "worker": _label()}),),
    )
    return {"answer": answer}


def build_graph() -> Any:
    """The research agent (compiled without a checkpointer: GraphRuns binds AgentStateSaver)."""
    builder = StateGraph(State)
    for name, fn in zip(NODES, (plan, research, draft, approve, publish), strict=True):
        builder.add_node(name, fn)
    builder.add_edge(START, NODES[0])
    for a, b in itertools.pairwise(NODES):
        builder.add_edge(a, b)
    builder.add_edge(NODES[-1], END)
    return builder.compile()


#: ``agent-state worker --graph demo:graph`` (from examples/) runs this one.
graph = build_graph()


# -- the verdict ---------------------------------------------------------------------------------


@dataclass
class Facts:
    """What the demo observed; :func:`verdict` judges it."""

    killed_with_sigkill: bool = False
    killed_in_node: str | None = None
    job_status: str = ""
    finished: dict[str, list[str]] = field(default_factory=dict)  # node -> workers that finished it
    first_node_after_crash: str | None = None
    resumed_from: str | None = None  # the checkpoint id the fresh worker continued from
    resumed_from_node: str | None = None  # the node whose checkpoint it was
    lineage_passes_resume_point: bool = False
    emails_sent: int = 0
    ledger_status: str | None = None
    waited_for_human_unheld: bool = False
    approved_and_completed: bool = False
    message_seqs: list[int] = field(default_factory=list)


def verdict(f: Facts) -> list[tuple[str, bool]]:
    """The promises, each with whether the run kept it."""
    return [
        (f"worker 1 was killed with SIGKILL in the middle of node {f.killed_in_node}", f.killed_with_sigkill),
        (
            f"worker 2 resumed from the last checkpoint (after node {f.resumed_from_node}), "
            f"starting at node {f.first_node_after_crash}",
            f.resumed_from_node == "research" and f.first_node_after_crash == "draft" and f.lineage_passes_resume_point,
        ),
        (
            "no finished node ran again: " + ", ".join(f"{n} x{len(w)}" for n, w in f.finished.items()),
            list(f.finished) == NODES and all(len(w) == 1 for w in f.finished.values()),
        ),
        (
            f"the email was sent {f.emails_sent} time(s); the ledger says {f.ledger_status}",
            f.emails_sent == 1 and f.ledger_status == "done",
        ),
        ("the run waited for a person as AWAITING_HUMAN, held by no worker", f.waited_for_human_unheld),
        ("approved by the user, resumed by a worker, completed", f.approved_and_completed),
        (
            f"messages numbered 1..{len(f.message_seqs)} with no gap and no duplicate",
            bool(f.message_seqs) and f.message_seqs == list(range(1, len(f.message_seqs) + 1)),
        ),
    ]


# -- output --------------------------------------------------------------------------------------


class Out:
    """Plain text, or rich when stdout is a terminal and rich is installed (``agent-state[demo]``)."""

    def __init__(self) -> None:
        self.console: Any = None
        if sys.stdout.isatty():
            try:
                from rich.console import Console

                self.console = Console(highlight=False)
            except ImportError:
                pass

    def step(self, n: int, text: str) -> None:
        if self.console:
            self.console.print(f"\n[bold cyan]{n}.[/] [bold]{text}[/]")
        else:
            print(f"\n{n}. {text}", flush=True)

    def say(self, text: str) -> None:
        if self.console:
            self.console.print(f"   {text}")
        else:
            print(f"   {text}", flush=True)

    def progress(self, text: str, done: bool = False) -> None:
        """One line, rewritten in place on a terminal; printed once (when done) otherwise."""
        if sys.stdout.isatty():
            sys.stdout.write(f"\r   {text:<76}" + ("\n" if done else ""))
            sys.stdout.flush()
        elif done:
            print(f"   {text}", flush=True)

    def table(self, title: str, header: list[str], rows: list[list[str]]) -> None:
        if self.console:
            from rich.table import Table

            t = Table(title=title, title_justify="left", show_lines=False)
            for h in header:
                t.add_column(h, overflow="fold")
            for r in rows:
                t.add_row(*r)
            self.console.print(t)
            return
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
        widths[-1] = min(widths[-1], 90)
        print(f"\n{title}")
        print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
        print("  ".join("-" * w for w in widths))
        for r in rows:
            print("  ".join(c[:w].ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())

    def verdict(self, results: list[tuple[str, bool]]) -> None:
        print()
        for text, ok in results:
            if self.console:
                self.console.print(f"   {'[green]✔[/]' if ok else '[red]✘[/]'} {text}")
            else:
                print(f"   {'ok  ' if ok else 'FAIL'} {text}", flush=True)


# -- the scenario --------------------------------------------------------------------------------


def _wait(what: str, check: Callable[[], Any], timeout: float = BOUND, every: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up after {timeout:.0f}s waiting for {what}")
        time.sleep(every)


class _Workers:
    """The worker processes the demo starts (and always stops)."""

    def __init__(self, url: str, queue: str, outbox: Path, logdir: Path) -> None:
        self.url, self.queue, self.outbox, self.logdir = url, queue, outbox, logdir
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, label: str, stall: str | None = None) -> subprocess.Popen[bytes]:
        env = dict(os.environ, DATABASE_URL=self.url, **{OUTBOX_ENV: str(self.outbox), LABEL_ENV: label})
        env.pop(STALL_ENV, None)
        if stall:
            env[STALL_ENV] = stall
        log = open(self.logdir / f"{label.replace(' ', '-')}.log", "wb")  # noqa: SIM115 (closed with the process)
        proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "worker", "--queue", self.queue],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.procs.append(proc)
        return proc

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _short(checkpoint_id: str | None) -> str:
    return (checkpoint_id or "-")[-8:]


def run(url: str, out: Out) -> int:
    run_id = uuid.uuid4().hex[:8]
    queue, thread = f"demo-{run_id}", f"research-{run_id}"
    tmp = Path(tempfile.mkdtemp(prefix="agent-state-demo-"))
    outbox = tmp / "outbox.jsonl"
    outbox.touch()
    facts = Facts()
    with psycopg.connect(url, autocommit=True) as conn:
        client = Client(conn)
        runs = GraphRuns(client, graph, queue=queue)
        workers = _Workers(url, queue, outbox, tmp)
        with client.acting_as(USER) as user:  # the service starts the run for its user
            config = {"agent": "research", "demo": run_id}
            job = GraphRuns(user, graph, queue=queue).start(thread, {"question": QUESTION}, session_config=config)
        try:
            out.step(1, f"{USER} starts a run: job {job.job_id} on thread {thread} (queue {queue})")
            out.say(f"question: {QUESTION}")
            first = workers.start("worker 1", stall="draft")
            out.say(f"worker 1 (pid {first.pid}) claims it and runs plan -> research -> draft ...")

            def model_call_started() -> bool:
                if first.poll() is not None:
                    raise RuntimeError(f"worker 1 exited early; see {tmp}/worker-1.log")
                return any(e.payload.get("node") == "draft" for e in client.get_events(thread, kinds=["model_call"]))

            _wait("worker 1 to reach the model call in draft", model_call_started)
            held = client.get_job(job.job_id)
            head = client.get_session(thread).current_checkpoint_id
            [claimed] = [a for a in client.job_attempts(job.job_id) if a.fencing_token == held.fencing_token]
            out.say(f"{_who(claimed)} {_claim_text(claimed)}")
            for e in client.get_events(thread, kinds=["node_finished"]):
                out.say(f"node {e.payload['node']:<8} finished  ({e.payload['worker']})")
            out.say(f"node draft    emailed {USER_EMAIL} through the side-effect ledger; outbox: {_count(outbox)}")
            out.say("node draft    now waits on the model (it hangs in worker 1, on purpose)")

            out.step(2, f"SIGKILL worker 1 (pid {first.pid}) in the middle of node draft")
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=BOUND)
            marks = [(client.now(), "crash", "worker 1", "SIGKILL in the middle of node draft")]
            facts.killed_with_sigkill = first.returncode == -signal.SIGKILL
            facts.killed_in_node = "draft"
            out.say(f"exit status {first.returncode}; the job is still {client.get_job(job.job_id).status}, leased")
            out.say(f"to the dead worker until its lease runs out; last checkpoint: {_short(head)}")

            out.step(3, "Worker 2 starts and waits for the dead worker's lease to expire")
            workers.start("worker 2")

            def reclaimed() -> Any:
                # the claim as ai.job_attempts records it (the console's run page shows the same)
                taken = [a for a in client.job_attempts(job.job_id) if a.fencing_token > held.fencing_token]
                if taken:
                    return taken[0]
                left = (held.lease_expires_at - client.now()).total_seconds() if held.lease_expires_at else 0
                bar = "#" * int(max(0.0, min(left, LEASE.total_seconds())) * 4)
                out.progress(f"lease of worker 1 expires in {max(left, 0):4.1f}s  {bar}")
                return None

            taken = _wait("worker 2 to claim the job", reclaimed)
            out.progress(f"lease expired; {_who(taken)} {_claim_text(taken)}", done=True)
            paused = _wait(
                "the run to reach the approval",
                lambda: (j := client.get_job(job.job_id)).status in ("AWAITING_HUMAN", "FAILED", "COMPLETED") and j,
            )
            after = [e for e in client.get_events(thread, kinds=["node_started"]) if e.payload["worker"] == "worker 2"]
            facts.first_node_after_crash = after[0].payload["node"] if after else None
            facts.resumed_from = head
            facts.resumed_from_node = _node_of(client, thread, head)
            out.say(f"resumed from checkpoint {_short(head)} (saved after node {facts.resumed_from_node})")
            out.say(f"node {facts.first_node_after_crash} ran again; the email ledger returned the recorded receipt")
            out.say(f"outbox: {_count(outbox)} email (not sent again)")

            out.step(4, "The graph asks for approval: interrupt()")
            facts.waited_for_human_unheld = paused.status == "AWAITING_HUMAN" and paused.lease_owner is None
            out.say(f"job {job.job_id} is {paused.status}; held by: {paused.lease_owner or 'no worker'}")
            approvals = [a for a in client.pending_approvals() if a.thread_id == thread]
            if approvals:
                approval = approvals[0]
                out.say(f"pending approval: {approval.action['interrupt'][0]['question']}")
                decision = {"approved": True, "note": "looks good"}
                with client.acting_as(USER) as user:
                    user.resolve_human(thread, approval.checkpoint_id, decision)
                out.say(f"{USER} approves (resolve_human, in this process): {json.dumps(decision)}")
                done = runs.wait(job.job_id, until=("COMPLETED", "FAILED", "CANCELLED"), timeout=BOUND)
                facts.approved_and_completed = done.status == "COMPLETED"
                facts.job_status = done.status
                last = client.job_attempts(job.job_id)[-1]
                out.say(f"{_who(last)} {_claim_text(last)}, resumed with Command(resume=...); the job is {done.status}")
            workers.stop_all()

            out.step(5, "The session's timeline")
            _timeline(client, job.job_id, thread, out, marks, resumed=(taken.fencing_token, head))
            _collect(client, thread, outbox, facts)
        except BaseException:
            workers.stop_all()
            if client.get_job(job.job_id).status not in ("COMPLETED", "FAILED", "CANCELLED"):
                client.cancel_job(job.job_id)
            out.say(f"worker logs: {tmp}")
            raise
    results = verdict(facts)
    out.verdict(results)
    ok = all(passed for _, passed in results)
    print(f"\n{'All promises kept.' if ok else 'A promise was broken: see above.'} (thread {thread})")
    console = os.environ.get("AGENT_STATE_CONSOLE_URL", "http://127.0.0.1:8023")
    print(f"This run in the operator console (`make console`): {console}/runs/{thread}")
    return 0 if ok else 1


def _clip(text: str, width: int = 84) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _count(outbox: Path) -> int:
    return len(outbox.read_text().splitlines())


def _node_of(client: Client, thread: str, checkpoint_id: str | None) -> str | None:
    """The node whose write a checkpoint saved (the 'loop' checkpoint after it)."""
    if checkpoint_id is None:
        return None
    [step] = [s for s in client.checkpoint_lineage(thread, checkpoint_id) if s.checkpoint_id == checkpoint_id]
    ordinal = int(step.metadata.get("step", -1))  # -1 the input, 0 after START, n after the nth node
    return NODES[ordinal - 1] if 1 <= ordinal <= len(NODES) else None


def _collect(client: Client, thread: str, outbox: Path, facts: Facts) -> None:
    finished: dict[str, list[str]] = {}
    for e in client.get_events(thread, kinds=["node_finished"]):
        finished.setdefault(e.payload["node"], []).append(e.payload["worker"])
    facts.finished = finished
    facts.emails_sent = _count(outbox)
    facts.ledger_status = client.get_side_effect(thread, idempotency_key("email", USER_EMAIL, SUBJECT)).status
    head = client.get_session(thread).current_checkpoint_id
    if head and facts.resumed_from:
        facts.lineage_passes_resume_point = facts.resumed_from in {
            s.checkpoint_id for s in client.checkpoint_lineage(thread, head)
        }
    facts.message_seqs = [m.seq for m in client.get_messages(thread)]


def _who(attempt: JobAttempt) -> str:
    """The demo's label of the worker that made an attempt (its worker id is ``label:pid``)."""
    return (attempt.worker or "").rsplit(":", 1)[0]


def _claim_text(attempt: JobAttempt) -> str:
    return f"claimed the job (attempt {attempt.attempt}, fencing token {attempt.fencing_token})"


def _timeline(
    client: Client,
    job_id: int,
    thread: str,
    out: Out,
    marks: list[tuple[Any, str, str, str]],
    resumed: tuple[int, str | None],
) -> None:
    """Every row is a record the console shows too (events, ai.job_attempts, checkpoints, messages,
    the side-effect ledger), at the time it records, but for ``marks``: what the demo itself did."""
    rows: list[tuple[Any, str, str, str]] = list(marks)
    attempts = client.job_attempts(job_id)
    workers = {a.fencing_token: _who(a) for a in attempts}
    for a in attempts:
        resume = f"; resumes from checkpoint {_short(resumed[1])}" if a.fencing_token == resumed[0] else ""
        rows.append((a.claimed_at, "claim", _who(a), _claim_text(a) + resume))
        if a.ended_at is not None:
            ended = f"attempt {a.attempt} ended: {a.outcome}" + (f" ({a.error})" if a.error else "")
            rows.append((a.ended_at, "attempt end", _who(a), ended))
    for e in client.get_events(thread):
        payload = dict(e.payload) if isinstance(e.payload, dict) else {}
        who = payload.pop("worker", "")
        detail = payload.pop("node", None) or (json.dumps(payload) if payload else "")
        rows.append((e.created_at, "event", who, f"{e.kind} {detail}".strip()))
    head = client.get_session(thread).current_checkpoint_id
    lineage = {s.checkpoint_id for s in client.checkpoint_lineage(thread, head)} if head else set()
    for c in client.list_checkpoints(thread):
        meta = c.metadata or {}
        token = meta.get("fencing_token")
        branch = "" if c.checkpoint_id in lineage else " (not on the final lineage)"
        parent = f" <- {_short(c.parent_checkpoint_id)}" if c.parent_checkpoint_id else ""
        step = int(meta.get("step", -1))
        after = f"after {NODES[step - 1]}" if 1 <= step <= len(NODES) else meta.get("source", "")
        text = f"checkpoint {_short(c.checkpoint_id)}{parent} step {step} ({after}){branch}"
        rows.append((c.created_at, "checkpoint", workers.get(token, "") if isinstance(token, int) else "", text))
    for m in client.get_messages(thread):
        text = str(m.content["text"]) if isinstance(m.content, dict) and "text" in m.content else json.dumps(m.content)
        rows.append((m.created_at, "message", "", f"#{m.seq} {m.role}: {text}"))
    se = client.get_side_effect(thread, idempotency_key("email", USER_EMAIL, SUBJECT))
    rows.append(
        (
            se.created_at,
            "side effect",
            (se.result or {}).get("sent_by", ""),
            f"email to {USER_EMAIL}: {se.status}, attempt {se.attempt}, takeovers {se.takeovers}",
        )
    )
    rows.sort(key=lambda r: r[0])
    out.table(
        f"timeline of {thread}",
        ["time", "kind", "by", "what"],
        [[f"{at:%H:%M:%S.%f}"[:-3], kind, who, _clip(text)] for at, kind, who, text in rows],
    )


# -- entry points --------------------------------------------------------------------------------


def worker_main(queue: str) -> int:
    """One worker process of the demo: runs the research graph's jobs of ``queue`` until SIGTERM."""
    url = os.environ.get("DATABASE_URL", "")
    label = os.environ.get(LABEL_ENV, "worker")
    worker = graph_worker(
        url, graph, queue=queue, lease=LEASE, poll_interval=0.2, worker_id=f"{label}:{os.getpid()}", grace_period=2
    )
    worker.run()
    return 0


def _iter_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python examples/demo.py", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    w = sub.add_parser("worker", help="a worker process of the demo")
    w.add_argument("--queue", required=True)
    return parser.parse_args(argv)


#: The service role the demo makes and runs as (SET ROLE) when the URL's role is not a member of
#: ai_service but may create roles (a CREATEROLE database owner, as docs/security.md has it).
DEMO_SERVICE = "agent_state_demo_service"


def _as_service(conn: psycopg.Connection[Any], url: str) -> tuple[str, str | None]:
    """The URL the demo runs as, and a line saying what was made for it. The demo's service acts
    for its end user (``ai.act_as``), which only a member of ai_service may: the URL's role when it
    is one (a superuser is a member of every role); else, when it may create roles, the login role
    DEMO_SERVICE, made a member of ai_service and granted to the URL's role so that the demo's
    connections ``SET ROLE`` to it (``options=-c role=...``: no password of its own is needed)."""
    row = conn.execute(
        "select pg_catalog.pg_has_role(current_user, 'ai_service', 'MEMBER'), r.rolcreaterole or r.rolsuper,"
        " current_user from pg_catalog.pg_roles r where r.rolname = current_user"
    ).fetchone()
    member, may_create, me = row if row else (False, False, "")
    if member:
        return url, None
    if not may_create:
        raise RuntimeError(
            f"role {me} may not act for the demo's user: it is not a member of ai_service and may not create a role"
            " that is; grant it ai_service (GRANT ai_service TO ...) or run the demo as a role that may create roles"
        )
    conn.execute(
        psycopg.sql.SQL(
            "do $$ begin if not exists (select from pg_catalog.pg_roles where rolname = {name}) then"
            " create role {role} login nosuperuser nobypassrls; end if; end $$"
        ).format(name=psycopg.sql.Literal(DEMO_SERVICE), role=psycopg.sql.Identifier(DEMO_SERVICE))
    )
    conn.execute(psycopg.sql.SQL("grant ai_service to {}").format(psycopg.sql.Identifier(DEMO_SERVICE)))
    conn.execute(
        psycopg.sql.SQL("grant {} to {}").format(psycopg.sql.Identifier(DEMO_SERVICE), psycopg.sql.Identifier(me))
    )
    params: dict[str, Any] = conninfo_to_dict(url)
    params["options"] = f"{params.get('options') or ''} -c role={DEMO_SERVICE}".strip()
    return make_conninfo(
        **params
    ), f"role {me} is not a member of ai_service: the demo runs as {DEMO_SERVICE} (a member)"


def main(argv: list[str] | None = None) -> int:
    args = _iter_args(argv)
    if args.command == "worker":
        return worker_main(args.queue)
    url = os.environ.get("DATABASE_URL", "")
    out = Out()
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("select ai.now()")
            url, made = _as_service(conn, url)
            if made:
                print(f"agent-state demo: {made}")
    except psycopg.errors.InvalidSchemaName:
        hint = "run `make demo` or `sqitch deploy`"
        print(f"agent-state demo: schema ai is not deployed in {url!r}: {hint}", file=sys.stderr)
        return 2
    except psycopg.Error as error:
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        print(f"agent-state demo: cannot connect to {url!r}: {reason}", file=sys.stderr)
        return 2
    except RuntimeError as error:
        print(f"agent-state demo: {error}", file=sys.stderr)
        return 2
    started = time.monotonic()
    code = run(url, out)
    print(f"({time.monotonic() - started:.1f}s)")
    return code


if __name__ == "__main__":
    sys.exit(main())
