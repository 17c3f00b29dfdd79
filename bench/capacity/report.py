"""The capacity bench's chart and table: p99 node-save latency against concurrent runs, per stack.

    python report.py RESULTS_JSON OUT_SVG OUT_MD

Writes a hand-made SVG (no plotting dependency: log-2 x axis of concurrent runs, log y axis of
milliseconds, the 50 ms line; one line per stack and run length, the longer runs dashed) and the
markdown tables behind it (per point; capacity per stack and run length; the ratios of each
stack against stock-saver-per-run, the stock stack at its best, at each run length and level),
and prints the markdown. Results without a run length (before issue 20) count as 24 nodes.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

LIMIT_MS = 50.0
COLOURS = {
    "ours": "#1f77b4",
    "ours-1by1": "#7fb8e0",
    "ours-lz4": "#2ca02c",
    "stock": "#d62728",
    "stock-saver-per-run": "#ff9896",
}
BASELINE = "stock-saver-per-run"


def nodes_of(r: dict[str, Any]) -> int:
    return int(r.get("nodes", 24))


def capacity(rows: list[dict[str, Any]]) -> int:
    """The largest level whose p99 node save is under 50 ms with no errors (0 when none is)."""
    ok = [r["level"] for r in rows if r["save_p99"] < LIMIT_MS and r["errors"] == 0]
    return max(ok, default=0)


def svg(data: dict[str, Any]) -> str:
    results = data["results"]
    levels = sorted({r["level"] for r in results})
    stacks = [s for s in COLOURS if any(r["stack"] == s for r in results)]
    node_counts = sorted({nodes_of(r) for r in results})
    series = [(s, n) for n in node_counts for s in stacks if any(r["stack"] == s and nodes_of(r) == n for r in results)]
    w, h, left, right, top, bottom = 700, 440, 70, 210, 30, 50
    lo = min(1.0, *(r["save_p50"] for r in results if r["save_p50"] == r["save_p50"]))
    hi = max(LIMIT_MS * 2, *(r["save_p99"] for r in results if r["save_p99"] == r["save_p99"]))
    y_lo, y_hi = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    x_lo, x_hi = math.log2(levels[0]) - 0.3, math.log2(levels[-1]) + 0.3

    def x(level: float) -> float:
        return left + (math.log2(level) - x_lo) / (x_hi - x_lo) * (w - left - right)

    def y(ms: float) -> float:
        return top + (y_hi - math.log10(max(ms, 10**y_lo))) / (y_hi - y_lo) * (h - top - bottom)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<text x="{w / 2 - 60}" y="18" font-size="14">p99 node-save latency vs concurrent runs</text>',
    ]
    for e in range(y_lo, y_hi + 1):
        for m in (1, 2, 5):
            v = m * 10**e
            if v > 10**y_hi:
                continue
            out.append(f'<line x1="{left}" x2="{w - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#eee"/>')
            out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
    for level in levels:
        out.append(f'<line x1="{x(level):.1f}" x2="{x(level):.1f}" y1="{top}" y2="{h - bottom}" stroke="#eee"/>')
        out.append(f'<text x="{x(level):.1f}" y="{h - bottom + 16}" text-anchor="middle">{level}</text>')
    out.append(f'<text x="{(left + w - right) / 2}" y="{h - 12}" text-anchor="middle">concurrent runs</text>')
    out.append(
        f'<text x="16" y="{(top + h - bottom) / 2}" transform="rotate(-90 16 {(top + h - bottom) / 2})" '
        'text-anchor="middle">ms (log)</text>'
    )
    out.append(
        f'<line x1="{left}" x2="{w - right}" y1="{y(LIMIT_MS):.1f}" y2="{y(LIMIT_MS):.1f}" '
        'stroke="#555" stroke-dasharray="6 4"/>'
    )
    out.append(f'<text x="{w - right + 4}" y="{y(LIMIT_MS) + 4:.1f}">50 ms</text>')
    for i, (stack, nodes) in enumerate(series):
        rows = sorted((r for r in results if r["stack"] == stack and nodes_of(r) == nodes), key=lambda r: r["level"])
        long = ' stroke-dasharray="8 4"' if nodes != node_counts[0] else ""
        pts = " ".join(f"{x(r['level']):.1f},{y(r['save_p99']):.1f}" for r in rows if r["save_p99"] == r["save_p99"])
        out.append(f'<polyline points="{pts}" fill="none" stroke="{COLOURS[stack]}" stroke-width="2"{long}/>')
        for r in rows:
            out.append(f'<circle cx="{x(r["level"]):.1f}" cy="{y(r["save_p99"]):.1f}" r="3" fill="{COLOURS[stack]}"/>')
        ly = top + 20 + 22 * i
        out.append(
            f'<line x1="{w - right + 10}" x2="{w - right + 34}" y1="{ly}" y2="{ly}" stroke="{COLOURS[stack]}" '
            f'stroke-width="2"{long}/>'
        )
        out.append(f'<text x="{w - right + 40}" y="{ly + 4}">{stack}, {nodes} nodes</text>')
    out.append(f'<text x="{w - right + 10}" y="{top + 20 + 22 * len(series) + 4}" fill="#777">p99 node save</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def markdown(data: dict[str, Any]) -> str:
    results = data["results"]
    stacks = [s for s in COLOURS if any(r["stack"] == s for r in results)]
    node_counts = sorted({nodes_of(r) for r in results})
    lines = [
        f"Levels {', '.join(map(str, data['levels']))} concurrent runs, runs of "
        f"{' and '.join(map(str, node_counts))} nodes (1-2 s each); per point {data['warmup']:g} s warm-up, "
        f"{data['window']:g} s measured; lease {data['lease']:g} s renewed every {data['lease'] / 3:g} s, pools of "
        f"{data['pool']} connections; ours' messages "
        f"{'in the step (the saver mirrors them)' if data.get('mirror') else 'appended in calls of their own'}.",
        "",
        "| stack | nodes | runs | held | steps/s | save p50 ms | save p99 ms | claim p50 ms | claim p99 ms "
        "| server CPU ms/step | WAL B/step | FPI/step | growth KB/run | HOT share (jobs) | errors "
        "| driver CPU ms/step | loop lag p99 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in sorted(results, key=lambda r: (nodes_of(r), r["level"], stacks.index(r["stack"]))):
        lines.append(
            f"| {r['stack']} | {nodes_of(r)} | {r['level']} | {r['running']:.0f} | {r['steps_per_s']:.1f} "
            f"| {r['save_p50']:.1f} | {r['save_p99']:.1f} | {r['claim_p50']:.1f} | {r['claim_p99']:.1f} "
            f"| {r['cpu_ms_per_step']:.2f} | {r['wal_per_step']:.0f} | {r['fpi_per_step']:.2f} "
            f"| {r['growth_per_run'] / 1024:.0f} | {r['hot_share']:.2f} | {r['errors']} "
            f"| {r['driver_ms_per_step']:.2f} | {r['lag_p99']:.1f} |"
        )
    lines += [
        "",
        "| stack | nodes | capacity (largest level, p99 save < 50 ms, no errors) | median WAL B/step | "
        "median server CPU ms/step |",
        "|---|---:|---:|---:|---:|",
    ]
    for n in node_counts:
        for s in stacks:
            rows = [r for r in results if r["stack"] == s and nodes_of(r) == n]
            if rows:
                lines.append(
                    f"| {s} | {n} | {capacity(rows)} | {statistics.median(r['wal_per_step'] for r in rows):.0f} | "
                    f"{statistics.median(r['cpu_ms_per_step'] for r in rows):.2f} |"
                )
    for base_name in (BASELINE, "stock"):
        base = {(nodes_of(r), r["level"]): r for r in results if r["stack"] == base_name}
        if not base:
            continue
        lines += [
            "",
            f"Ratios against {base_name} at each run length and level (same run; issue 20's targets against "
            f"{BASELINE}: CPU <= 0.70, WAL <= 0.50 at 24 nodes and <= 0.25 at 96, capacity >= 2x):",
            "",
            "| stack | nodes | level | server CPU/step | WAL/step | p99 save |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for r in sorted(results, key=lambda r: (r["stack"], nodes_of(r), r["level"])):
            b = base.get((nodes_of(r), r["level"]))
            if r["stack"] == base_name or r["stack"].startswith("stock") or b is None:
                continue
            lines.append(
                f"| {r['stack']} | {nodes_of(r)} | {r['level']} | {ratio(r['cpu_ms_per_step'], b['cpu_ms_per_step'])} "
                f"| {ratio(r['wal_per_step'], b['wal_per_step'])} | {ratio(r['save_p99'], b['save_p99'])} |"
            )
        for n in node_counts:
            b_rows = [r for r in results if r["stack"] == base_name and nodes_of(r) == n]
            for s in stacks:
                rows = [r for r in results if r["stack"] == s and nodes_of(r) == n]
                if s.startswith("stock") or not rows or not b_rows:
                    continue
                lines.append(f"| {s} | {n} | capacity | | | {capacity(rows)} against {capacity(b_rows)} |")
    broken = [r for r in results if r.get("wal_by_relation")]
    if broken:
        lines += [
            "",
            f"WAL bytes per node step by relation at {broken[0]['level']} runs (pg_walinspect; the "
            "relation of each record's first block):",
            "",
        ]
        for r in broken:
            top = sorted(r["wal_by_relation"].items(), key=lambda kv: -kv[1])[:12]
            lines.append(
                f"- {r['stack']}, {nodes_of(r)} nodes: " + ", ".join(f"{name} {nbytes:.0f}" for name, nbytes in top)
            )
    return "\n".join(lines) + "\n"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b and b == b and a == a else "n/a"


def main() -> None:
    data = json.loads(Path(sys.argv[1]).read_text())
    Path(sys.argv[2]).write_text(svg(data))
    text = markdown(data)
    Path(sys.argv[3]).write_text(text)
    print()
    print(text)


if __name__ == "__main__":
    main()
