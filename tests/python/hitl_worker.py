"""A worker process of the human-in-the-loop tests (test_hitl.py): drains a queue, then exits.

``python hitl_worker.py DSN QUEUE plain|graph``. The handler pauses a job for a person the first
time (``ctx.request_human``) and, once the job comes back carrying the decision, finishes it.
In ``graph`` mode the job runs a LangGraph graph whose node calls ``interrupt()``: the pause is
LangGraph's own, the resume is ``Command(resume=decision)``, and the checkpoints are the
AgentStateSaver's, fenced on the job. Prints one JSON line per job it handled.
"""

from __future__ import annotations

import json
import operator
import os
import sys
from datetime import timedelta
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from psycopg_pool import ConnectionPool

from agent_state import Job, JobContext, Worker, human_decision
from agent_state.langgraph import AgentStateSaver


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def plan(state: State) -> dict[str, list[str]]:
    return {"log": [f"plan by {os.getpid()}"]}


def approve(state: State) -> dict[str, list[str]]:
    answer = interrupt({"refund": 30, "to": "alice"})
    return {"log": [f"approved={answer['approved']} by {os.getpid()}"]}


def act(state: State) -> dict[str, list[str]]:
    return {"log": [f"refunded by {os.getpid()}"]}


def build(checkpointer: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node("plan", plan)
    builder.add_node("approve", approve)
    builder.add_node("act", act)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "approve")
    builder.add_edge("approve", "act")
    builder.add_edge("act", END)
    return builder.compile(checkpointer=checkpointer)


def main() -> None:
    dsn, queue, mode = sys.argv[1:4]

    with ConnectionPool(dsn, min_size=2, max_size=6, kwargs={"autocommit": True}, open=True) as pool:
        graph = build(AgentStateSaver(pool))

        def plain(job: Job, ctx: JobContext) -> Any:
            human = human_decision(job.payload)
            if human is None:
                approval = ctx.request_human("step-1", {"refund": 30})
                print(json.dumps({"paused": approval, "pid": os.getpid()}), flush=True)
                return None
            return {"decision": human["decision"], "resumed_by": os.getpid()}

        def with_graph(job: Job, ctx: JobContext) -> Any:
            config = {
                "configurable": {"thread_id": job.thread_id, "job_id": job.job_id, "fencing_token": job.fencing_token}
            }
            human = human_decision(job.payload)
            result = graph.invoke({"log": []} if human is None else Command(resume=human["decision"]), config)
            if "__interrupt__" in result:
                checkpoint_id = graph.get_state(config).config["configurable"]["checkpoint_id"]
                action = {"interrupt": [i.value for i in result["__interrupt__"]]}
                approval = ctx.request_human(checkpoint_id, action)
                print(json.dumps({"paused": approval, "checkpoint_id": checkpoint_id, "pid": os.getpid()}), flush=True)
                return None
            print(json.dumps({"completed": result, "pid": os.getpid()}), flush=True)
            return result

        handler = plain if mode == "plain" else with_graph
        worker = Worker(
            pool, handler, queue, concurrency=1, lease=timedelta(seconds=30), poll_interval=0.1, listen=False
        )
        worker.run(drain=True, install_signal_handlers=False)


if __name__ == "__main__":
    main()
