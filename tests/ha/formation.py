"""The pg_auto_failover formation of `make test-ha` as the tests see it (scripts/ha.sh builds it).

Ports: the monitor on HA_PORT (6100), node N on HA_PORT + N. Clients use the multi-host URL
with ``target_session_attrs=read-write``, as docs/high-availability.md tells users to.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[2]
HA_DIR = ROOT / ".ha"
PORT = int(os.environ.get("HA_PORT", "6100"))
NODES = int(os.environ.get("HA_NODES", "2"))
NODE_PORTS = [PORT + n for n in range(1, NODES + 1)]
HOSTS = ",".join(f"127.0.0.1:{p}" for p in NODE_PORTS)
#: console_operator's password (scripts/ha.sh): the console logs in only where the server asks for it
CONSOLE_PASSWORD = "ha-console-operator"


def url(user: str, *, read_write: bool = True, connect_timeout: int = 3) -> str:
    attrs = "&target_session_attrs=read-write" if read_write else ""
    return f"postgresql://{user}@{HOSTS}/agent_state?connect_timeout={connect_timeout}{attrs}"


def node_url(port: int, user: str = "postgres") -> str:
    return f"postgresql://{user}@127.0.0.1:{port}/agent_state?connect_timeout=3"


def ha(*args: str, timeout: float = 180) -> str:
    """scripts/ha.sh with these arguments; its output."""
    done = subprocess.run(
        [str(ROOT / "scripts" / "ha.sh"), *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"scripts/ha.sh {' '.join(args)} failed: {done.stdout}{done.stderr}")
    return done.stdout


def nodes() -> list[tuple[int, str, str]]:
    """(port, reported state, goal state) of each node, from the monitor."""
    with psycopg.connect(f"postgresql://autoctl_node@127.0.0.1:{PORT}/pg_auto_failover", connect_timeout=3) as mon:
        rows = mon.execute(
            "select nodeport, reportedstate::text, goalstate::text from pgautofailover.node order by nodeport"
        ).fetchall()
    return [(int(p), str(r), str(g)) for p, r, g in rows]


def healthy() -> bool:
    """One primary, every other node a secondary, each where the monitor wants it."""
    try:
        found = nodes()
    except psycopg.Error:
        return False
    states = sorted(r for _, r, g in found if r == g)
    return len(states) == NODES and states == ["primary"] + ["secondary"] * (NODES - 1)


def primary_port() -> int:
    [port] = [p for p, r, _ in nodes() if r == "primary"]
    return port


def secondary_port() -> int:
    return next(p for p, r, _ in nodes() if r == "secondary")


def wait(condition: object, seconds: float, what: str, step: float = 0.2) -> float:
    """Until condition() is true (raises after ``seconds``); returns when it became true."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if condition():  # type: ignore[operator]
                return time.monotonic()
        except psycopg.Error:
            pass
        time.sleep(step)
    raise AssertionError(f"{what}: not within {seconds} s; formation: {ha('state')}")


def spawn_worker(args: list[str], logdir: Path, name: str) -> subprocess.Popen[bytes]:
    """tests/ha/ha_worker.py with these arguments, its stderr in logdir/name.err."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), str(ROOT / "tests" / "ha"), env.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "ha" / "ha_worker.py"), *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(logdir / f"{name}.err", "ab"),
    )
