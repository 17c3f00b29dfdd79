"""Lays out the upstream test suites for `make test-upstream` (see README.md beside this file).

Downloads the source releases pinned in sdists.txt from PyPI (pip checks their sha256; a download
already there with the right hash is reused), extracts their tests/ into DEST, and, for LangGraph's,
puts our conftest.py in place of upstream's, which builds PostgresSaver, SQLite and Redis fixtures.
The OpenAI Agents SDK keeps its own conftest; tests/upstream/openai_agents/sdk_sessions.py, a
pytest plugin, points its session tests at AgentStateSession.

    python tests/upstream/langgraph/prepare.py DEST
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "sdists.txt"

# sdist -> [(directory name under DEST, our conftest for it)]: the checkpoint-postgres release
# holds two suites, the saver's and the store's (PostgresStore), each with its own conftest.
SUITES: dict[str, list[tuple[str, Path | None]]] = {
    "langgraph": [("graph", HERE / "graph_conftest.py")],
    "langgraph-checkpoint-postgres": [("saver", HERE / "saver_conftest.py"), ("store", HERE / "store_conftest.py")],
    "openai-agents": [("openai_agents", None)],
}
# What each suite needs from its release: its tests, its pytest settings, its license.
KEEP = re.compile(r"^[^/]+/(tests/.*|pyproject\.toml|LICENSE)$")


def _pins() -> list[tuple[str, str, str]]:
    pins = []
    for line in REQUIREMENTS.read_text().splitlines():
        found = re.match(r"^([\w-]+)==(\S+)\s+--hash=sha256:([0-9a-f]{64})$", line.strip())
        if found:
            pins.append((found[1], found[2], found[3]))
    return pins


def _sdist(dist: Path, name: str, version: str) -> Path | None:
    stem = f"{name.replace('-', '_')}-{version}.tar.gz"
    for candidate in (dist / stem, dist / f"{name}-{version}.tar.gz"):
        if candidate.exists():
            return candidate
    return None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cached(dist: Path, name: str, version: str, digest: str) -> bool:
    path = _sdist(dist, name, version)
    return path is not None and _sha256(path) == digest


def main(dest: Path) -> None:
    dist = dest / "dist"
    dist.mkdir(parents=True, exist_ok=True)
    pins = _pins()
    if not all(_cached(dist, name, version, digest) for name, version, digest in pins):
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        subprocess.run([*pip, "--require-hashes", "-r", str(REQUIREMENTS), "-d", str(dist)], check=True)
    for name, version, digest in pins:
        path = _sdist(dist, name, version)
        if path is None or _sha256(path) != digest:
            raise SystemExit(f"{name}=={version}: no sdist with sha256 {digest} in {dist}")
        for suite, conftest in SUITES[name]:
            target = dest / suite
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True)
            with tarfile.open(path) as archive:
                for member in archive.getmembers():
                    if not KEEP.match(member.name) or not (member.isfile() or member.isdir()):
                        continue
                    member.name = member.name.split("/", 1)[1]
                    archive.extract(member, target, filter="data")
            if conftest is not None:
                shutil.copyfile(conftest, target / "tests" / "conftest.py")
            (target / "VERSION").write_text(f"{name}=={version} sha256:{digest}\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(Path(sys.argv[1]))
