"""Targets by backend name (`--iree-hal-target-backends=NAME`)."""

from __future__ import annotations

from weir.compiler.targets.interface import Target
from weir.compiler.targets.null.target import NullTarget
from weir.compiler.targets.reference.target import ReferenceTarget
from weir.errors import UsageError

_TARGETS: dict[str, type[Target]] = {
    ReferenceTarget.name: ReferenceTarget,
    NullTarget.name: NullTarget,
}


def get_target(name: str) -> Target:
    try:
        return _TARGETS[name]()
    except KeyError:
        known = ", ".join(sorted(_TARGETS))
        raise UsageError(f"unknown target backend '{name}' (available: {known})") from None


def target_names() -> tuple[str, ...]:
    return tuple(sorted(_TARGETS))
