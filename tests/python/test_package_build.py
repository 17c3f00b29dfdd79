"""Building the package declares what it ships: every directory of package data is a package of
python/pyproject.toml, so setuptools prints no "absent from the `packages` configuration" warning
(it printed one per build, and `make demo`'s editable install showed it too), and the wheel carries
the console's templates and the schema bundle."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = sorted(p.name for p in (ROOT / "python/agent_state/console/templates").glob("*.html"))


def test_the_wheel_builds_without_a_package_data_warning_and_carries_the_templates(tmp_path: Path) -> None:
    source = tmp_path / "checkout"
    shutil.copytree(ROOT / "python", source / "python", ignore=shutil.ignore_patterns("*.egg-info", "build", "dist"))
    (source / "sql").mkdir()
    shutil.copyfile(ROOT / "sql" / "ai.sql", source / "sql" / "ai.sql")
    shutil.copyfile(ROOT / "LICENSE", source / "LICENSE")
    # pip >= 24 passes the build backend's warnings through (.venv's pip: `make setup` upgrades it)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", str(source / "python"), "-w", str(tmp_path / "wheel")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "absent from the `packages` configuration" not in output, output[-4000:]
    assert "BuildBackendWarning" not in output, output[-4000:]
    (wheel,) = (tmp_path / "wheel").glob("agent_state-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {f"agent_state/console/templates/{name}" for name in TEMPLATES} <= names
    assert {"agent_state/sql/ai.sql", "agent_state/py.typed"} <= names
