"""tests/citus: run by `make test-citus` against the formation it builds (tests/citus/formation.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
