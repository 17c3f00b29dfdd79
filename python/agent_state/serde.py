"""``CompressedSerializer``: LangGraph's serializer with large values compressed in the client.

Postgres compresses a value only when its row passes ~2 KB, and then with LZ4 or pglz, which pack
an agent conversation some 2.7x. zlib at level 1 packs the same text some 3.5x: on a long thread
of plain ``messages`` (a new copy of the whole list per step) that is a fifth fewer bytes than
``PostgresSaver`` stores, for a little client CPU per large value (docs/benchmarks.md,
bench/checkpoint_growth.sh). Opt in per saver::

    AgentStateSaver(pool, serde=CompressedSerializer())

A value of ``min_bytes`` or more serialized bytes is stored zlib-compressed, its type suffixed
``+zlib``; smaller values (and values zlib does not shrink) are stored as LangGraph's serializer
made them. Reading accepts both, so a thread may mix them and the option can be turned off again.
It is LangGraph's ``JsonPlusSerializer`` (its msgpack allowlist included), not a wrapper.
"""

from __future__ import annotations

import zlib
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

__all__ = ["CompressedSerializer"]

SUFFIX = "+zlib"


class CompressedSerializer(JsonPlusSerializer):
    """``JsonPlusSerializer`` whose values of ``min_bytes`` or more are stored zlib-compressed."""

    def __init__(self, *args: Any, min_bytes: int = 2048, level: int = 1, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if min_bytes < 1 or not 0 <= level <= 9:
            raise ValueError("min_bytes must be positive and level 0..9")
        self.min_bytes = min_bytes
        self.level = level

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        type_, data = super().dumps_typed(obj)
        if len(data) >= self.min_bytes:
            packed = zlib.compress(data, self.level)
            if len(packed) < len(data):
                return type_ + SUFFIX, packed
        return type_, data

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        type_, blob = data
        if type_.endswith(SUFFIX):
            return super().loads_typed((type_.removesuffix(SUFFIX), zlib.decompress(blob)))
        return super().loads_typed(data)
