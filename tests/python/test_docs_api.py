"""docs/sql-api.md against the catalog: every public routine of schema ai (not ai._*) has its
section, with its arguments and, in SQL, what it returns; the page names nothing else.

test_migrations.py::test_committed_sql_api_doc_is_current compares the page with the generator's
output; this test does not trust the generator: it reads the page as a reader would."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[2]
HEADING = re.compile(r"^## `ai\.([a-z][a-z0-9_]*)`$", re.M)

ROUTINES = """
select p.proname, p.prokind, pg_get_function_arguments(p.oid), pg_get_function_result(p.oid)
from pg_proc p
where p.pronamespace = 'ai'::regnamespace and p.proname !~ '^_'
order by p.proname, pg_get_function_identity_arguments(p.oid)
"""


def _page() -> str:
    return (ROOT / "docs" / "sql-api.md").read_text()


def _sections(page: str) -> dict[str, str]:
    """The text under each '## `ai.name`' heading, up to the next heading (overloads share one)."""
    starts = list(HEADING.finditer(page))
    sections: dict[str, str] = {}
    for m, following in zip(starts, [*starts[1:], None], strict=True):
        end = following.start() if following else len(page)
        sections[m.group(1)] = sections.get(m.group(1), "") + page[m.end() : end]
    return sections


def _routines(dsn: str) -> list[tuple[str, str, str, str | None]]:
    with psycopg.connect(dsn) as conn:
        return [(name, kind, arguments, result) for name, kind, arguments, result in conn.execute(ROUTINES)]


def test_every_public_function_of_schema_ai_has_a_section_and_no_section_is_for_nothing(dsn: str) -> None:
    in_catalog = {name for name, _, _, _ in _routines(dsn)}
    on_page = set(_sections(_page()))
    assert in_catalog - on_page == set(), "public functions missing from docs/sql-api.md: run `make docs`"
    assert on_page - in_catalog == set(), "docs/sql-api.md documents functions the catalog does not have"


def test_each_section_shows_the_signature_and_an_sql_result(dsn: str) -> None:
    sections = _sections(_page())
    for name, kind, arguments, result in _routines(dsn):
        text = sections.get(name, "")
        if kind == "p":
            # A procedure returns nothing: it is shown as one, to be CALLed, with no result.
            assert f"procedure ai.{name}({arguments})" in text, f"{name}: not shown as a procedure"
            assert "returns" not in text.split("```")[1], f"{name}: a procedure shown with a result"
        else:
            assert f"ai.{name}({arguments})\n  returns {result}\n" in text, f"{name}: signature or result differs"
    assert not re.search(r"returns (None|null|NULL)\b", _page()), "a result that is not an SQL type"
