"""The one SQL-call descriptor: a statement and how to turn each of its rows into a Python value.

A client method is one round trip: ``Client._rows(call, params)`` runs ``call.sql`` and maps each
row (a dict) through ``call.convert``. Every module of the client (sessions, messages,
checkpoints, evals, retention, the queue, side effects, human approvals, streams, usage,
retrievals) declares its calls with it; ``Call[T]`` says what one row becomes, so the methods
built on it are typed end to end. ``_json`` makes a JSON parameter of any of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from psycopg.types.json import Jsonb

T_co = TypeVar("T_co", covariant=True)

#: A row as the client reads it (psycopg's dict_row).
Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Call(Generic[T_co]):
    """One SQL function call and how to turn its rows into Python values."""

    sql: str
    convert: Callable[[Row], T_co]


#: What one row of a call becomes (for the ``_rows(call: Call[T], ...) -> list[T]`` signatures).
T = TypeVar("T")


def _json(value: Any) -> Jsonb | None:
    """A JSON parameter; Python None is SQL NULL (which the functions refuse where a value is required)."""
    return None if value is None else Jsonb(value)
