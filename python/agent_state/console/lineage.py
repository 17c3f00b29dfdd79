"""The checkpoint lineage as a picture (issue 32, item 3) and the state diff of a checkpoint.

:func:`lineage_svg` draws a thread's checkpoints server-side as SVG (no script, no CDN): one row
per checkpoint, oldest at the top (steps go down), a branch in a lane of its own where a
checkpoint has more than one child (a fork, an update, a resume from an older checkpoint), the
head (the session's current checkpoint) ringed, each checkpoint named by its node and linked to
its page. :func:`state_diff` compares a checkpoint's channel values with its parent's, channel by
channel. Both are pure: the page reads the rows (``ai.checkpoint_tree``, ``ai.checkpoint_nodes``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

ROW, LANE, PAD, DOT = 26, 22, 14, 6
COLOURS = ("#1f4aa8", "#b34700", "#176b2c", "#6c1f8a", "#9b1c16", "#7a5a00")


def node_name(row: Mapping[str, Any], nodes: Mapping[str, Any] | None = None) -> str:
    """What wrote a checkpoint: the nodes whose step made it (``ai.checkpoint_nodes``), else
    LangGraph's metadata (``writes``' keys in LangGraph before 1.0, then ``source``: ``input``
    for the graph's input, ``update`` for ``update_state``, ``fork`` for a copy)."""
    metadata = row.get("metadata") or {}
    source = metadata.get("source")
    if source in ("input", "update", "fork"):  # not a node's step: the tasks off its parent are a sibling's
        return {"input": "input", "update": "update_state", "fork": "fork"}[str(source)]
    found = (nodes or {}).get(row["checkpoint_id"])
    if found and found.get("nodes"):
        return ", ".join(str(n) for n in found["nodes"])
    writes = metadata.get("writes")
    if isinstance(writes, Mapping) and writes:
        return ", ".join(str(k) for k in writes)
    return str(source or "?")


@dataclass
class Placed:
    row: dict[str, Any]
    lane: int
    y: int


def layout(rows: list[dict[str, Any]]) -> list[Placed]:
    """Rows oldest first (by checkpoint id, which LangGraph makes time-ordered); a checkpoint's
    first child stays in its parent's lane, each further child opens a lane of its own."""
    ordered = sorted(rows, key=lambda r: r["checkpoint_id"])
    known = {r["checkpoint_id"] for r in ordered}
    children: dict[str, list[str]] = {}
    for r in ordered:
        if r["parent_checkpoint_id"] in known:
            children.setdefault(r["parent_checkpoint_id"], []).append(r["checkpoint_id"])
    lanes: dict[str, int] = {}
    next_lane = 0
    for r in ordered:
        cid = r["checkpoint_id"]
        if cid not in lanes:  # a root (or a parent not shown): a lane of its own
            lanes[cid] = next_lane
            next_lane += 1
        for i, child in enumerate(children.get(cid, [])):
            if i == 0:
                lanes[child] = lanes[cid]
            else:
                lanes[child] = next_lane
                next_lane += 1
    return [Placed(r, lanes[r["checkpoint_id"]], i) for i, r in enumerate(ordered)]


def lineage_svg(rows: list[dict[str, Any]], nodes: Mapping[str, Any], link: str) -> Markup:
    """The picture: ``link`` is the checkpoint pages' URL prefix (the id is appended, quoted)."""
    placed = layout(rows)
    if not placed:
        return Markup("")
    where = {p.row["checkpoint_id"]: p for p in placed}
    lanes = max(p.lane for p in placed) + 1
    text_x = PAD + lanes * LANE + 8
    width, height = text_x + 560, PAD * 2 + len(placed) * ROW

    def x(p: Placed) -> float:
        return PAD + p.lane * LANE + LANE / 2

    def y(p: Placed) -> float:
        return PAD + p.y * ROW + ROW / 2

    parts = [
        Markup('<svg class="lineage" role="img" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" '
               'viewBox="0 0 {} {}">').format(width, height, width, height),
        Markup("<title>checkpoint lineage: steps go down, a branch per lane, the head ringed</title>"),
    ]  # fmt: skip
    for p in placed:  # the edges first, under the dots
        parent = where.get(p.row["parent_checkpoint_id"] or "")
        if parent is None:
            continue
        colour = COLOURS[p.lane % len(COLOURS)]
        x0, y0, x1, y1 = x(parent), y(parent), x(p), y(p)
        if x0 == x1:
            d = f"M{x0:.1f},{y0:.1f} L{x1:.1f},{y1:.1f}"
        else:  # a branch: out of the parent sideways, then down its own lane
            bend = y0 + ROW / 2
            low = y0 + ROW
            d = f"M{x0:.1f},{y0:.1f} C{x0:.1f},{bend:.1f} {x1:.1f},{bend:.1f} {x1:.1f},{low:.1f} L{x1:.1f},{y1:.1f}"
        parts.append(Markup('<path class="edge" d="{}" fill="none" stroke="{}" stroke-width="2"/>').format(d, colour))
    for p in placed:
        row = p.row
        cid = str(row["checkpoint_id"])
        colour = COLOURS[p.lane % len(COLOURS)]
        name = node_name(row, nodes)
        step = (row.get("metadata") or {}).get("step")
        paused = bool((nodes.get(cid) or {}).get("interrupted"))
        head = bool(row.get("is_current"))
        label = Markup("{}{}{} · {}").format(
            name, Markup(" · step {}").format(step) if step is not None else "",
            Markup(" · paused for a person") if paused else "", cid[:13] + ("…" if len(cid) > 13 else ""),
        )  # fmt: skip
        parts.append(
            Markup('<a class="checkpoint{}" data-checkpoint="{}" href="{}{}"><title>{} ({})</title>').format(
                " head" if head else "", cid, link, quote(cid, safe=""), name, cid
            )
        )
        if head:
            parts.append(
                Markup('<circle cx="{:.1f}" cy="{:.1f}" r="{}" fill="none" stroke="#222" stroke-width="2"/>').format(
                    x(p), y(p), DOT + 4
                )
            )
        parts.append(
            Markup('<circle cx="{:.1f}" cy="{:.1f}" r="{}" fill="{}"/>').format(
                x(p), y(p), DOT, colour if not paused else "#6c1f8a"
            )
        )
        parts.append(
            Markup('<text x="{}" y="{:.1f}" font-size="12" dominant-baseline="middle">{}{}</text>').format(
                text_x, y(p), label, Markup(' <tspan font-weight="700">← head</tspan>') if head else ""
            )
        )
        parts.append(Markup("</a>"))
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)


@dataclass(frozen=True)
class ChannelChange:
    channel: str
    change: str  # added, changed, removed
    before: Any
    after: Any


def state_diff(parent: Mapping[str, Any] | None, state: Mapping[str, Any] | None) -> list[ChannelChange]:
    """The channels a checkpoint added, changed or removed against its parent, by channel name."""
    before, after = dict(parent or {}), dict(state or {})
    changes = []
    for channel in sorted(set(before) | set(after)):
        if channel not in before:
            changes.append(ChannelChange(channel, "added", None, after[channel]))
        elif channel not in after:
            changes.append(ChannelChange(channel, "removed", before[channel], None))
        elif before[channel] != after[channel]:
            changes.append(ChannelChange(channel, "changed", before[channel], after[channel]))
    return changes
