"""The medians of a paired capacity A/B (bench/capacity_ab.sh): per tree, run length and level,
ours' WAL, server CPU and p50 node save per node step, its ratio to stock-saver-per-run's in the
same run, and its ratio to tree A's ours, each the median over the rounds (the rounds' figures in
brackets).

    python ab_report.py DIR ROUNDS A B [C ...]
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

BASELINE = "stock-saver-per-run"
FIGURES = (("wal_per_step", "WAL B/step"), ("cpu_ms_per_step", "server CPU ms/step"), ("save_p50", "save p50 ms"))


def pick(rs: list[dict[str, Any]], stack: str, nodes: int, level: int) -> dict[str, Any] | None:
    return next(
        (x for x in rs if x["stack"] == stack and int(x.get("nodes", 24)) == nodes and x["level"] == level), None
    )


def cell(values: list[float], fmt: str) -> str:
    if not values:
        return ""
    return f"**{statistics.median(values):{fmt}}** ({', '.join(f'{v:{fmt}}' for v in values)})"


def main() -> None:
    where, rounds, trees = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    runs = {
        t: [json.loads((where / f"{t}-{r}.json").read_text())["results"] for r in range(1, rounds + 1)] for t in trees
    }
    points = sorted({(int(x.get("nodes", 24)), x["level"]) for rs in runs[trees[0]] for x in rs})
    print("| nodes | level | figure | tree | ours | stock-saver-per-run | ours / stock | ours / A's |")
    print("|---:|---:|---|---|---|---|---|---|")
    for nodes, level in points:
        for key, label in FIGURES:
            for t in trees:
                ours, stock, ratios, to_a = [], [], [], []
                for r, rs in enumerate(runs[t]):
                    o, s = pick(rs, "ours", nodes, level), pick(rs, BASELINE, nodes, level)
                    a = pick(runs[trees[0]][r], "ours", nodes, level)
                    if o is None or s is None:
                        continue
                    ours.append(o[key])
                    stock.append(s[key])
                    ratios.append(o[key] / s[key] if s[key] else float("nan"))
                    if a is not None and a[key] and t != trees[0]:
                        to_a.append(o[key] / a[key])
                fmt = ".0f" if key == "wal_per_step" else ".2f"
                cells = [cell(ours, fmt), cell(stock, fmt), cell(ratios, ".2f"), cell(to_a, ".2f")]
                print(f"| {nodes} | {level} | {label} | {t} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
