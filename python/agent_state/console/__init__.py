"""The operator console: server-rendered pages over the ``ai`` schema's functions (docs/console.md).

``agent-state console`` serves it; ``create_app(database_url, ...)`` returns the Starlette app, which a
service of your own can mount (``app.mount("/console", create_app(...))``). Every read and every action
is one call of an ``ai`` function as the connecting role, so row level security decides what a login
sees: a tenant (a member of ai_user) its own runs, a service acting for nobody every run.

Needs the optional extra: ``pip install agent-state[console]`` (Starlette, Jinja2, uvicorn).
"""

from __future__ import annotations

from .app import ConsoleConfig, create_app, hash_password, verify_password

__all__ = ["ConsoleConfig", "create_app", "hash_password", "verify_password"]
