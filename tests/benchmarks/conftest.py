"""The suite lives in the repository (benchmarks/), not in the installed package, and xDSL
installs an unrelated top-level `benchmarks` package: the repository root must come first on
the path for these tests to import the suite, whichever way pytest was started."""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = str(Path(__file__).resolve().parents[2])
if sys.path[:1] != [REPO_ROOT]:
    sys.path.insert(0, REPO_ROOT)
