"""The console's workers page (``/workers``): every worker of the registry, idle ones included,
its state (alive, stale, stopped), queue, what it holds and when it was last heard from
(``ai.list_workers``; for ai_service, as a worker's holdings span tenants). Issue 32, item 5."""

from __future__ import annotations

from typing import Any

import psycopg
from starlette.requests import Request
from starlette.responses import Response

from .. import errors
from .pages import _console, _guarded
from .params import Param, accepts

#: Workers per page (by worker id; the next page starts after the last one shown).
WORKERS_PAGE = 200


@accepts(query={"after": Param("text", 255)})
def workers(request: Request) -> Response:
    console = _console(request)
    after = request.state.params["after"]

    def work() -> Response:
        rows: list[dict[str, Any]] | None
        with console.connect(request.state.login) as conn:
            ident = console.identity(conn)
            try:
                rows = console.rows(conn, "select * from ai.list_workers(%s, %s)", (WORKERS_PAGE + 1, after))
            except (errors.AgentStateError, psycopg.Error):
                rows = None  # for ai_service only
        more = rows is not None and len(rows) > WORKERS_PAGE
        shown = None if rows is None else rows[:WORKERS_PAGE]
        counts = {state: sum(1 for w in shown or () if w["state"] == state) for state in ("alive", "stale", "stopped")}
        return console.render(
            request,
            "workers.html",
            title="Workers",
            workers=shown,
            counts=counts,
            next_after=shown[-1]["worker"] if more and shown else None,
            after=after,
            operator=ident["operator"],
        )

    return _guarded(request, work)
