"""The runner lives in the repository (conformance/), not in the installed package: the
repository root must come first on the path for these tests to import it, whichever way pytest
was started. The suite folder is a fixture that fails, never skips, when it is missing: a
missing suite must not turn the must-pass check into a silent pass."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = str(Path(__file__).resolve().parents[2])
if sys.path[:1] != [REPO_ROOT]:
    sys.path.insert(0, REPO_ROOT)


@pytest.fixture(scope="session")
def suite_dir() -> Path:
    from conformance.must_pass import DEFAULT_SUITE

    if not DEFAULT_SUITE.is_dir():
        pytest.fail(f"IREE's e2e suite was not found at {DEFAULT_SUITE} (nor at "
                    f"/work/shared/iree-e2e); the conformance tests need it", pytrace=False)
    return DEFAULT_SUITE
