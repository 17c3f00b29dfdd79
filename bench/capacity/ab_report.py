"""The medians of a paired capacity A/B (bench/capacity_ab.sh): per tree (A, B), run length and
level, ours' WAL, server CPU and p50 node save per step against stock-saver-per-run's in the same
run, and ours' B/A, each the median over the rounds (with the rounds' figures).

    python ab_report.py DIR ROUNDS
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

BASELINE = "stock-saver-per-run"
FIGURES = (("wal_per_step", "WAL/step"), ("cpu_ms_per_step", "server CPU/step"), ("save_p50", "save p50"))


def main() -> None:
    where, rounds = Path(sys.argv[1]), int(sys.argv[2])
    runs: dict[str, list[list[dict[str, Any]]]] = {"A": [], "B": []}
    for tree in runs:
        for r in range(1, rounds + 1):
            runs[tree].append(json.loads((where / f"{tree}-{r}.json").read_text())["results"])
    points = sorted({(int(x.get("nodes", 24)), x["level"]) for rs in runs["A"] for x in rs})

    def pick(rs: list[dict[str, Any]], stack: str, nodes: int, level: int) -> dict[str, Any] | None:
        return next(
            (x for x in rs if x["stack"] == stack and int(x.get("nodes", 24)) == nodes and x["level"] == level), None
        )

    print("| nodes | level | figure | A: ours | A: ratio to stock | B: ours | B: ratio to stock | B/A (ours) |")
    print("|---:|---:|---|---|---|---|---|---:|")
    for nodes, level in points:
        for key, label in FIGURES:
            cells: list[str] = []
            ours_of: dict[str, list[float]] = {}
            for tree in ("A", "B"):
                ours, ratios = [], []
                for rs in runs[tree]:
                    o, s = pick(rs, "ours", nodes, level), pick(rs, BASELINE, nodes, level)
                    if o is None or s is None:
                        continue
                    ours.append(o[key])
                    ratios.append(o[key] / s[key] if s[key] else float("nan"))
                ours_of[tree] = ours
                cells.append(f"{statistics.median(ours):.4g} ({', '.join(f'{v:.4g}' for v in ours)})")
                cells.append(f"**{statistics.median(ratios):.2f}** ({', '.join(f'{v:.2f}' for v in ratios)})")
            ba = [b / a for a, b in zip(ours_of["A"], ours_of["B"], strict=False) if a]
            cells.append(f"{statistics.median(ba):.2f}" if ba else "")
            print(f"| {nodes} | {level} | {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
