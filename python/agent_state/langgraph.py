"""LangGraph on agent-state: where an application imports it from.

* the checkpointers ``AgentStateSaver`` and ``AsyncAgentStateSaver`` (agent_state/langgraph_saver.py),
  swapped for LangGraph's ``PostgresSaver``;
* ``CompressedSerializer`` (agent_state/serde.py), a saver's ``serde=`` that stores large values
  zlib-compressed;
* durable graph runs through the queue: ``GraphRuns``, ``graph_worker``, ``job_context`` and their
  async twins (agent_state/graph_runs.py).

The modules import one way only: this one imports the others, ``graph_runs`` imports
``langgraph_saver``, and neither imports this one.
"""

from __future__ import annotations

from .graph_runs import (
    AsyncGraphRuns,
    GraphRuns,
    async_graph_handler,
    async_graph_worker,
    graph_handler,
    graph_worker,
    job_context,
)
from .langgraph_saver import AgentStateSaver, AsyncAgentStateSaver
from .serde import CompressedSerializer
from .store import AgentStateStore, AsyncAgentStateStore

__all__ = [
    "AgentStateSaver",
    "AgentStateStore",
    "AsyncAgentStateSaver",
    "AsyncAgentStateStore",
    "AsyncGraphRuns",
    "CompressedSerializer",
    "GraphRuns",
    "async_graph_handler",
    "async_graph_worker",
    "graph_handler",
    "graph_worker",
    "job_context",
]
