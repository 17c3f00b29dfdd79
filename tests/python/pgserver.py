"""Restarting and killing the test server, for the retry and crash tests: only the private cluster
of this worktree (.pgdata/data, started by scripts/pg.sh), never a server of the user's.

Postgres runs as the ``postgres`` OS user when the tests run as root (scripts/pg.sh), so pg_ctl
runs through runuser then. Every wait here is bounded and polls a condition (the server answers,
the pid file is gone), never a fixed sleep.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import psycopg
import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / ".pgdata" / "data"
LOG = ROOT / ".pgdata" / "postgres.log"
PGBIN = Path(os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin"))


def _as_owner(*cmd: str) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.getuid() == 0 else list(cmd)


def require_private_cluster(dsn: str) -> None:
    """Skips the test unless ``dsn`` is this worktree's private cluster (the only server a test
    may restart or kill)."""
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            row = conn.execute("select current_setting('data_directory')").fetchone()
    except psycopg.Error as error:
        pytest.skip(f"cannot read data_directory: {error}")
    if row is None or Path(row[0]).resolve() != DATA.resolve():
        pytest.skip("the test server is not this worktree's private cluster (make test starts it)")


def postmaster_pid() -> int:
    return int((DATA / "postmaster.pid").read_text().splitlines()[0])


def wait_until_up(dsn: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with psycopg.connect(dsn, autocommit=True, connect_timeout=2) as conn:
                conn.execute("select 1")
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def restart_immediate(dsn: str) -> None:
    """``pg_ctl restart -m immediate``: every backend dies without a checkpoint, crash recovery
    on start, as after a power cut of the server."""
    pg_ctl = [str(PGBIN / "pg_ctl"), "-D", str(DATA), "-l", str(LOG), "-w", "-t", "60"]
    subprocess.run(
        _as_owner(*pg_ctl, "-m", "immediate", "restart"),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wait_until_up(dsn)


def kill_postmaster_and_start(dsn: str, timeout: float = 60.0) -> None:
    """SIGKILL to the postmaster (the backends notice its death and exit), then start it again
    once it can (the old shared memory is released when the last orphan backend is gone)."""
    pid = postmaster_pid()
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() > deadline:
            raise TimeoutError("the killed postmaster did not go away")
        time.sleep(0.02)
    while True:
        started = subprocess.run(
            _as_owner(str(PGBIN / "pg_ctl"), "-D", str(DATA), "-l", str(LOG), "-w", "-t", "30", "start"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if started.returncode == 0:
            break
        if time.monotonic() > deadline:
            raise TimeoutError("the server did not start again after the kill")
        time.sleep(0.2)  # orphan backends still hold the old shared memory
    wait_until_up(dsn, max(1.0, deadline - time.monotonic()))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie of ours would still answer kill 0; the postmaster is not our child
        return "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
