"""The capacity bench's chart and table: p99 node-save latency against concurrent runs, per stack.

    python report.py RESULTS_JSON OUT_SVG OUT_MD

Writes a hand-made SVG (no plotting dependency: log-2 x axis of concurrent runs, log y axis of
milliseconds, the 50 ms line) and the markdown table behind it, and prints the markdown.
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


def capacity(rows: list[dict[str, Any]]) -> int:
    """The largest level whose p99 node save is under 50 ms with no errors (0 when none is)."""
    ok = [r["level"] for r in rows if r["save_p99"] < LIMIT_MS and r["errors"] == 0]
    return max(ok, default=0)


def svg(data: dict[str, Any]) -> str:
    results = data["results"]
    levels = sorted({r["level"] for r in results})
    stacks = [s for s in COLOURS if any(r["stack"] == s for r in results)]
    w, h, left, right, top, bottom = 640, 400, 70, 150, 30, 50
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
    for i, stack in enumerate(stacks):
        rows = sorted((r for r in results if r["stack"] == stack), key=lambda r: r["level"])
        for key, dash in (("save_p99", ""), ("save_p50", ' stroke-dasharray="2 3"')):
            pts = " ".join(f"{x(r['level']):.1f},{y(r[key]):.1f}" for r in rows if r[key] == r[key])
            out.append(f'<polyline points="{pts}" fill="none" stroke="{COLOURS[stack]}" stroke-width="2"{dash}/>')
        for r in rows:
            out.append(f'<circle cx="{x(r["level"]):.1f}" cy="{y(r["save_p99"]):.1f}" r="3" fill="{COLOURS[stack]}"/>')
        ly = top + 20 + 36 * i
        out.append(
            f'<line x1="{w - right + 10}" x2="{w - right + 34}" y1="{ly}" y2="{ly}" stroke="{COLOURS[stack]}" '
            'stroke-width="2"/>'
        )
        out.append(f'<text x="{w - right + 40}" y="{ly + 4}">{stack} p99</text>')
        out.append(f'<text x="{w - right + 40}" y="{ly + 18}" fill="#777">(dotted: p50)</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def markdown(data: dict[str, Any]) -> str:
    results = data["results"]
    stacks = [s for s in COLOURS if any(r["stack"] == s for r in results)]
    lines = [
        f"Levels {', '.join(map(str, data['levels']))} concurrent runs; per point {data['warmup']:g} s warm-up, "
        f"{data['window']:g} s measured; runs of {data['nodes']} nodes (1-2 s each), lease {data['lease']:g} s "
        f"renewed every {data['lease'] / 3:g} s, pools of {data['pool']} connections.",
        "",
        "| stack | runs | held | steps/s | save p50 ms | save p99 ms | claim p50 ms | claim p99 ms "
        "| server CPU ms/step | WAL B/step | FPI/step | growth KB/run | HOT share (jobs) | errors "
        "| driver CPU ms/step | loop lag p99 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in sorted(results, key=lambda r: (r["level"], stacks.index(r["stack"]))):
        lines.append(
            f"| {r['stack']} | {r['level']} | {r['running']:.0f} | {r['steps_per_s']:.1f} | {r['save_p50']:.1f} "
            f"| {r['save_p99']:.1f} | {r['claim_p50']:.1f} | {r['claim_p99']:.1f} | {r['cpu_ms_per_step']:.2f} "
            f"| {r['wal_per_step']:.0f} | {r['fpi_per_step']:.2f} | {r['growth_per_run'] / 1024:.0f} "
            f"| {r['hot_share']:.2f} | {r['errors']} | {r['driver_ms_per_step']:.2f} | {r['lag_p99']:.1f} |"
        )
    caps = {s: capacity([r for r in results if r["stack"] == s]) for s in stacks}
    lines += [
        "",
        "| stack | capacity (largest level, p99 save < 50 ms, no errors) | median WAL B/step | "
        "median server CPU ms/step |",
        "|---|---:|---:|---:|",
    ]
    for s in stacks:
        rows = [r for r in results if r["stack"] == s]
        lines.append(
            f"| {s} | {caps[s]} | {statistics.median(r['wal_per_step'] for r in rows):.0f} | "
            f"{statistics.median(r['cpu_ms_per_step'] for r in rows):.2f} |"
        )
    if "stock" in stacks:
        base = {r["level"]: r for r in results if r["stack"] == "stock"}
        lines += [
            "",
            "Ratios against the stock stack at each level (same run):",
            "",
            "| stack | level | p99 save | WAL/step | CPU/step |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in sorted(results, key=lambda r: (r["stack"], r["level"])):
            b = base.get(r["level"])
            if r["stack"] == "stock" or b is None:
                continue
            lines.append(
                f"| {r['stack']} | {r['level']} | {r['save_p99'] / b['save_p99']:.2f} | "
                f"{r['wal_per_step'] / b['wal_per_step']:.2f} | {r['cpu_ms_per_step'] / b['cpu_ms_per_step']:.2f} |"
            )
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
            lines.append(f"- {r['stack']}: " + ", ".join(f"{name} {nbytes:.0f}" for name, nbytes in top))
    return "\n".join(lines) + "\n"


def main() -> None:
    data = json.loads(Path(sys.argv[1]).read_text())
    Path(sys.argv[2]).write_text(svg(data))
    text = markdown(data)
    Path(sys.argv[3]).write_text(text)
    print()
    print(text)


if __name__ == "__main__":
    main()
