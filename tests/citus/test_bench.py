"""bench/citus.sh runs against the formation at its smallest size (docs/benchmarks.md, "Citus"):
each call of a durable run tried once, then both workloads measured on every node. Figures are
not checked (never timings in tests): that it runs, says what worked, and measures every node."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from formation import PORT, WORKERS

ROOT = Path(__file__).resolve().parents[2]


def test_the_citus_bench_runs_on_the_formation_and_measures_every_node(tmp_path: Path) -> None:
    out = tmp_path / "citus.json"
    env = {
        **os.environ,
        "CITUS_PORT": str(PORT),
        "CITUS_WORKERS": str(WORKERS),
        "BENCH_CITUS_TARGETS": "formation",
        "BENCH_CITUS_MAKE": "0",
        "BENCH_CITUS_LEVEL": "2",
        "BENCH_CITUS_NODES": "2",
        "BENCH_CITUS_WARMUP": "1",
        "BENCH_CITUS_WINDOW": "2",
        "BENCH_CAPACITY_POOL": "2",
        "BENCH_CITUS_OUT": str(out),
    }
    done = subprocess.run(
        [str(ROOT / "bench/citus.sh")], env=env, capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "create_session (tenant)" in done.stdout and "claim_job (worker)" in done.stdout
    data = json.loads(out.read_text())
    assert [s for s, _ in data["steps"]["formation"]][:2] == ["create_session (tenant)", "enqueue_job (tenant)"]
    assert dict(data["steps"]["formation"])["create_session (tenant)"] == "ok"
    assert {p["mode"] for p in data["points"]} == {"runs", "writes"}
    for point in data["points"]:
        nodes = [n["node"] for n in point["per_node"]]
        assert nodes == ["coordinator"] + [f"worker {i}" for i in range(1, WORKERS + 1)]
        assert all(n["wal_bytes"] >= 0 and n["commits"] is not None for n in point["per_node"])
