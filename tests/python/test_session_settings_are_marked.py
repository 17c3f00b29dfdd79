"""A test that sets ai.frozen_now for its session runs direct: through PgBouncer in transaction
pooling the setting stays on a server connection and moves the clock of whatever test gets that
connection next (the pooled run of 2026-12-06 failed four other tests so: a rate limit counted
at a frozen instant, a lease that never grew, the oldest job's age, a crash test whose leases
never ran out). So every test file that sets it at session scope is marked session_features."""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
SESSION_CLOCK = re.compile(r"set_config\('ai\.frozen_now',[^)]*,\s*false\)|-c ai\.frozen_now=")


def test_every_file_that_freezes_the_clock_for_its_session_runs_direct() -> None:
    unmarked = []
    for path in sorted(HERE.glob("test_*.py")):
        text = path.read_text()
        # marked: the whole file (pytestmark) or each test that sets it (a decorator in the file)
        if path.name != Path(__file__).name and SESSION_CLOCK.search(text) and "session_features" not in text:
            unmarked.append(path.name)
    assert not unmarked, f"set ai.frozen_now for the session but are not marked session_features: {unmarked}"
