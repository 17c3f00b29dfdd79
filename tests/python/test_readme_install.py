"""The README's "use it in your database" path as a newcomer takes it: a fresh `git clone` of this
repository, a fresh virtualenv, the README's install command as written (read from README.md, the
block marked ``<!-- test: install -->``), its deploy command (``<!-- test: deploy -->``) and its
checkpointer swap (``<!-- test: swap -->``) against the test database, with nothing of the
checkout's own .venv or python/ on the path. The clone is of the committed tree (HEAD).

Cost (a 2-core machine, pip's cache warm): the clone ~2 s, the venv ~15 s, the install ~45 s (it
builds the wheel in an isolated build environment and installs LangGraph's dependencies): about
a minute, so the file is in SLOW. `--no-deps` or reusing .venv would no longer prove the command.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from test_readme import ROOT, _blocks, swap_block


def _block(kind: str) -> str:
    [code] = [code for when, lang, code in _blocks() if (when, lang) == (kind, "sh")]
    return code


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout: int = 600) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"{command}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_the_readmes_install_deploy_and_swap_work_in_a_fresh_clone_and_venv(
    tmp_path: Path, dsn: str, role_dsn: Any
) -> None:
    clone, venv = tmp_path / "agent-state", tmp_path / "venv"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=120)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "DATABASE_URL")}
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    # the install command, as the README writes it, in the clone's top directory
    _run(["bash", "-euo", "pipefail", "-c", _block("install")], clone, env)
    where = _run([str(venv / "bin/python"), "-c", "import agent_state; print(agent_state.__file__)"], tmp_path, env)
    assert where.startswith(str(venv)), where  # the installed package, not the clone's source
    # the deploy command (the test database already holds the schema: nothing to do, exit 0)
    said = _run(["bash", "-euo", "pipefail", "-c", _block("deploy")], tmp_path, {**env, "DATABASE_URL": dsn})
    assert "already deployed" in said, said
    # the swap, as the owner and then as a tenant (its thread ids cannot collide)
    for url in (dsn, role_dsn("tenant_a")):
        out = _run([str(venv / "bin/python"), "-c", swap_block()], tmp_path, {**env, "DATABASE_URL": url})
        assert out.splitlines() == ["hello"], out
