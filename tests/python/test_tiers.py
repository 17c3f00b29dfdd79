"""The parts and tiers of the Python suite (conftest.py, CONTRIBUTING.md "Running the tests"): every
file or test that SERIAL, BESIDE, SLOW, NOT_POOLED and POOLED_ENV name exists, so that a rename
cannot leave a slow test in the check tier or a test that must run alone in the parallel part
unnoticed. That no test falls out of `make test` holds by construction: part_of puts each test in
exactly one of the three parts that scripts/pytest-parts.sh runs, the tiers only leave tests out of
`make check`, and --pooled only leaves tests out of the second, pooled run."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import BESIDE, NOT_POOLED, POOLED_ENV, SERIAL, SLOW, part_of

HERE = Path(__file__).resolve().parent


def _tests_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test_")
    }


def test_every_serial_and_beside_file_exists() -> None:
    assert sorted(name for name in SERIAL.keys() | BESIDE.keys() if not (HERE / name).is_file()) == []


def test_every_slow_and_not_pooled_entry_names_a_file_or_a_test_that_exists() -> None:
    missing = []
    for entry in [*SLOW, *NOT_POOLED, *POOLED_ENV]:
        name, _, test = entry.partition("::")
        path = HERE / name
        if not path.is_file() or (test and test not in _tests_of(path)):
            missing.append(entry)
    assert sorted(missing) == []


def test_each_file_is_in_exactly_one_part() -> None:
    for path in HERE.glob("test_*.py"):
        assert part_of(path) in ("parallel", "beside", "serial"), path.name
    assert not SERIAL.keys() & BESIDE.keys()
    assert {part_of(HERE / name) for name in SERIAL} == {"serial"}
    assert {part_of(HERE / name) for name in BESIDE} == {"beside"}
    assert all(lane.isidentifier() for lane, _ in BESIDE.values())  # a database name's suffix
