"""Runs one graph of finished_task_graphs.py until the test kills it: argv = saver (ours | stock),
shape, dsn, thread_id, directory; for stock, the dsn's search_path names PostgresSaver's schema."""

from __future__ import annotations

import sys
from pathlib import Path

from psycopg_pool import ConnectionPool

sys.path.insert(0, str(Path(__file__).resolve().parent))
from finished_task_graphs import build, first_input


def main() -> None:
    kind, shape, dsn, thread_id, directory = sys.argv[1:6]
    with ConnectionPool(dsn, min_size=1, max_size=4, kwargs={"autocommit": True}) as pool:
        if kind == "stock":
            from langgraph.checkpoint.postgres import PostgresSaver

            saver = PostgresSaver(pool)  # type: ignore[arg-type]
        else:
            from agent_state.langgraph import AgentStateSaver

            saver = AgentStateSaver(pool)  # type: ignore[assignment]
        graph = build(shape, Path(directory), saver)
        graph.invoke(first_input(shape), {"configurable": {"thread_id": thread_id}}, durability="sync")


if __name__ == "__main__":
    main()
