"""The one SQL-call descriptor: a statement and how to turn each of its rows into a Python value.

A client method is one round trip: ``Client._rows(call, params)`` runs ``call.sql`` and maps each
row (a dict) through ``call.convert``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Call:
    """One SQL function call and how to turn its rows into Python values."""

    sql: str
    convert: Callable[[dict[str, Any]], Any]
