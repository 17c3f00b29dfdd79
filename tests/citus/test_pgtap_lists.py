"""The pgTAP lists of `make test-citus` (tests/citus/pgtap.txt, pgtap-owner-reads.txt,
pgtap-left.txt) hold every file of tests/pgtap once, and the files left still fail on the formation
as their line says (docs/scaling.md, "The test suite on a formation"): a file that starts passing is
named, to be moved to a passing list, and a new pgTAP file that no list names fails here rather
than never running on a formation.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from formation import PORT, connect

ROOT = Path(__file__).resolve().parents[2]
LISTS = ("pgtap.txt", "pgtap-owner-reads.txt", "pgtap-left.txt")


def listed(name: str) -> dict[str, str]:
    """A list's files, each with its comment (the text after two spaces and `#`)."""
    entries: dict[str, str] = {}
    for line in (ROOT / "tests" / "citus" / name).read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        path, _, comment = line.partition("  #")
        entries[path.strip()] = comment.strip()
    return entries


def test_every_pgtap_file_is_in_exactly_one_list() -> None:
    files = {
        str(p.relative_to(ROOT))
        for p in (ROOT / "tests" / "pgtap").rglob("*.sql")
        if "fixtures" not in p.relative_to(ROOT / "tests" / "pgtap").parts
    }
    seen: dict[str, list[str]] = {}
    for name in LISTS:
        for path in listed(name):
            seen.setdefault(path, []).append(name)
    assert sorted(files - set(seen)) == [], "pgTAP files that no list of tests/citus names"
    assert sorted(set(seen) - files) == [], "listed files that tests/pgtap does not hold"
    assert {p: n for p, n in seen.items() if len(n) > 1} == {}, "files in more than one list"


def test_every_file_left_gives_its_cause() -> None:
    assert [p for p, c in listed("pgtap-left.txt").items() if not c] == []


@pytest.fixture(scope="module")
def owner_reads_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The owner-reads mode's copy of tests/pgtap, as scripts/citus-test.sh makes it."""
    dest = tmp_path_factory.mktemp("pgtap-owner-reads")
    shutil.copytree(ROOT / "tests" / "pgtap", dest, dirs_exist_ok=True)
    subprocess.run([sys.executable, str(ROOT / "scripts" / "pgtap_coordinator_asserts.py"), str(dest)], check=True)
    return dest


# the roles the pgTAP files freeze the clock as: members of ai_test_clock in the pgtap part
# (scripts/citus.sh), so here too while these files run; as they were after
CLOCK_ROLES = ("tenant_a", "tenant_b", "app_service")


@pytest.fixture(scope="module")
def roles_as_in_the_pgtap_part() -> Iterator[None]:
    with connect("postgres") as conn:
        outside = [
            str(r[0])
            for r in conn.execute(
                "select r.rolname from pg_roles r where r.rolname = any(%s)"
                " and not pg_has_role(r.rolname, 'ai_test_clock', 'MEMBER')",
                (list(CLOCK_ROLES),),
            ).fetchall()
        ]
        for role in outside:
            conn.execute(f"grant ai_test_clock to {role}")
    try:
        yield
    finally:
        with connect("postgres") as conn:
            for role in outside:
                conn.execute(f"revoke ai_test_clock from {role}")


@pytest.mark.parametrize("path", sorted(listed("pgtap-left.txt")))
@pytest.mark.usefixtures("roles_as_in_the_pgtap_part")
def test_a_file_left_still_fails_as_its_line_says(path: str, owner_reads_copy: Path) -> None:
    cause = listed("pgtap-left.txt")[path]
    relative = path.removeprefix("tests/pgtap/")
    out = subprocess.run(
        ["pg_prove", "-h", "127.0.0.1", "-p", str(PORT), "-U", "postgres", "-d", "agent_state", "--failures", relative],
        cwd=owner_reads_copy,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = out.stdout + out.stderr
    assert "Result: PASS" not in output, f"{path} passes in the owner-reads mode: move it to pgtap-owner-reads.txt"
    # the first failure the line quotes, when it names one
    for failure in re.findall(r"not ok \d+", cause)[:1]:
        assert f"{failure} " in output, f"{path} no longer fails as its line says ({failure}):\n{output}"
