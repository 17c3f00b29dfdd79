"""Compaction driven by a summarize callable: compact a thread when its context window is due.

The database decides *whether* and *what* (``ai.context_window``); the caller's model writes the
summary; ``ai.record_compaction`` stores it next to the originals. A crash between the two
costs only a repeated summarization: the record is idempotent per range.
"""

from __future__ import annotations

from collections.abc import Callable

from .client import Client
from .models import ContextWindow, Message, WindowMessage

#: summarize(previous_summary, messages_to_fold_in) -> (summary text, its token count or None)
Summarize = Callable[[WindowMessage | None, list[Message]], tuple[str, int | None]]


def compact_if_due(
    client: Client,
    thread_id: str,
    window_tokens: int,
    summarize: Summarize,
    keep_last: int = 20,
    threshold: float = 0.7,
) -> ContextWindow:
    """Returns the context window to send now, compacting first when it is due."""
    window = client.context_window(thread_id, window_tokens, keep_last, threshold)
    if not window.compaction_due or window.compact_through_seq is None or window.compact_from_seq is None:
        return window
    previous = next((m for m in window.messages if m.is_summary), None)
    covered = [
        m
        for m in _messages_between(client, thread_id, window.compact_from_seq, window.compact_through_seq)
        if not (m.role == "system" and isinstance(m.content, dict) and "compaction" in m.content)
    ]
    text, tokens = summarize(previous, covered)
    client.record_compaction(thread_id, text, window.compact_through_seq, tokens)
    return client.context_window(thread_id, window_tokens, keep_last, threshold)


def _messages_between(client: Client, thread_id: str, first: int, last: int) -> list[Message]:
    found: list[Message] = []
    after = first - 1
    while after < last:
        page = client.get_messages(thread_id, after_seq=after, max_rows=min(10000, last - after))
        if not page:
            break
        found += [m for m in page if m.seq <= last]
        after = page[-1].seq
    return found
