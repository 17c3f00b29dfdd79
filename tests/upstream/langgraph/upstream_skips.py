"""What of LangGraph's suites does not run against agent-state, and why (README.md lists the same).

Keys are fnmatch patterns on the test's node id (relative to the suite's rootdir, parameters
included); the first matching entry wins. ``skip``: the test exercises something that is not the
saver API (a PostgresSaver internal) or a capability documented as different. ``xfail``: a defect
of ours not fixed yet, strict so that the fix is noticed.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

import pytest

SKIP = "skip"
XFAIL = "xfail"

_H6_DELTA_CONFORMANCE = (
    "the conformance suite's delta_channel_history capability is not in "
    "langgraph-checkpoint-conformance 0.0.2, the release on PyPI"
)
_PRUNE_HOOKS = (
    "PostgresSaver internal: hooks its private _cursor to save a checkpoint between the statements "
    "of its multi-statement prune (PRUNE_*_SQL) and opens a second saver from its connection; "
    "ours prunes in one SQL function call, one transaction (pgTAP: tests/pgtap/prune_checkpoints/)"
)

_STREAM_TIMING = (
    "timing: asserts when each streamed chunk arrives, in windows of 0.1 s (FloatBetween) around "
    "sleeps of 0.2 s, saver round trips included; on the loaded 2-core machine a chunk came at "
    "0.4 s for 0.2-0.3 (test_stream_subgraphs_during_execution, a fresh-clone run of 2026-12-02; "
    "test_stream_buffering_single_node likewise under load), the chunks and their order as expected"
)

# suite -> [(pattern, kind, reason)]; "[[]" matches a literal "[" (the start of the parameters).
SKIPS: dict[str, list[tuple[str, str, str]]] = {
    "graph": [
        (
            "tests/test_pregel_async.py::test_imp_nested[[]*",
            SKIP,
            "timing: expects the task that sleeps 0 ms to finish, saver round trips included, before "
            "the one that sleeps 10 ms starts streaming; on a loaded 2-core machine a round trip "
            "takes longer (failed 1 run in 3 here)",
        ),
        (
            "tests/test_pregel.py::test_stream_subgraphs_during_execution[[]*",
            SKIP,
            _STREAM_TIMING,
        ),
        (
            "tests/test_pregel.py::test_stream_buffering_single_node[[]*",
            SKIP,
            _STREAM_TIMING,
        ),
        (
            "tests/test_pregel_async.py::test_stream_subgraphs_during_execution[[]*",
            SKIP,
            _STREAM_TIMING,
        ),
        (
            "tests/test_pregel_async.py::test_stream_buffering_single_node[[]*",
            SKIP,
            _STREAM_TIMING,
        ),
    ],
    "store": [
        (
            "tests/test_store.py::test_nonnull_migrations",
            SKIP,
            "PostgresStore.MIGRATIONS, its own migrations (ours: sqitch changes memory and memory_functions)",
        ),
        (
            "tests/test_store.py::test_escape_like_literal",
            SKIP,
            "PostgresStore internal: its LIKE escaping of dot-joined prefixes (ours compares label arrays)",
        ),
        (
            "tests/test_store.py::test_namespace_match_pattern",
            SKIP,
            "PostgresStore internal: the regular expression it matches dot-joined namespaces with",
        ),
        (
            "tests/test_async_store.py::test_abatch_uses_single_pool_checkout",
            SKIP,
            "patches langgraph.checkpoint.postgres._ainternal.get_connection, PostgresStore's pool helper "
            "(ours: one ai.batch_memory call per batch, one checkout)",
        ),
        (
            "tests/test_*store.py::test_omit_expired_disabled_preserves_expired_rows*",
            SKIP,
            "documented as different: an expired item is never returned, whatever ttl_config's "
            "omit_expired says (PostgresStore returns it until a sweep unless omit_expired is set)",
        ),
    ],
    "saver": [
        ("*[[]*shallow*", SKIP, "ShallowPostgresSaver, another saver (keeps only the latest checkpoint)"),
        ("tests/test_sync.py::test_nonnull_migrations*", SKIP, "PostgresSaver.MIGRATIONS, its own migrations"),
        (
            "tests/test_*.py::test_get_checkpoint_no_channel_values*",
            SKIP,
            "patches PostgresSaver._load_checkpoint_tuple, an internal",
        ),
        (
            "tests/test_prune.py::test_keep_latest_keeps_the_parent_holding_a_pre_v4_heads_sends*",
            XFAIL,
            "our defect, not fixed yet: keep_latest deletes the parent checkpoint whose writes hold the "
            "pending sends of a pre-v4 head, which reading the head converts; "
            "PostgresSaver keeps that parent",
        ),
        ("tests/test_prune.py::test_keep_latest_keeps_a_checkpoint_saved_while_it_runs*", SKIP, _PRUNE_HOOKS),
        (
            "tests/test_prune.py::test_keep_latest_keeps_a_checkpoint_saved_meanwhile_whatever_its_id*",
            SKIP,
            _PRUNE_HOOKS,
        ),
        (
            "tests/test_prune.py::test_keep_latest_refuses_a_thread_that_turns_delta_after_the_batch_check*",
            SKIP,
            _PRUNE_HOOKS,
        ),
        (
            "tests/test_prune.py::test_keep_latest_keeps_the_history_of_a_delta_checkpoint_saved_after_the_thread_check*",
            SKIP,
            _PRUNE_HOOKS,
        ),
        (
            "tests/test_prune.py::test_keep_latest_refuses_a_batch_with_a_delta_channel_thread*",
            SKIP,
            "documented as different: PostgresSaver 3.2.0 refuses keep_latest for a DeltaChannel thread "
            "(NotImplementedError); agent-state prunes it and keeps the ancestors the channel is rebuilt "
            "from (tests/pgtap/prune_checkpoints/)",
        ),
        (
            "tests/test_prune.py::test_keep_latest_deletes_a_subgraph_call_with_the_checkpoint_it_started_from*",
            XFAIL,
            "our defect, not fixed yet: keep_latest keeps the newest checkpoint of every namespace, also of "
            "a subgraph call (namespace 'node:task') started from a root checkpoint it deletes; "
            "PostgresSaver 3.2.0 deletes such a call",
        ),
        (
            "tests/test_delta_pagination.py::test_*_walk_reads_nothing_newer_than_the_target*",
            SKIP,
            "spies on BasePostgresSaver._ingest_stage1_page, the page reader of PostgresSaver's own walk",
        ),
        ("tests/test_conformance_delta.py::*", XFAIL, _H6_DELTA_CONFORMANCE),
    ],
}


def apply_skips(items: list[pytest.Item], *, suite: str) -> None:
    entries = SKIPS[suite]
    for item in items:
        for pattern, kind, reason in entries:
            if fnmatchcase(item.nodeid, pattern):
                if kind == SKIP:
                    item.add_marker(pytest.mark.skip(reason=reason))
                else:
                    item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
                break
