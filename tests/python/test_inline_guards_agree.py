"""One rule, one place (issue 14), for arguments: a rule written out more than once gives one answer.

Three kinds of repetition, each held to one answer on a grid of edge values (NULL, empty, boundary
lengths in characters and in multi-byte characters, each allowed value and some outside):

* Hot paths (claim_job, claim_jobs, put_checkpoint, put_writes, get_checkpoint,
  delta_channel_history, put_memory) test their arguments as plain expressions and call the shared guard
  only for a value that fails, so that the guard raises its error. The public call must raise
  exactly the guard's SQLSTATE and message when the guard raises, and no argument error
  (AS002/AS003) when the guard accepts the value.
* One rule written inline in two functions (a message role, durability, a prune strategy, a NULL
  turn): both raise the same SQLSTATE and message, or neither does.
* An argument guard and the row rule behind it (a queue name, an idempotency key, a thread id, a
  message role): the guard accepts exactly the values the row CHECK accepts.
* The job/token rule (issue 22): every write made for a job (put_checkpoint, put_writes, an append,
  the side-effect ledger, streams, usage, retrievals, request_human) answers a grid of (thread, job,
  token) as the one guard, ai._fence, does: neither, one without the other, the holder, a stale
  token, an unknown job, a job of another thread with its valid token.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from conftest import superuser_reads

Outcome = tuple[str, str] | None  # (SQLSTATE, message) of the error raised, or None

TEXT_255: tuple[Any, ...] = (None, "", " ", "a", "a" * 255, "a" * 256, "é" * 255, "é" * 256)
#: keys of the checkpoint tables: 1 to 255 bytes of UTF-8 (issue 37), so the edges in bytes too
KEY_255: tuple[Any, ...] = (*TEXT_255, "é" * 127 + "a", "é" * 128, "\U0001f600" * 63 + "abc", "\U0001f600" * 64)
NS_1024: tuple[Any, ...] = (
    None, "", "a", "a" * 1024, "a" * 1025, "é" * 1024, "é" * 1025, "é" * 512, "é" * 512 + "a", "\U0001f600" * 256,
)  # fmt: skip
TYPE_64: tuple[Any, ...] = (None, "", "a", "a" * 64, "a" * 65, "é" * 64, "é" * 65)
LEASES: tuple[Any, ...] = (
    None,
    "-1 second",
    "0",
    "1 day -86400 seconds",
    "1 microsecond",
    "1 minute",
    "-1 day 25 hours",
)
LIMITS_1000: tuple[Any, ...] = (None, -1, 0, 1, 999, 1000, 1001, 10000, 10001)
DOCUMENTS: tuple[Any, ...] = (None, "{}", '{"a": 1}', "[]", "null", '"s"', "1", json.dumps({"k": "a" * 1048576}))
NON_NULL_TEXT_255 = tuple(v for v in TEXT_255 if v is not None)
#: memory keys: 1 to 128 characters
KEY_128: tuple[Any, ...] = (None, "", "a", "a" * 128, "a" * 129, "é" * 128, "é" * 129, "a" * 1024)
#: memory namespaces: 1 to 20 labels of 1 to 255 characters without U+001F, none NULL, 192
#: characters in all with one separator between each two labels
NAMESPACES: tuple[Any, ...] = (
    None, [], ["a"], ["a", "b"], [""], ["a", None], ["a" * 255], ["a" * 256], ["é" * 255], ["é" * 256],
    ["b", "a" * 256], [str(i) for i in range(20)], [str(i) for i in range(21)], ["a\x1fb"],
    ["a" * 192], ["a" * 193], ["a" * 95, "b" * 96], ["a" * 96, "b" * 96], ["é" * 192], ["é" * 193],
)  # fmt: skip


def outcome(conn: psycopg.Connection[Any], statements: Sequence[str], value: Any) -> Outcome:
    """Runs the statements (the last one with the value as %(v)s) in a transaction rolled back."""
    try:
        with conn.transaction(force_rollback=True):
            for statement in statements:
                cursor = conn.execute(statement, {"v": value})
                if cursor.description is not None:
                    cursor.fetchall()
    except psycopg.Error as error:
        return (error.sqlstate or "", error.diag.message_primary or "")
    return None


def shown(value: Any) -> str:
    text = str(value)
    return repr(value) if value is None or len(text) < 20 else f"<{len(text)} characters {text[0]!r}...>"


@pytest.fixture
def as_role(role_dsn: Callable[[str], str]) -> Iterator[Callable[[str], psycopg.Connection[Any]]]:
    opened: dict[str, psycopg.Connection[Any]] = {}

    def connect(role: str) -> psycopg.Connection[Any]:
        if role not in opened:
            opened[role] = psycopg.connect(role_dsn(role), autocommit=True)
        return opened[role]

    yield connect
    for c in opened.values():
        c.close()


# ---------------------------------------------------------------------------------------------
# Hot paths: the inline expression and the shared guard


@dataclass(frozen=True)
class HotPath:
    name: str
    role: str
    call: str  # the public call; the argument under test is %(v)s
    guard: str  # the shared guard on the same value
    values: tuple[Any, ...]
    nullable: bool = False  # NULL is a valid value the guard is not called for


def _put_checkpoint(**over: str) -> str:
    args = {
        "thread_id": "'inline-t'",
        "checkpoint_ns": "''",
        "checkpoint_id": "'c1'",
        "parent_checkpoint_id": "null",
        "type": "'test'",
        "checkpoint": "'\\x01'::bytea",
        "metadata": "'{}'::jsonb",
        "channel_versions": "'{}'::jsonb",
        "blob_channels": "array['m']",
        "blob_versions": "array['1']",
        "blob_types": "array['t']",
        "blobs": "array['\\x01'::bytea]",
        "durability": "'sync'",
    } | over
    # the records of the call (ai.checkpoint_values, ai.step_commit), from the arguments by name
    values = ", ".join(args.pop(k) for k in ("blob_channels", "blob_versions", "blob_types", "blobs"))
    args["channel_values"] = f"row({values}, null)::ai.checkpoint_values"
    args["step_commit"] = f"row(null, null, {args.pop('durability')})::ai.step_commit"
    return "select ai.put_checkpoint(" + ", ".join(f"{k} => {v}" for k, v in args.items()) + ")"


def _put_writes(**over: str) -> str:
    args = {
        "thread_id": "'inline-t'",
        "checkpoint_ns": "''",
        "checkpoint_id": "'c1'",
        "task_id": "'task'",
        "idx": "array[0]",
        "channels": "array['m']",
        "types": "array['t']",
        "blobs": "array['\\x01'::bytea]",
        "task_path": "''",
    } | over
    return "select ai.put_writes(" + ", ".join(f"{k} => {v}" for k, v in args.items()) + ")"


#: the value under test, cast to the argument's type
T, IV, J, N = "%(v)s::text", "%(v)s::interval", "%(v)s::jsonb", "%(v)s::integer"

HOT_PATHS = [
    HotPath("claim_job worker_id", "app_service", f"select * from ai.claim_job({T}, '1 minute', 'inline-q')",
            f"select ai._check_claim({T}, '1 minute', 'inline-q')", TEXT_255),
    HotPath("claim_job lease", "app_service", f"select * from ai.claim_job('w', {IV}, 'inline-q')",
            f"select ai._check_claim('w', {IV}, 'inline-q')", LEASES),
    HotPath("claim_job queue", "app_service", f"select * from ai.claim_job('w', '1 minute', {T})",
            f"select ai._check_claim('w', '1 minute', {T})", TEXT_255),
    HotPath("claim_jobs worker_id", "app_service", f"select * from ai.claim_jobs({T}, '1 minute', 'inline-q', 10)",
            f"select ai._check_claim({T}, '1 minute', 'inline-q')", TEXT_255),
    HotPath("claim_jobs lease", "app_service", f"select * from ai.claim_jobs('w', {IV}, 'inline-q', 10)",
            f"select ai._check_claim('w', {IV}, 'inline-q')", LEASES),
    HotPath("claim_jobs queue", "app_service", f"select * from ai.claim_jobs('w', '1 minute', {T}, 10)",
            f"select ai._check_claim('w', '1 minute', {T})", TEXT_255),
    HotPath("claim_jobs max_jobs", "app_service", f"select * from ai.claim_jobs('w', '1 minute', 'inline-q', {N})",
            f"select ai._check_limit({N}, 'max_jobs', 1000)", LIMITS_1000),
    HotPath("put_checkpoint thread_id", "tenant_a", _put_checkpoint(thread_id=T),
            f"select ai._check_thread_id({T})", TEXT_255),
    HotPath("put_checkpoint checkpoint_ns", "tenant_a", _put_checkpoint(checkpoint_ns=T),
            f"select ai._check_checkpoint_ns({T})", NS_1024),
    HotPath("put_checkpoint checkpoint_id", "tenant_a", _put_checkpoint(checkpoint_id=T),
            f"select ai._check_key({T}, 'checkpoint_id')", KEY_255, nullable=True),
    HotPath("put_checkpoint parent_checkpoint_id", "tenant_a", _put_checkpoint(parent_checkpoint_id=T),
            f"select ai._check_key({T}, 'parent_checkpoint_id')", KEY_255, nullable=True),
    HotPath("put_checkpoint type", "tenant_a", _put_checkpoint(type=T),
            f"select ai._check_text({T}, 'type', 64)", TYPE_64),
    HotPath("put_checkpoint metadata", "tenant_a", _put_checkpoint(metadata=J),
            f"select ai._check_document({J}, 'metadata', must_be_object => true)", DOCUMENTS),
    HotPath("put_checkpoint channel_versions", "tenant_a", _put_checkpoint(channel_versions=J),
            f"select ai._check_document({J}, 'channel_versions', must_be_object => true)", DOCUMENTS),
    HotPath("put_checkpoint blob channel", "tenant_a", _put_checkpoint(blob_channels=f"array[{T}]"),
            f"select ai._check_blob_sizes('\\x01', array[{T}], array['1'], array['\\x01'::bytea])", NON_NULL_TEXT_255),
    HotPath("put_checkpoint blob version", "tenant_a", _put_checkpoint(blob_versions=f"array[{T}]"),
            f"select ai._check_blob_sizes('\\x01', array['m'], array[{T}], array['\\x01'::bytea])", NON_NULL_TEXT_255),
    HotPath("put_writes thread_id", "tenant_a", _put_writes(thread_id=T),
            f"select ai._check_thread_id({T})", TEXT_255),
    HotPath("put_writes checkpoint_ns", "tenant_a", _put_writes(checkpoint_ns=T),
            f"select ai._check_checkpoint_ns({T})", NS_1024),
    HotPath("put_writes checkpoint_id", "tenant_a", _put_writes(checkpoint_id=T),
            f"select ai._check_key({T}, 'checkpoint_id')", KEY_255),
    HotPath("put_writes task_id", "tenant_a", _put_writes(task_id=T),
            f"select ai._check_key({T}, 'task_id')", KEY_255),
    HotPath("put_writes channel", "tenant_a", _put_writes(channels=f"array[{T}]"),
            f"select ai._check_blob_sizes(null, array[{T}], null, array['\\x01'::bytea])", NON_NULL_TEXT_255),
    HotPath("get_checkpoint thread_id", "tenant_a", f"select * from ai.get_checkpoint({T}, '')",
            f"select ai._check_thread_id({T})", TEXT_255),
    HotPath("get_checkpoint checkpoint_ns", "tenant_a", f"select * from ai.get_checkpoint('inline-t', {T})",
            f"select ai._check_checkpoint_ns({T})", NS_1024),
    HotPath("delta_channel_history thread_id", "tenant_a",
            f"select * from ai.delta_channel_history({T}, '', null, array['m'])",
            f"select ai._check_thread_id({T})", TEXT_255),
    HotPath("delta_channel_history checkpoint_ns", "tenant_a",
            f"select * from ai.delta_channel_history('inline-t', {T}, null, array['m'])",
            f"select ai._check_checkpoint_ns({T})", NS_1024),
    HotPath("put_memory namespace", "tenant_a", "select ai.put_memory(%(v)s::text[], 'k', '{}')",
            "select ai._check_memory_namespace(%(v)s::text[], 'namespace')", NAMESPACES),
    HotPath("put_memory key", "tenant_a", f"select ai.put_memory('{{a}}', {T}, '{{}}')",
            f"select ai._check_text({T}, 'key', 128)", KEY_128),
    HotPath("put_memory value", "tenant_a", f"select ai.put_memory('{{a}}', 'k', {J})",
            f"select ai._check_document({J}, 'value', must_be_object => true)", DOCUMENTS),
    HotPath("delta_channel_history checkpoint_id", "tenant_a",
            f"select * from ai.delta_channel_history('inline-t', '', {T}, array['m'])",
            f"select ai._check_key({T}, 'checkpoint_id')", KEY_255, nullable=True),
]  # fmt: skip


@pytest.mark.parametrize("case", HOT_PATHS, ids=lambda c: c.name)
def test_the_inline_guard_of_a_hot_path_answers_as_the_shared_guard(
    case: HotPath, conn: psycopg.Connection[Any], as_role: Callable[[str], psycopg.Connection[Any]]
) -> None:
    caller = as_role(case.role)
    wrong = []
    for value in case.values:
        guard = None if value is None and case.nullable else outcome(conn, [case.guard], value)
        public = outcome(caller, [case.call], value)
        if guard is not None and public != guard:
            wrong.append(f"{shown(value)}: the guard raises {guard}, the call {public}")
        if guard is None and public is not None and public[0] in ("AS002", "AS003"):
            wrong.append(f"{shown(value)}: the guard accepts it, the call raises {public}")
    assert any(outcome(conn, [case.guard], v) for v in case.values), "the grid has a value the guard refuses"
    assert not wrong, f"{case.name}:\n" + "\n".join(wrong)


# ---------------------------------------------------------------------------------------------
# One rule written in two functions


@dataclass(frozen=True)
class Twins:
    name: str
    setup: tuple[str, ...]
    calls: tuple[str, ...]  # each with the value as %(v)s
    values: tuple[Any, ...]


SESSION = ("select ai.create_session('inline-t')",)
ROLES = (None, "", "system", "user", "assistant", "tool_call", "tool_result", "robot", "User", " user")
TWINS = [
    Twins("message role", SESSION,
          (f"select ai.append_message_idempotent('inline-t', {T}, '\"x\"')",
           f"select ai.open_stream('inline-t', 's', {T})"),
          ROLES),
    Twins("durability", SESSION,
          (f"select ai.open_stream('inline-t', 's', durability => {T})",
           f"select ai.append_stream_chunks('inline-t', 's', 1, array['x'], durability => {T})"),
          (None, "", "sync", "async", "SYNC", "other")),
    # put_checkpoint's durability is a field of ai.step_commit, where NULL is 'sync' (a NULL record
    # is no fence and 'sync'): the same answer for every other value
    Twins("durability of a step", SESSION,
          (_put_checkpoint(durability=T), f"select ai.open_stream('inline-t', 's', durability => {T})"),
          ("", "sync", "async", "SYNC", "other")),
    Twins("prune strategy", SESSION,
          (f"select ai.prune_checkpoints(array['inline-t'], {T})", f"select ai.prune_idle_threads('1 day', {T})"),
          (None, "", "keep_latest", "delete", "KEEP_LATEST", "other")),
    Twins("turn", SESSION,
          ("select ai.record_retrieval('inline-t', %(v)s::integer, '[]')",
           "select ai.get_turn_context('inline-t', %(v)s::integer)"),
          (None, -1, 0, 1)),
]  # fmt: skip


@pytest.mark.parametrize("case", TWINS, ids=lambda c: c.name)
def test_a_rule_written_in_two_functions_raises_the_same_error(
    case: Twins, as_role: Callable[[str], psycopg.Connection[Any]]
) -> None:
    tenant = as_role("tenant_a")
    wrong, refused = [], 0
    for value in case.values:
        # the stream exists for append_stream_chunks (opened with a valid durability)
        setup = (
            [*case.setup, "select ai.open_stream('inline-t', 's')"]
            if "append_stream" in "".join(case.calls)
            else case.setup
        )
        answers = {call: outcome(tenant, [*setup, call], value) for call in case.calls}
        refused += any(answers.values())
        if len(set(answers.values())) != 1:
            wrong.append(f"{shown(value)}: " + "; ".join(f"{c.split('(')[0]}: {a}" for c, a in answers.items()))
    assert refused, "the grid has a value the rule refuses"
    assert not wrong, f"{case.name}:\n" + "\n".join(wrong)


# ---------------------------------------------------------------------------------------------
# An argument guard and the row rule behind it


@dataclass(frozen=True)
class GuardAndRow:
    name: str
    guard: str
    row: str
    values: tuple[Any, ...]


GUARDS_AND_ROWS = [
    GuardAndRow("queue name (enqueue_job, claims)", f"select ai._check_text({T}, 'queue')",
                f"select ai._check_job_row('PENDING', {T}, 0, 1, null, null, null)", TEXT_255),
    GuardAndRow("job idempotency key (enqueue_job)", f"select ai._check_text({T}, 'idempotency_key')",
                f"select ai._check_job_row('PENDING', 'q', 0, 1, {T}, null, null)", NON_NULL_TEXT_255),
    GuardAndRow("thread id (every call)", f"select ai._check_thread_id({T})",
                f"select ai._check_session_row({T}, 'active', '{{}}', null)", TEXT_255),
    GuardAndRow("message idempotency key (append_message_idempotent)",
                f"select ai._check_text({T}, 'idempotency_key', 255)",
                f"select ai._check_message_row(1, 'user', 0, {T})", NON_NULL_TEXT_255),
    GuardAndRow("message role (append_message_idempotent)",
                "select ai.append_message_idempotent('inline-t', %(v)s::text, '\"x\"')",
                f"select ai._check_message_row(1, {T}, 0, 'k')", ROLES),
]  # fmt: skip


@pytest.mark.parametrize("case", GUARDS_AND_ROWS, ids=lambda c: c.name)
def test_an_argument_guard_accepts_what_the_row_rule_accepts(case: GuardAndRow, conn: psycopg.Connection[Any]) -> None:
    wrong = []
    setup = ("set local role tenant_a", *SESSION) if "append_message" in case.guard else ()
    for value in case.values:
        guard = outcome(conn, [*setup, case.guard], value)
        row = outcome(conn, [case.row], value)
        if (guard is None) != (row is None):
            wrong.append(f"{shown(value)}: the guard says {guard}, the row rule {row}")
        if row is not None and row[0] != "23514":
            wrong.append(f"{shown(value)}: the row rule raises {row}, not a check violation")
    assert not wrong, f"{case.name}:\n" + "\n".join(wrong)


# ---------------------------------------------------------------------------------------------
# The job/token rule: every write made for a job answers as ai._fence (issue 22)

#: the job of thread guard-t claimed in the set-up, and its token (transaction-local settings)
JOB, TOKEN = "current_setting('guard.job')::bigint", "current_setting('guard.token')::bigint"


@dataclass(frozen=True)
class FenceCell:
    name: str
    thread: str  # the thread the call writes to
    job: str
    token: str


FENCE_CELLS = [
    FenceCell("neither", "guard-t", "null", "null"),
    FenceCell("a job without its token", "guard-t", JOB, "null"),
    FenceCell("a token without a job", "guard-t", "null", TOKEN),
    FenceCell("the holder", "guard-t", JOB, TOKEN),
    FenceCell("a stale token", "guard-t", JOB, f"{TOKEN} + 1"),
    FenceCell("an unknown job", "guard-t", "-1", TOKEN),
    FenceCell("a job of another thread with its valid token", "guard-u", JOB, TOKEN),
]


@dataclass(frozen=True)
class FencedCall:
    name: str
    call: str  # {thread}, {job}, {token}
    setup: tuple[str, ...] = ()
    attempt_token: bool = False  # without a job, a token is the attempt (the side-effect ledger)
    own_thread: bool = False  # no thread argument: the job's own thread (request_human)
    needs_token: bool = False  # neither job nor token is the call's own AS002 (a finish, a pause)


def _both(statement: str) -> tuple[str, ...]:
    return tuple(statement.format(thread=t) for t in ("'guard-t'", "'guard-u'"))


FENCED_CALLS = [
    FencedCall("put_checkpoint",
               "select ai.put_checkpoint({thread}, '', 'c1', null, 'test', '\\x01', "
               "step_commit => row({job}, {token}, 'sync')::ai.step_commit)"),
    FencedCall("put_writes",
               "select ai.put_writes({thread}, '', 'c1', 't', array[0], array['ch'], array['t'], "
               "array['\\x01']::bytea[], '', {job}, {token})"),
    FencedCall("append_message_idempotent",
               "select ai.append_message_idempotent({thread}, 'user', '\"x\"', "
               "job_id => {job}, fencing_token => {token})"),
    FencedCall("begin_side_effect", "select ai.begin_side_effect({thread}, 'k', '{{}}', {job}, {token})",
               attempt_token=True),
    FencedCall("finish_side_effect", "select ai.finish_side_effect({thread}, 'k', '{{}}', {job}, {token})",
               _both("select ai.begin_side_effect({thread}, 'k')"), attempt_token=True, needs_token=True),
    FencedCall("abandon_side_effect", "select ai.abandon_side_effect({thread}, 'k', {job}, {token})",
               _both("select ai.begin_side_effect({thread}, 'k')"), attempt_token=True, needs_token=True),
    FencedCall("open_stream", "select ai.open_stream({thread}, 's', job_id => {job}, fencing_token => {token})"),
    FencedCall("append_stream_chunks",
               "select ai.append_stream_chunks({thread}, 's', 1, array['x'], "
               "job_id => {job}, fencing_token => {token})",
               _both("select ai.open_stream({thread}, 's')")),
    FencedCall("finish_stream", "select ai.finish_stream({thread}, 's', {job}, {token})",
               _both("select ai.open_stream({thread}, 's')")),
    FencedCall("abandon_stream", "select ai.abandon_stream({thread}, 's', {job}, {token})",
               _both("select ai.open_stream({thread}, 's')")),
    FencedCall("record_usage", "select ai.record_usage({thread}, 'k', 'm', 1, 1, 0, '{{}}', {job}, {token})"),
    FencedCall("record_retrieval", "select ai.record_retrieval({thread}, 1, '[]', null, {job}, {token})"),
    FencedCall("request_human", "select ai.request_human({job}, {token}, 'c1')", own_thread=True,
               needs_token=True),
]  # fmt: skip

#: two threads of tenant_a, a job of guard-t claimed by a worker; the worker then acts as tenant_a
FENCE_SETUP = (
    "set local role app_service",
    "select ai.act_as('tenant_a')",
    "select ai.create_session('guard-t')",
    "select ai.create_session('guard-u')",
    "select set_config('guard.job', (ai.enqueue_job('guard-t', queue => 'guard-q')).job_id::text, true)",
    "select ai.act_as(null)",
    "select set_config('guard.token', (ai.claim_job('w', '1 minute', 'guard-q')).fencing_token::text, true)",
    "select ai.act_as('tenant_a')",
)


def fence_outcome(conn: psycopg.Connection[Any], statements: Sequence[str]) -> Outcome:
    """As outcome(), with the job ids of the messages left out (each transaction enqueues its own)."""
    answer = outcome(conn, statements, None)
    return None if answer is None else (answer[0], re.sub(r"-?\d+", "N", answer[1]))


@pytest.mark.parametrize("case", FENCED_CALLS, ids=lambda c: c.name)
def test_every_write_made_for_a_job_answers_the_job_token_rule_as_the_guard(
    case: FencedCall, conn: psycopg.Connection[Any]
) -> None:
    wrong = []
    as_superuser = superuser_reads(conn)
    for cell in FENCE_CELLS:
        if case.attempt_token and cell.job == "null" and cell.token != "null":
            continue  # the attempt begin_side_effect returned, the ledger's own check
        thread = "null" if case.own_thread else f"'{cell.thread}'"
        guard = fence_outcome(
            conn, [*FENCE_SETUP, *as_superuser, f"select ai._fence({thread}, {cell.job}, {cell.token})"]
        )
        call = case.call.format(thread=f"'{cell.thread}'", job=cell.job, token=cell.token)
        public = fence_outcome(conn, [*FENCE_SETUP, *case.setup, call])
        if case.needs_token and cell.name == "neither":
            if public is None or public[0] != "AS002":
                wrong.append(f"{cell.name}: the call needs a token, yet answers {public}")
            continue
        if guard is not None and public != guard:
            wrong.append(f"{cell.name}: the guard raises {guard}, the call {public}")
        if guard is None and public is not None and (public[0] == "AS006" or "fencing_token" in public[1]):
            wrong.append(f"{cell.name}: the guard accepts it, the call raises {public}")
    assert not wrong, f"{case.name}:\n" + "\n".join(wrong)


def test_the_guard_refuses_every_cell_but_neither_and_the_holder(conn: psycopg.Connection[Any]) -> None:
    """The grid is worth running: each wrong cell is one the guard refuses."""
    as_superuser = superuser_reads(conn)
    answers = {
        cell.name: fence_outcome(
            conn, [*FENCE_SETUP, *as_superuser, f"select ai._fence('{cell.thread}', {cell.job}, {cell.token})"]
        )
        for cell in FENCE_CELLS
    }
    assert {name for name, answer in answers.items() if answer is None} == {"neither", "the holder"}, answers
