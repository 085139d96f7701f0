"""Built-in native modules: `hal` (linked into every context first) and those a context loads on
demand, when a module it adds depends on them (`check`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from weir.runtime.vm.module import Module


def _check() -> Module:
    from weir.runtime.modules.check import CheckModule

    return CheckModule()


ON_DEMAND: dict[str, Callable[[], Module]] = {"check": _check}
"""Modules a context creates itself when a module imports them and none of that name is loaded
yet; a module of the same name loaded first (a custom `check`) is used instead."""
