"""One definition per object: each function, table, view, type, index, trigger and policy of the
schema is defined by one deploy script, which the reader can take as the current truth
(CONTRIBUTING.md). sqitch's rework copies (``deploy/name@tag.sql``) are history and not read.
The parser is tests/python/sql_objects.py; the bundle is held to the same rule in
test_schema_bundle.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from catalog import ROOT
from sql_objects import offenders, plan_units, read_plan, statements, touches


def _deploy(change: str) -> str:
    return (ROOT / "deploy" / f"{change}.sql").read_text()


def test_each_object_is_defined_in_one_deploy_file() -> None:
    units, free_after = plan_units((ROOT / "sqitch.plan").read_text(), _deploy)
    found = offenders(units, free_after)
    assert not found, (
        f"{len(found)} objects are defined in more than one place (or created twice); fold each into the"
        " change that creates it (after a release: sqitch rework, CONTRIBUTING.md):\n  " + "\n  ".join(found)
    )


def test_every_deploy_script_is_a_change_of_the_plan_or_a_rework_copy() -> None:
    planned = {e.change for e in read_plan((ROOT / "sqitch.plan").read_text()) if e.tag is None}
    tags = {e.tag for e in read_plan((ROOT / "sqitch.plan").read_text()) if e.tag is not None}
    for folder in ("deploy", "revert", "verify"):
        for path in (ROOT / folder).glob("*.sql"):
            name, _, tag = path.stem.partition("@")
            assert name in planned, f"{folder}/{path.name} belongs to no change of sqitch.plan"
            assert not tag or tag in tags, f"{folder}/{path.name}: the plan has no tag @{tag}"


def test_functions_changes_can_be_deployed_over_themselves() -> None:
    """A ``<concern>_functions`` change is reworked after a release: its deploy script runs over the
    previous version of itself, and its revert is the previous version run over the new one. So it
    creates functions with ``create or replace``, triggers with ``create or replace trigger`` (or,
    for a constraint trigger, which cannot be replaced, ``drop trigger if exists`` first), and no
    table, type, index or policy (those belong to ``<concern>``)."""
    changes = sorted({e.change for e in read_plan((ROOT / "sqitch.plan").read_text()) if e.tag is None})
    for change in (c for c in changes if c.endswith("_functions")):
        dropped: set[str] = set()
        for t in touches(_deploy(change)):
            if t.statement.startswith("drop ") and " if exists " in t.statement:
                dropped.add(t.obj)
            if t.created:
                assert t.obj.startswith(("function ", "trigger ")), f"{change}: {t.obj} belongs to a table change"
                assert t.replace or t.obj in dropped, f"{change}: {t.statement!r} must be `create or replace`"


# The parser itself, on small scripts: each rule can fail.


def test_the_parser_reads_signatures_strings_and_dollar_quotes() -> None:
    script = r"""
    -- create function ai.in_a_comment(text)
    create function ai.f(thread_id text, n int default 1, out x bigint, variadic tags text[] = '{}')
    returns bigint language sql as $body$ select 1; create table ai.inside_a_body (x int); $body$;
    comment on function ai.f(text, integer, text[]) is 'it; says create table ai.in_a_string';
    create table if not exists ai.t (x timestamptz check (x > 'now'));
    alter table ai.t add column y double precision;
    create unique index t_x on ai.t (x);
    create trigger t_guard before update on ai.t for each row execute function ai.g();
    create policy t_by_owner on ai.t using (true);
    grant execute on function ai.f(text, int4, varchar[]), ai.g() to ai_user;
    drop function if exists ai.h(timestamp with time zone), ai.k;
    """
    assert len(statements(script)) == 9
    assert [(t.obj, t.created) for t in touches(script)] == [
        ("function ai.f(text,integer,text[])", True),
        ("function ai.f(text,integer,text[])", False),
        ("relation ai.t", True),
        ("relation ai.t", False),
        ("index ai.t_x", True),
        ("trigger ai.t.t_guard", True),
        ("policy ai.t.t_by_owner", True),
        ("function ai.f(text,integer,character varying[])", False),
        ("function ai.g()", False),
        ("function ai.h(timestamp with time zone)", False),
        ("function ai.k", False),
    ]


def test_the_rule_finds_a_second_definition_a_later_change_and_a_drop() -> None:
    first = "create table ai.t (x int); create function ai.f(a text) returns int language sql as $$ select 1 $$;"
    assert offenders([("one", first)]) == []
    assert offenders([("one", first), ("two", "alter table ai.t add constraint c check (x > 0);")]) == [
        "relation ai.t: one (create); two (alter)"
    ]
    assert offenders(
        [("one", first), ("two", "create or replace function ai.f(b text) returns int language sql as $$ select 2 $$;")]
    ) == ["function ai.f(text): one (create); two (create or replace)"]
    assert offenders([("one", first), ("two", "drop function ai.f;")]) == [
        "function ai.f(text): one (create); two (drop)"
    ]
    assert (
        offenders(
            [("one", first), ("two", "create function ai.f(a integer) returns int language sql as $$ select 1 $$;")]
        )
        == []
    )
    assert offenders([("one", first + first)]) == ["function ai.f(text): one (create)", "relation ai.t: one (create)"]


def test_after_the_release_tag_a_new_change_may_alter_a_table_but_not_redefine_a_function() -> None:
    first = "create table ai.t (x int); create function ai.f(a text) returns int language sql as $$ select 1 $$;"
    plan = (
        "%project=p\none 2026-01-01T00:00:00Z a <a@b> # x\n"
        "@v0.1.0 2026-01-01T00:00:00Z a <a@b> # r\n"
        "two [one] 2026-01-01T00:00:00Z a <a@b> # y\n"
    )
    scripts = {
        "one": first,
        "two": "alter table ai.t add column y int;"
        " create or replace function ai.f(a text) returns int language sql as $$ select 2 $$;",
    }
    units, free_after = plan_units(plan, scripts.__getitem__)
    assert free_after == 1
    assert offenders(units, free_after) == ["function ai.f(text): one (create); two (create or replace)"]
    assert offenders(units) == [
        "function ai.f(text): one (create); two (create or replace)",
        "relation ai.t: one (create); two (alter)",
    ]
    # a reworked change appears twice in the plan and once among the scripts
    reworked = plan + "one [one@v0.1.0] 2026-01-02T00:00:00Z a <a@b> # z\n"
    assert [u for u, _ in plan_units(reworked, scripts.__getitem__)[0]] == ["one", "two"]


@pytest.mark.parametrize("name", ["public.t", '"Mixed"."Case"'])
def test_names_keep_quoted_case_and_default_to_public(name: str) -> None:
    obj = touches(f"create table {re.sub('public.', '', name)} (x int);")[0].obj
    assert obj == f"relation {name}"


@pytest.mark.parametrize(
    ("script", "error"),
    [
        (
            "drop trigger if exists t on ai.x; create constraint trigger t after insert on ai.x"
            " deferrable initially deferred for each row execute function ai.f();",
            None,
        ),
        ("create or replace function ai.f() returns int language sql as $$ select 1 $$;", None),
        ("create function ai.f() returns int language sql as $$ select 1 $$;", "must be `create or replace`"),
        ("create table ai.x (a int);", "belongs to a table change"),
    ],
)
def test_a_functions_change_must_replace_and_make_no_table(
    script: str, error: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import test_one_definition as module

    (tmp_path / "sqitch.plan").write_text("%project=p\nq_functions 2026-01-01T00:00:00Z a <a@b> # x\n")
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "q_functions.sql").write_text(script)
    monkeypatch.setattr(module, "ROOT", tmp_path)
    if error is None:
        test_functions_changes_can_be_deployed_over_themselves()
    else:
        with pytest.raises(AssertionError, match=error):
            test_functions_changes_can_be_deployed_over_themselves()
