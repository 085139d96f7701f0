"""`--stress` turns the reliability tests' fast sizes (a fixed seed and a few hundred cases, for
`make test`) into their long ones (`make stress`): more fuzz cases, 10,000-invocation memory runs."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--stress", action="store_true", default=False,
                     help="run the reliability tests at their long sizes (make stress)")


@pytest.fixture
def stress(request: pytest.FixtureRequest) -> bool:
    """True under `make stress`: tests pick their long sizes."""
    return bool(request.config.getoption("--stress"))
