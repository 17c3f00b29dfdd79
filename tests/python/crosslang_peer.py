"""The Python side of the TypeScript cross-language tests (typescript/test/crosslang.test.ts).

``python crosslang_peer.py enqueue DSN THREAD QUEUE``: starts a graph run as Python's GraphRuns
does (the TypeScript worker runs it); prints ``{"job_id": ...}``.

``python crosslang_peer.py read DSN THREAD JOB_ID``: reads back what the run wrote, from Python:
the job, the thread's messages, the side effect ("email", "alice", "started") and the latest
checkpoint through the Python AgentStateSaver (LangGraph.js wrote it as JSON); prints them as JSON.

``python crosslang_peer.py messages DSN THREAD``: the latest checkpoint's ``messages`` channel as
the Python saver reads it (LangChain messages written by LangGraph.js): ``[[class, content], ...]``.

``python crosslang_peer.py py-messages DSN THREAD``: a Python graph over LangGraph's
``MessagesState`` runs once on THREAD with the Python AgentStateSaver (its checkpoints are msgpack,
for the TypeScript saver to read).

``python crosslang_peer.py worker DSN QUEUE``: a Python graph_worker drains QUEUE, running a
LangGraph graph of the same shape as the TypeScript test graph (research: a side effect and a
fenced message; publish), for runs started from TypeScript.
"""

from __future__ import annotations

import json
import operator
import sys
from typing import Annotated, Any, TypedDict

import psycopg
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph

from agent_state import Client
from agent_state.langgraph import AgentStateSaver, GraphRuns, graph_worker, job_context
from agent_state.side_effects import idempotency_key


class State(TypedDict):
    steps: Annotated[list[str], operator.add]


def research(state: State, config: RunnableConfig) -> dict[str, Any]:
    ctx = job_context(config)
    receipt = ctx.side_effect("email", "alice", "started").run(lambda call: {"sent": call.key[:8]})
    job = ctx.job
    ctx._worker.client.append_message(
        job.thread_id,
        "assistant",
        {"text": "emailed alice", "from": "python"},
        idempotency_key="research-message",
        job_id=job.job_id,
        fencing_token=job.fencing_token,
    )
    return {"steps": [f"emailed alice ({receipt['sent']})"]}


def publish(state: State) -> dict[str, Any]:
    return {"steps": ["published by python"]}


def build() -> Any:
    builder = StateGraph(State)
    builder.add_node("research", research)
    builder.add_node("publish", publish)
    builder.add_edge(START, "research")
    builder.add_edge("research", "publish")
    builder.add_edge("publish", END)
    return builder.compile()


def main(argv: list[str]) -> None:
    command, dsn = argv[1], argv[2]
    if command == "enqueue":
        thread, queue = argv[3], argv[4]
        with psycopg.connect(dsn, autocommit=True) as conn:
            job = GraphRuns(Client(conn), build(), queue=queue).start(thread, {"steps": []})
        print(json.dumps({"job_id": job.job_id}))
    elif command == "read":
        thread, job_id = argv[3], int(argv[4])
        with psycopg.connect(dsn, autocommit=True) as conn:
            client = Client(conn)
            job = client.get_job(job_id)
            effect = client.get_side_effect(thread, idempotency_key("email", "alice", "started"))
            found = AgentStateSaver(conn).get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
            assert found is not None
            history = list(AgentStateSaver(conn).list({"configurable": {"thread_id": thread}}))
            print(
                json.dumps(
                    {
                        "status": job.status,
                        "result": job.result,
                        "messages": [m.content for m in client.get_messages(thread)],
                        "side_effect": {"status": effect.status, "result": effect.result, "attempt": effect.attempt},
                        "steps": found.checkpoint["channel_values"]["steps"],
                        "metadata_job_id": found.metadata.get("job_id"),
                        "checkpoints": len(history),
                    }
                )
            )
    elif command == "messages":
        thread = argv[3]
        with psycopg.connect(dsn, autocommit=True) as conn:
            found = AgentStateSaver(conn).get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
            assert found is not None
            items = found.checkpoint["channel_values"]["messages"]
            print(json.dumps([[type(m).__name__, m.content] for m in items]))
    elif command == "py-messages":
        thread = argv[3]
        builder = StateGraph(MessagesState)
        builder.add_node("echo", lambda state: {"messages": [AIMessage("hello from Python")]})
        builder.add_edge(START, "echo")
        builder.add_edge("echo", END)
        with psycopg.connect(dsn, autocommit=True) as conn:
            graph = builder.compile(checkpointer=AgentStateSaver(conn))
            graph.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": thread}})
        print(json.dumps({"thread": thread}))
    elif command == "worker":
        queue = argv[3]
        stats = graph_worker(dsn, build(), queue=queue).run(drain=True, install_signal_handlers=False)
        print(json.dumps({"completed": stats.completed}))
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv)
