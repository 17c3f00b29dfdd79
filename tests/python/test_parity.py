"""Sync and async twins are the same code (issue 22) with the same public surface (issue 14).

Each sync twin is generated from its async source by scripts/async_to_sync.py (CONTRIBUTING.md,
"Sync and async twins"): the tests below check that every generated block is what the script
makes of its source today (bodies, not only signatures), that each sync class and function of a
twin pair stands in a generated block, and what the conversion does.

The public surface: every public method of one
side exists on the other with the same signature (parameter names, kinds, defaults and
annotations, with ``Async``/``Sync`` spelled out of the type names), and the async side is
``async`` where the sync side does I/O: a coroutine for a function, an async generator for a
generator, an async context manager for a context manager. A method on one side only fails.

The one class with no twin is ``AgentStateSession`` (agent_state.openai_agents): the OpenAI
Agents SDK's Session protocol is async only.

Methods that do no I/O (``stop``, ``check``, ``side_effect`` which returns a ledger object for
both ``with`` and ``async with``) are the same kind on both sides; they are listed by name."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import agent_state
from agent_state import AsyncClient, AsyncJobContext, AsyncWorker, Client, JobContext, Worker
from agent_state.hitl import AsyncHumanInTheLoopMethods, HumanInTheLoopMethods
from agent_state.queue import AsyncQueueMethods, QueueMethods
from agent_state.retrievals import AsyncRetrievalMethods, RetrievalMethods
from agent_state.side_effects import AsyncSideEffectMethods, SideEffectMethods
from agent_state.streams import AsyncPersistedStream, AsyncStreamMethods, PersistedStream, StreamMethods
from agent_state.usage import AsyncUsageMethods, UsageMethods

# sync dunder -> its async twin
DUNDERS = {"__enter__": "__aenter__", "__exit__": "__aexit__", "__iter__": "__aiter__", "__init__": "__init__"}


def _kind(fn: Any) -> str:
    if isinstance(fn, property):
        return "property"
    if isinstance(fn, (classmethod, staticmethod)):
        fn = fn.__func__
    wrapped = getattr(fn, "__wrapped__", None)
    if wrapped is not None and inspect.isasyncgenfunction(wrapped):
        return "async context manager"
    if wrapped is not None and inspect.isgeneratorfunction(wrapped):
        return "context manager"
    if inspect.isasyncgenfunction(fn):
        return "async generator"
    if inspect.iscoroutinefunction(fn):
        return "coroutine"
    if inspect.isgeneratorfunction(fn):
        return "generator"
    return "function"


ASYNC_KIND = {
    "function": "coroutine",
    "generator": "async generator",
    "context manager": "async context manager",
    "property": "property",
}


def _normalized(annotation: Any) -> str:
    text = annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)
    text = re.sub(r"\b(Async|Sync)(?=[A-Z])", "", text)
    text = re.sub(r"\bAwaitable\[(.*)\]", r"\1", text)
    return text


def _signature(fn: Any) -> list[tuple[str, Any, str, str]] | str:
    if isinstance(fn, property):
        return "property"
    if isinstance(fn, (classmethod, staticmethod)):
        fn = fn.__func__
    target = getattr(fn, "__wrapped__", fn)
    sig = inspect.signature(target)
    params = [
        (p.name, p.kind, repr(p.default), _normalized(p.annotation))
        for p in sig.parameters.values()
        if p.name not in ("self", "cls")
    ]
    return [*params, ("->", None, "", _normalized(sig.return_annotation))]


def _public(cls: type) -> dict[str, Any]:
    """The public methods of cls (its own and inherited), by the name of their sync twin."""
    found: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        if klass is object:
            continue
        for name, value in vars(klass).items():
            if not (callable(value) or isinstance(value, (property, classmethod, staticmethod))):
                continue
            sync_name = next((s for s, a in DUNDERS.items() if name in (s, a)), name)
            if name.startswith("_") and sync_name not in DUNDERS:
                continue
            found[sync_name] = value
    return found


def _twins() -> list[tuple[Any, Any, frozenset[str]]]:
    """(sync, async, names that are the same kind on both sides)."""
    pairs: list[tuple[Any, Any, frozenset[str]]] = [
        (Client, AsyncClient, frozenset()),
        # the halves Client and AsyncClient are made of, one module each
        (QueueMethods, AsyncQueueMethods, frozenset()),
        (SideEffectMethods, AsyncSideEffectMethods, frozenset()),
        (HumanInTheLoopMethods, AsyncHumanInTheLoopMethods, frozenset()),
        (UsageMethods, AsyncUsageMethods, frozenset()),
        (RetrievalMethods, AsyncRetrievalMethods, frozenset()),
        (StreamMethods, AsyncStreamMethods, frozenset()),
        (
            JobContext,
            AsyncJobContext,
            frozenset({"check", "side_effect", "lease_lost", "cancelled", "deadline", "time_left", "past_deadline"}),
        ),
        (Worker, AsyncWorker, frozenset({"stop"})),
        (PersistedStream, AsyncPersistedStream, frozenset()),
    ]
    try:
        from agent_state.graph_runs import AsyncGraphRuns, AsyncGraphWorker, GraphRuns, GraphWorker
        from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver
    except ImportError:  # pragma: no cover - the langgraph extra is installed by make venv
        return pairs
    saver_same = frozenset(_public(AgentStateSaver)) - {"setup", "from_conn_string", "__init__"}
    pairs += [
        (GraphRuns, AsyncGraphRuns, frozenset({"result"})),
        (GraphWorker, AsyncGraphWorker, frozenset({"stop"})),
        # LangGraph's savers carry both families (get_tuple and aget_tuple) on either class
        (AgentStateSaver, AsyncAgentStateSaver, saver_same),
    ]
    return pairs


FUNCTION_TWINS: list[tuple[str, str]] = [
    ("persisted_stream", "apersisted_stream"),
    ("follow_stream", "afollow_stream"),
]


def _ids(pair: tuple[Any, Any, frozenset[str]]) -> str:
    return f"{pair[0].__name__}/{pair[1].__name__}"


@pytest.mark.parametrize("pair", _twins(), ids=_ids)
def test_twins_have_the_same_methods_with_the_same_signatures(pair: tuple[Any, Any, frozenset[str]]) -> None:
    sync_cls, async_cls, same_kind = pair
    sync_methods, async_methods = _public(sync_cls), _public(async_cls)
    assert sorted(set(sync_methods) - set(async_methods)) == [], f"only on {sync_cls.__name__}"
    assert sorted(set(async_methods) - set(sync_methods)) == [], f"only on {async_cls.__name__}"
    problems = []
    for name, sync_fn in sorted(sync_methods.items()):
        async_fn = async_methods[name]
        if name != "__init__":
            expected = _kind(sync_fn) if name in same_kind else ASYNC_KIND.get(_kind(sync_fn))
            if _kind(async_fn) != expected:
                problems.append(f"{name}: {_kind(sync_fn)} / {_kind(async_fn)}, expected {expected} on the async side")
        if _signature(sync_fn) != _signature(async_fn):
            problems.append(f"{name}: {_signature(sync_fn)} != {_signature(async_fn)}")
    assert problems == []


@pytest.mark.parametrize(("sync_name", "async_name"), FUNCTION_TWINS)
def test_function_twins_have_the_same_signatures(sync_name: str, async_name: str) -> None:
    sync_fn: Callable[..., Any] = getattr(agent_state, sync_name)
    async_fn: Callable[..., Any] = getattr(agent_state, async_name)
    assert _signature(sync_fn) == _signature(async_fn)


@pytest.mark.parametrize(
    ("sync_name", "async_name"), [("graph_worker", "async_graph_worker"), ("graph_handler", "async_graph_handler")]
)
def test_graph_run_factories_take_the_same_arguments(sync_name: str, async_name: str) -> None:
    graph_runs = pytest.importorskip("agent_state.graph_runs")
    assert _signature(getattr(graph_runs, sync_name)) == _signature(getattr(graph_runs, async_name))


def test_the_parity_check_sees_a_missing_twin_and_a_sync_method_on_the_async_side() -> None:
    """The checker itself: a method on one side only, or a blocking method on the async side, fails."""

    class Sync:
        def get(self, key: str) -> int:
            return 0

        def only_here(self) -> None:
            pass

    class AsyncTwin:
        def get(self, key: str) -> int:  # not async
            return 0

    with pytest.raises(AssertionError, match="only on Sync"):
        test_twins_have_the_same_methods_with_the_same_signatures((Sync, AsyncTwin, frozenset()))
    del Sync.only_here
    with pytest.raises(AssertionError, match="expected coroutine"):
        test_twins_have_the_same_methods_with_the_same_signatures((Sync, AsyncTwin, frozenset()))


# -- twins by construction (issue 22) --------------------------------------------------------------

#: The sync twins written by hand, and why (none: a twin that must differ uses ``if True:  # ASYNC``).
HAND_KEPT: dict[str, str] = {}


def _generator() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "scripts" / "async_to_sync.py"
    spec = importlib.util.spec_from_file_location("async_to_sync", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("async_to_sync", module)
    spec.loader.exec_module(module)
    return module


def test_every_generated_sync_twin_is_what_the_script_makes_of_its_async_source() -> None:
    assert _generator().stale() == [], "run `make twins` (scripts/async_to_sync.py)"


def _in_generated_block(obj: Any) -> bool:
    _, start = inspect.getsourcelines(obj)
    text = Path(inspect.getfile(obj)).read_text().splitlines()
    above = [
        line for line in text[: start - 1] if line.startswith(("# <sync>", "# </sync>", "# <async>", "# </async>"))
    ]
    return bool(above) and above[-1].startswith("# <sync>")


@pytest.mark.parametrize("pair", _twins(), ids=_ids)
def test_each_sync_twin_is_generated_not_written_by_hand(pair: tuple[Any, Any, frozenset[str]]) -> None:
    sync_cls, async_cls, _ = pair
    if sync_cls.__name__ in HAND_KEPT:
        assert not _in_generated_block(sync_cls)
        return
    assert _in_generated_block(sync_cls), f"{sync_cls.__name__} is not in a <sync> block of scripts/async_to_sync.py"
    assert not _in_generated_block(async_cls)


MODULE_FUNCTION_TWINS = [
    ("streams", "persisted_stream", "apersisted_stream"),
    ("streams", "follow_stream", "afollow_stream"),
    ("schema", "status", "astatus"),
    ("schema", "deploy", "adeploy"),
    ("client", "behind_pooler", "abehind_pooler"),
    ("graph_runs", "graph_worker", "async_graph_worker"),
    ("graph_runs", "graph_handler", "async_graph_handler"),
]


@pytest.mark.parametrize(("module", "sync_name", "async_name"), MODULE_FUNCTION_TWINS)
def test_each_sync_function_twin_is_generated(module: str, sync_name: str, async_name: str) -> None:
    found = importlib.import_module(f"agent_state.{module}")
    assert _in_generated_block(getattr(found, sync_name))
    assert not _in_generated_block(getattr(found, async_name))
    assert _signature(getattr(found, sync_name)) == _signature(getattr(found, async_name))


def test_the_generator_lists_every_module_with_an_async_block() -> None:
    generator = _generator()
    package = Path(agent_state.__file__).parent
    with_blocks = {p.stem for p in package.glob("*.py") if "\n# <async>\n" in p.read_text()}
    assert with_blocks == set(generator.MODULES)


def test_the_conversion_drops_async_renames_and_keeps_else_branches_as_written() -> None:
    generator = _generator()
    source = """class AsyncThing(AsyncBase):
    \"\"\"Over an ``AsyncConnection``.\"\"\"

    async def get(self, key: str) -> int:
        async with self._lock:  # AsyncThing's lock
            rows = (await self._rows(GET, (key,)))[0]
            total = (await self._rows(GET, (key,)) + 1)
        if True:  # ASYNC
            await asyncio.sleep(0)
        else:
            time.sleep(0)  # aget stays aget here
        await aget(key)
        return dict(await self._rows(GET, ()))
"""
    expected = """class Thing(Base):
    \"\"\"Over an ``Connection``.\"\"\"

    def get(self, key: str) -> int:
        with self._lock:  # Thing's lock
            rows = self._rows(GET, (key,))[0]
            total = (self._rows(GET, (key,)) + 1)
        time.sleep(0)  # aget stays aget here
        get(key)
        return dict(self._rows(GET, ()))
"""
    assert generator.to_sync(source, {"aget": "get"}) == expected


def test_the_check_sees_a_hand_edit_of_a_generated_block(tmp_path: Path) -> None:
    generator = _generator()
    original = Path(agent_state.__file__).parent / "usage.py"
    edited = tmp_path / "usage.py"
    text = original.read_text()
    sync_block = text.index("# <sync>")
    edited.write_text(
        text[:sync_block] + text[sync_block:].replace("def record_usage(", "def record_usage_by_hand(", 1)
    )
    assert generator.generated(original, generator.MODULES["usage"]) == text
    assert generator.generated(edited, generator.MODULES["usage"]) != edited.read_text()
