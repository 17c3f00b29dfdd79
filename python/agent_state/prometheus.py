"""The database's figures in Prometheus' text format: ``agent-state metrics`` (docs/observability.md).

:class:`DatabaseCollector` is a ``prometheus_client`` collector that calls ``ai.metrics()`` once per
scrape and yields each metric it returns as a gauge (the figures are of the hot table, which
``ai.archive_jobs`` empties of finished jobs: they can go down, so none is a counter). Needs the
``metrics`` extra: ``pip install 'agent-state[metrics]'``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector, CollectorRegistry

__all__ = ["HELP", "DatabaseCollector", "registry"]

# What each metric of ai.metrics() means (the HELP line of a scrape); docs/observability.md.
HELP: dict[str, str] = {
    "agent_state_jobs": "Jobs of the hot table per queue and state (FAILED: dead letters; COMPLETED is not counted).",
    "agent_state_jobs_due": "PENDING jobs due now, per queue.",
    "agent_state_oldest_due_job_age_seconds": "How long the oldest due PENDING job of a queue has waited (0: none).",
    "agent_state_leases_expired": "IN_PROGRESS jobs whose lease ran out and that no claim has taken over yet.",
    "agent_state_attempts_expired": "Attempts whose lease expired (each taken over by a later claim or a reap).",
    "agent_state_attempts_failed": "Attempts that failed (each retried, or the last one of a dead job).",
    "agent_state_dead_jobs": "FAILED jobs: attempts spent (dead letters), per queue.",
    "agent_state_attempts_deadline_exceeded": "Attempts whose lease ran out at their deadline (timeout, deadline).",
    "agent_state_side_effect_takeovers": "Takeovers of side-effect reservations whose holder died.",
    "agent_state_side_effects_taken_over": "Side effects whose reservation was taken over at least once.",
    "agent_state_checkpoint_bytes_per_step": "Mean bytes a checkpoint stores (state, channel values), from statistics.",
}

Connect = Callable[[], psycopg.Connection[Any]]


class DatabaseCollector(Collector):
    """Calls ``ai.metrics()`` on each collect; reconnects (through ``connect``) after a lost
    connection. A failed call raises, so the scrape fails and Prometheus marks the target down."""

    def __init__(self, connect: Connect, conn: psycopg.Connection[Any] | None = None) -> None:
        self._connect = connect
        self._conn = conn

    def _rows(self) -> list[tuple[str, dict[str, str], float | None]]:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = self._connect()
        try:
            cur = self._conn.execute("select metric, labels, value from ai.metrics()")
            return [(m, {k: str(v) for k, v in (labels or {}).items()}, value) for m, labels, value in cur]
        except psycopg.OperationalError:
            self._conn.close()
            self._conn = None
            raise

    def collect(self) -> Iterator[GaugeMetricFamily]:
        families: dict[str, GaugeMetricFamily] = {}
        label_names: dict[str, list[str]] = {}
        for name, labels, value in self._rows():
            if value is None:
                continue
            family = families.get(name)
            if family is None:
                label_names[name] = sorted(labels)
                family = families[name] = GaugeMetricFamily(
                    name, HELP.get(name, name.replace("_", " ")), labels=label_names[name]
                )
            family.add_metric([labels.get(k, "") for k in label_names[name]], float(value))
        yield from families.values()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def registry(collector: DatabaseCollector) -> CollectorRegistry:
    """A registry of its own holding only ``collector`` (no process or platform metrics)."""
    reg = CollectorRegistry(auto_describe=False)
    reg.register(collector)
    return reg
