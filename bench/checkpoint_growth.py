"""Checkpoint growth: bytes and latency of long message threads, AgentStateSaver against
LangGraph's PostgresSaver in the same run, plain `messages` channel and DeltaChannel.

A graph appends one message per step (one superstep, one checkpoint) to `messages` until the
thread has N of them: a deterministic English-like agent conversation (user requests, assistant
tool calls with JSON arguments, tool results, assistant answers; words with Zipf-like frequencies;
no network). The same messages for every saver. Per saver, mode and N it prints:

  bytes     growth of heap + TOAST + indexes of the saver's three tables over the thread
  put       median and 90th percentile of `put` over the thread, and the median of the last 10%
  get_tuple median of get_tuple of the newest checkpoint (30 calls; get_state 15)
  state     median of graph.get_state (get_tuple + the DeltaChannel history walk + deserialization)
  off       the same two reads 50 checkpoints before the newest (N/2 for N < 100): the newest
            checkpoint of a 100·k-message DeltaChannel thread is a snapshot, this one is not

and ratios against PostgresSaver (bytes) and against the 10-step thread (reads), and the bytes by
table at the largest N. AgentStateSaver runs as an ai_user tenant, once per variant: its value
columns compressed with lz4, with pglz (set for the run, restored after), and with
serde=CompressedSerializer() (zlib in the client, LZ4 columns). BENCH_GROWTH_STEPS (default
"10 100 500 1000"), BENCH_GROWTH_MODES ("plain delta") and BENCH_GROWTH_COMPRESSIONS
("lz4 pglz zlib") bound the run (some 3 minutes). Run by bench/checkpoint_growth.sh.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from typing import Annotated, Any

import psycopg
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import _messages_delta_reducer, add_messages
from psycopg.conninfo import make_conninfo
from psycopg.rows import dict_row
from typing_extensions import TypedDict

from agent_state.langgraph import AgentStateSaver
from agent_state.serde import CompressedSerializer

URL = os.environ["DATABASE_URL"]
STEPS = [int(n) for n in os.environ.get("BENCH_GROWTH_STEPS", "10 100 500 1000").split()]
MODES = os.environ.get("BENCH_GROWTH_MODES", "plain delta").split()
# lz4, pglz: the column compression of AgentStateSaver's tables; zlib: AgentStateSaver with
# serde=CompressedSerializer() (values of 2 KB and more zlib-compressed in the client), LZ4 columns
COMPRESSIONS = os.environ.get("BENCH_GROWTH_COMPRESSIONS", "lz4 pglz zlib").split()
TENANT = "bench_growth_tenant"
PG_SCHEMA = "bench_growth_pg"
OUR_TABLES = ["ai.checkpoints", "ai.checkpoint_blobs", "ai.checkpoint_writes"]
PG_TABLES = [f"{PG_SCHEMA}.checkpoints", f"{PG_SCHEMA}.checkpoint_blobs", f"{PG_SCHEMA}.checkpoint_writes"]
# the columns whose compression the run sets: (table, column)
OUR_COLUMNS = [("ai.checkpoints", "checkpoint"), ("ai.checkpoint_blobs", "blob"), ("ai.checkpoint_writes", "blob")]


# A database of its own, made afresh by bench/checkpoint_growth.sh (bench/common.bash): before each
# thread the saver's tables are emptied, so the sizes measured are the thread's alone (indexes
# included), run after run. DATABASE_URL names it; its role (a superuser or the schema owner)
# empties the tables and sets their compression.
BASE_URL = URL
TENANT_URL = make_conninfo(BASE_URL, user=TENANT)
PG_URL = make_conninfo(BASE_URL, options=f"-csearch_path={PG_SCHEMA}")


# The most common English words first (rank order matters: Zipf weights follow it), then the
# vocabulary of a travel/research assistant.
WORDS = """
the of and to a in is that for it as was with be by on not he this are or his from at which but
have an they you were her she there been one all we their has would when if so no will more can
said who out about up them some could what into than him other only then its time do new also
two may like these first any my now such our over me even most made after well where way many
before must through back years much your good should people how each just those very work both
life being under never day same another know while last might great old year off come since
against go came right used take three states himself few house use during without again place
around however home small found thought went say part once general high upon school every does
got united left number course war until always away something fact though water less public put
think almost hand enough far took head yet government system better set told nothing night end
why called didn find look going asked later point knew city next program business give group toward
days young let room president side social given present several order national possible rather
second face per among form important often things looking early white case john become large big
need four within felt along children saw best church ever least power development light thought
seemed family interest want members mind country area others done turned help sense certain
plan flight hotel booking ticket price weather museum train station airport review option choose
compare summary result search query itinerary morning evening afternoon tomorrow weekend budget
reservation available cheaper direct departure arrival guest breakfast walking distance center
""".split()  # noqa: SIM905
# Inflected forms of the less common words rank after them: some 1,000 word types in all.
WORDS += [w + suffix for suffix in ("s", "ed", "ing") for w in WORDS[100:] if len(w) > 3]

CITIES = [
    "Lisbon",
    "Porto",
    "Madrid",
    "Seville",
    "Paris",
    "Lyon",
    "Berlin",
    "Munich",
    "Vienna",
    "Prague",
    "Rome",
    "Florence",
    "Milan",
    "Amsterdam",
    "Brussels",
    "Copenhagen",
    "Oslo",
    "Stockholm",
]
TOOLS = ["search_web", "get_weather", "search_flights", "search_hotels", "read_reviews", "convert_currency"]


class Conversation:
    """The n-th message of the conversation, the same for every saver and every run."""

    def __init__(self, seed: int = 13) -> None:
        self.rng = random.Random(seed)
        weights = [1 / (rank + 1) for rank in range(len(WORDS))]
        self.cumulative = list(itertools.accumulate(weights))
        self.ids = itertools.count()

    def words(self, n: int) -> list[str]:
        return self.rng.choices(WORDS, cum_weights=self.cumulative, k=n)

    def sentence(self, lo: int = 6, hi: int = 18) -> str:
        words = self.words(self.rng.randint(lo, hi))
        text = " ".join(words)
        return text[0].upper() + text[1:] + self.rng.choice([".", ".", ".", ",", "?", "!"])

    def prose(self, sentences: int) -> str:
        return " ".join(self.sentence() for _ in range(sentences))

    def _id(self, prefix: str) -> str:
        return f"{prefix}_{next(self.ids):08d}{self.rng.getrandbits(64):016x}"

    def tool_args(self, tool: str) -> dict[str, Any]:
        city = self.rng.choice(CITIES)
        if tool == "search_web":
            return {"query": " ".join(self.words(self.rng.randint(3, 8))), "max_results": self.rng.choice([5, 10])}
        if tool == "get_weather":
            return {"city": city, "date": f"2026-{self.rng.randint(1, 12):02d}-{self.rng.randint(1, 28):02d}"}
        if tool == "search_flights":
            return {
                "from": city,
                "to": self.rng.choice(CITIES),
                "date": f"2026-06-{self.rng.randint(1, 28):02d}",
                "passengers": self.rng.randint(1, 4),
                "cabin": self.rng.choice(["economy", "business"]),
            }
        if tool == "search_hotels":
            return {
                "city": city,
                "nights": self.rng.randint(1, 7),
                "max_price_eur": self.rng.randint(60, 400),
                "near": " ".join(self.words(2)),
            }
        if tool == "read_reviews":
            return {"place_id": self._id("place"), "limit": 5}
        return {"amount": round(self.rng.uniform(10, 2000), 2), "from": "EUR", "to": self.rng.choice(["USD", "GBP"])}

    def tool_result(self, tool: str) -> str:
        if tool in ("search_web", "read_reviews", "search_hotels"):
            items = [
                {
                    "title": self.sentence(3, 7).rstrip(".,?!"),
                    "snippet": self.prose(2),
                    "score": round(self.rng.uniform(1, 5), 1),
                    "url": f"https://example.org/{'-'.join(self.words(3))}",
                }
                for _ in range(self.rng.randint(2, 4))
            ]
            return json.dumps({"results": items})
        if tool == "get_weather":
            return json.dumps(
                {
                    "temperature_c": self.rng.randint(-5, 35),
                    "summary": self.sentence(4, 10),
                    "wind_kmh": self.rng.randint(0, 60),
                }
            )
        if tool == "search_flights":
            return json.dumps(
                {
                    "flights": [
                        {
                            "number": f"TP{self.rng.randint(100, 999)}",
                            "depart": f"{self.rng.randint(6, 22):02d}:{self.rng.choice(['00', '15', '30', '45'])}",
                            "price_eur": self.rng.randint(40, 900),
                            "stops": self.rng.randint(0, 2),
                        }
                        for _ in range(self.rng.randint(2, 5))
                    ]
                }
            )
        return json.dumps(
            {"converted": round(self.rng.uniform(10, 2000), 2), "rate": round(self.rng.uniform(0.7, 1.3), 4)}
        )

    def message(self, n: int, previous: BaseMessage | None) -> BaseMessage:
        """Message n: a user request every 10 messages, otherwise the agent loop: an assistant
        message with a tool call (and a sentence of reasoning), the tool's result, and now and
        then a longer assistant answer."""
        if n % 10 == 0:
            return HumanMessage(self.prose(self.rng.randint(1, 3)), id=self._id("msg"))
        if isinstance(previous, AIMessage) and previous.tool_calls:
            call = previous.tool_calls[0]
            return ToolMessage(
                self.tool_result(call["name"]), tool_call_id=call["id"], name=call["name"], id=self._id("msg")
            )
        if n % 10 == 9:
            return AIMessage(self.prose(self.rng.randint(4, 9)), id=self._id("msg"))
        tool = self.rng.choice(TOOLS)
        return AIMessage(
            self.sentence(),
            id=self._id("msg"),
            tool_calls=[{"name": tool, "args": self.tool_args(tool), "id": self._id("call"), "type": "tool_call"}],
        )


def conversation(n: int) -> list[BaseMessage]:
    talk = Conversation()
    messages: list[BaseMessage] = []
    for i in range(n):
        messages.append(talk.message(i, messages[-1] if messages else None))
    return messages


MESSAGES = conversation(max(STEPS))


# -- the graph ------------------------------------------------------------------------------------


class PlainState(TypedDict):
    messages: Annotated[list, add_messages]


class DeltaState(TypedDict):
    messages: Annotated[list, DeltaChannel(_messages_delta_reducer)]


def graph(mode: str, steps: int, checkpointer: BaseCheckpointSaver) -> Any:
    """One message per superstep until the thread has `steps` messages."""

    def step(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [MESSAGES[len(state["messages"])]]}

    builder = StateGraph(PlainState if mode == "plain" else DeltaState)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_conditional_edges("step", lambda s: END if len(s["messages"]) >= steps else "step", ["step", END])
    return builder.compile(checkpointer=checkpointer)


# -- measuring ------------------------------------------------------------------------------------


def setup() -> None:
    with psycopg.connect(BASE_URL, autocommit=True) as conn:
        conn.execute(
            f"do $$ begin if not exists (select from pg_roles where rolname = '{TENANT}') then "
            f"create role {TENANT} login; end if; end $$"
        )
        conn.execute(f"grant ai_user to {TENANT}")
        conn.execute(f"create schema {PG_SCHEMA}")
    with PostgresSaver.from_conn_string(PG_URL) as saver:
        saver.setup()


def empty(su: psycopg.Connection[Any], tables: list[str]) -> None:
    su.execute(f"truncate {', '.join(tables)}")  # constant names from OUR_TABLES / PG_TABLES


def disk_bytes(su: psycopg.Connection[Any], tables: list[str]) -> dict[str, int]:
    """Heap + TOAST and indexes of each table (constant names from OUR_TABLES / PG_TABLES)."""
    with contextlib.suppress(psycopg.errors.InsufficientPrivilege):  # a superuser or pg_checkpoint may
        su.execute("checkpoint")
    sizes = {}
    for t in tables:
        row = su.execute(f"select pg_catalog.pg_table_size('{t}'), pg_catalog.pg_indexes_size('{t}')").fetchone()
        short = t.rsplit(".", 1)[1].removeprefix("checkpoint_").removeprefix("checkpoints")
        sizes[f"{short or 'checkpoints'} data"] = int(row[0])  # type: ignore[index]
        sizes[f"{short or 'checkpoints'} idx"] = int(row[1])  # type: ignore[index]
    return sizes


def compression(su: psycopg.Connection[Any]) -> dict[tuple[str, str], str]:
    found = {}
    for table, column in OUR_COLUMNS:
        row = su.execute(
            "select attcompression from pg_catalog.pg_attribute where attrelid = %s::regclass and attname = %s",
            (table, column),
        ).fetchone()
        found[(table, column)] = {"l": "lz4", "p": "pglz"}.get(row[0], "default") if row else "default"  # type: ignore[index]
    return found


def set_compression(su: psycopg.Connection[Any], methods: dict[tuple[str, str], str]) -> None:
    for (table, column), method in methods.items():
        # constant identifiers from OUR_COLUMNS, a method from a fixed set
        assert method in ("lz4", "pglz", "default")
        su.execute(f"alter table {table} alter column {column} set compression {method}")


def median_ms(fn: Callable[[], Any], n: int) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


class Timed:
    """Wraps a saver's put to time each call."""

    def __init__(self, saver: BaseCheckpointSaver) -> None:
        self.puts: list[float] = []
        put = saver.put

        def timed_put(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return put(*args, **kwargs)
            finally:
                self.puts.append(time.perf_counter() - start)

        saver.put = timed_put  # type: ignore[method-assign]


def raw_reads(saver: BaseCheckpointSaver, config: dict[str, Any]) -> dict[str, float]:
    """AgentStateSaver only: the SQL calls behind the off-cadence get_state, rows fetched but not
    deserialized (the database's and the driver's part, without LangGraph's serde)."""
    if not isinstance(saver, AgentStateSaver):
        return {}
    c = config["configurable"]
    args = (c["thread_id"], c.get("checkpoint_ns", ""), c["checkpoint_id"])

    def fetch(sql: str, params: tuple[Any, ...]) -> None:
        with saver.conn.cursor(binary=True) as cur:  # type: ignore[union-attr]
            cur.execute(sql, params)
            cur.fetchall()

    return {
        "sql_get_ms": median_ms(lambda: fetch("select * from ai.get_checkpoint(%s, %s, %s)", args), 30),
        "sql_history_ms": median_ms(
            lambda: fetch("select * from ai.delta_channel_history(%s, %s, %s, %s)", (*args, ["messages"])), 30
        ),
    }


def run(saver: BaseCheckpointSaver, mode: str, steps: int, su: psycopg.Connection[Any], tables: list[str]) -> dict:
    timed = Timed(saver)
    g = graph(mode, steps, saver)
    config = {"configurable": {"thread_id": f"growth-{uuid.uuid4()}"}, "recursion_limit": steps + 10}
    empty(su, tables)
    before = disk_bytes(su, tables)
    start = time.perf_counter()
    g.invoke({"messages": [MESSAGES[0]]}, config)
    elapsed = time.perf_counter() - start
    after = disk_bytes(su, tables)
    by_table = {k: after[k] - before[k] for k in after}
    state = g.get_state(config)
    assert len(state.values["messages"]) == steps, (len(state.values["messages"]), steps)
    head = saver.get_tuple(config)
    assert head is not None
    # A checkpoint off the snapshot cadence: the head of a 100·k-message DeltaChannel thread stores
    # a snapshot; this one is rebuilt from an older snapshot and up to 50 writes.
    back = 50 if steps >= 100 else steps // 2
    off = [*saver.list(config, limit=back + 1)][-1].config
    off_config = {"configurable": {**off["configurable"]}}
    assert len(g.get_state(off_config).values["messages"]) == steps - back
    puts = sorted(timed.puts)
    tail = timed.puts[-max(1, len(timed.puts) // 10) :]
    return {
        "bytes": sum(by_table.values()),
        "by_table": by_table,
        "checkpoints": len(timed.puts),
        "run_s": elapsed,
        "put_ms": statistics.median(puts) * 1000,
        "put_p90_ms": puts[int(len(puts) * 0.9)] * 1000,
        "put_tail_ms": statistics.median(tail) * 1000,
        "get_tuple_ms": median_ms(lambda: saver.get_tuple(config), 30),
        "state_ms": median_ms(lambda: g.get_state(config), 15),
        "off_get_tuple_ms": median_ms(lambda: saver.get_tuple(off_config), 30),
        "off_state_ms": median_ms(lambda: g.get_state(off_config), 15),
        **raw_reads(saver, off_config),
    }


def main() -> None:
    setup()
    results: dict[tuple[str, str, int], dict] = {}
    with psycopg.connect(BASE_URL, autocommit=True) as su:
        original = compression(su)
        try:
            for steps in STEPS:
                for mode in MODES:
                    with psycopg.connect(PG_URL, autocommit=True, prepare_threshold=0, row_factory=dict_row) as c:
                        results[("PostgresSaver", mode, steps)] = run(PostgresSaver(c), mode, steps, su, PG_TABLES)
                    for method in COMPRESSIONS:
                        set_compression(su, dict.fromkeys(original, "lz4" if method == "zlib" else method))
                        serde = CompressedSerializer() if method == "zlib" else None
                        with psycopg.connect(TENANT_URL, autocommit=True) as c:
                            results[(f"AgentStateSaver/{method}", mode, steps)] = run(
                                AgentStateSaver(c, serde=serde), mode, steps, su, OUR_TABLES
                            )
                    print(f"  ... {steps} steps, {mode} done", file=sys.stderr, flush=True)
        finally:
            set_compression(su, original)
    report(results)


def report(results: dict[tuple[str, str, int], dict]) -> None:
    print(f"messages: {len(MESSAGES)} generated; steps {STEPS}, modes {MODES}; one message per step")
    print("bytes: growth of heap + TOAST + indexes; x PG plain / x PG: against PostgresSaver's plain / same mode")
    print("reads in ms (median): at the head, and 'off' = 50 checkpoints before it (N/2 for N < 100);")
    print("x10 = against the same saver and mode on the 10-step thread")
    header = (
        f"{'saver':22} {'mode':5} {'steps':>5} {'bytes':>11} {'xPGplain':>8} {'xPG':>5} "
        f"{'put':>6} {'p90':>6} {'tail':>6} {'get_tup':>7} {'x10':>5} {'state':>6} {'x10':>5} "
        f"{'off get':>7} {'x10':>5} {'off st':>6} {'x10':>5}"
    )
    print(header)
    base_steps = min(STEPS)
    for (saver, mode, steps), r in sorted(results.items(), key=lambda kv: (kv[0][2], kv[0][1], kv[0][0])):
        pg_plain = results.get(("PostgresSaver", "plain", steps), {}).get("bytes")
        pg_same = results.get(("PostgresSaver", mode, steps), {}).get("bytes")
        small = results.get((saver, mode, base_steps), r)
        print(
            f"{saver:22} {mode:5} {steps:5d} {r['bytes']:11,d} "
            f"{(r['bytes'] / pg_plain if pg_plain else float('nan')):8.3f} "
            f"{(r['bytes'] / pg_same if pg_same else float('nan')):5.2f} "
            f"{r['put_ms']:6.2f} {r['put_p90_ms']:6.2f} {r['put_tail_ms']:6.2f} "
            f"{r['get_tuple_ms']:7.2f} {r['get_tuple_ms'] / small['get_tuple_ms']:5.2f} "
            f"{r['state_ms']:6.2f} {r['state_ms'] / small['state_ms']:5.2f} "
            f"{r['off_get_tuple_ms']:7.2f} {r['off_get_tuple_ms'] / small['off_get_tuple_ms']:5.2f} "
            f"{r['off_state_ms']:6.2f} {r['off_state_ms'] / small['off_state_ms']:5.2f}"
        )
    print("\nAgentStateSaver's SQL calls behind the off-cadence read, rows fetched, not deserialized (ms):")
    for (saver, mode, steps), r in sorted(results.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        if "sql_get_ms" in r:
            small = results[(saver, mode, base_steps)]
            print(
                f"  {saver:22} {mode:5} {steps:5d}  get_checkpoint {r['sql_get_ms']:6.2f} "
                f"({r['sql_get_ms'] / small['sql_get_ms']:4.2f}x 10)  delta_channel_history "
                f"{r['sql_history_ms']:6.2f} ({r['sql_history_ms'] / small['sql_history_ms']:4.2f}x 10)"
            )
    top = max(STEPS)
    print(f"\nbytes by table at {top} steps (data = heap + TOAST, idx = indexes):")
    for (saver, mode, steps), r in sorted(results.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if steps == top:
            parts = "  ".join(f"{k} {v:,d}" for k, v in r["by_table"].items())
            print(f"  {saver:22} {mode:5} {parts}")


if __name__ == "__main__":
    main()
