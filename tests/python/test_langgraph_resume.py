"""get_state_history agrees with ai.checkpoint_lineage, before and after time travel.

(A graph killed with SIGKILL in the middle of a run and resumed in a new process is tested through
the queue, with the durable graph-run API: test_graph_runs.py.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import psycopg

from agent_state import Client
from agent_state.langgraph import AgentStateSaver

sys.path.insert(0, str(Path(__file__).resolve().parent))
from resumable_graph import build


def test_get_state_history_equals_checkpoint_lineage(role_dsn: Any, thread_id: str) -> None:
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        graph = build(AgentStateSaver(conn))
        config: dict[str, Any] = {"configurable": {"thread_id": thread_id}}
        graph.invoke({"visited": []}, config)
        history = [s.config["configurable"]["checkpoint_id"] for s in graph.get_state_history(config)]
        head_id = Client(conn).get_session(thread_id).current_checkpoint_id
        lineage = [
            r[0]
            for r in conn.execute(
                "select checkpoint_id from ai.checkpoint_lineage(%s, %s) order by depth", (thread_id, head_id)
            ).fetchall()
        ]
        assert len(history) == 6  # input, start, a, b, c, d
        assert history == lineage

        # Time travel: replay from the checkpoint after a. History now holds both branches; the
        # lineage of the new head is its own branch, which is the parent_config chain.
        after_a = next(s for s in graph.get_state_history(config) if s.values.get("visited") == ["a"])
        graph.invoke(None, after_a.config)
        new_head = graph.get_state(config)
        chain = []
        step: Any = new_head
        while step is not None:
            chain.append(step.config["configurable"]["checkpoint_id"])
            step = graph.get_state(step.parent_config) if step.parent_config else None
        lineage = [
            r[0]
            for r in conn.execute(
                "select checkpoint_id from ai.checkpoint_lineage(%s, %s) order by depth", (thread_id, chain[0])
            ).fetchall()
        ]
        assert lineage == chain
        assert set(lineage) < {s.config["configurable"]["checkpoint_id"] for s in graph.get_state_history(config)}
        assert new_head.values["visited"] == ["a", "b", "c", "d"]
