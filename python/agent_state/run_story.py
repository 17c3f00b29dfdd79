"""A run's story as an operator reads it (issue 32): each attempt of a job as one line, shared by
the console's run page and ``agent-state show`` so the two tell it alike. Rows are the dicts of
``ai.job_attempts``; nothing here reads the database."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any


def when(value: datetime | None) -> str:
    """A time as both print it: UTC, to the second, with its zone."""
    return "-" if value is None else value.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def attempt_story(job: dict[str, Any], attempts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each attempt of a job as a row of the run's story: who claimed it when, how it ended (and,
    for a lease that ran out, who took the job over, whose writes the fence refuses from then on).
    ``counted``: whether the attempt counts against max_attempts (a pause for a person, a release
    and a snooze give it back: ``ai.request_human``, ``ai.release_job``, ``ai.snooze_job``), so
    "attempt n of max" and the job's "Attempts n/max" say the same thing."""
    story: list[dict[str, Any]] = []
    for i, a in enumerate(attempts):
        after = attempts[i + 1] if i + 1 < len(attempts) else None
        outcome = a["outcome"] or ""
        if outcome in ("expired", "deadline_exceeded"):
            text = (
                f"lease expired at {when(a['lease_expires_at'])}"
                if outcome == "expired"
                else f"deadline exceeded at {when(a['lease_expires_at'])} (its run timeout or the job's deadline)"
            )
            if after is not None:
                text += (
                    f"; taken over by {after['worker']} (fencing token {after['fencing_token']}): the fence refuses "
                    f"{a['worker']}'s writes with token {a['fencing_token']} from then on"
                )
        elif outcome == "failed":
            text = "failed"
        elif outcome == "completed":
            text = "completed"
        elif outcome == "awaiting_human":
            text = "paused: waiting for a person (the attempt is given back)"
        elif outcome == "released":
            text = "released by an operator (the attempt is given back)"
        elif outcome == "snoozed":
            text = "snoozed: given back until later (the attempt is given back)"
        elif outcome == "cancelled":
            text = "cancelled"
        elif outcome == "in_progress":
            text = f"running, lease until {when(a['lease_expires_at'])}"
        else:
            text = outcome
        story.append(
            {
                **a,
                "claim": i + 1,
                "text": text,
                "counted": outcome not in ("awaiting_human", "released", "snoozed"),
                "max_attempts": job["max_attempts"],
            }
        )
    return story
