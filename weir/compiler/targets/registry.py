"""Targets by backend name (`--iree-hal-target-backends=NAME`), and the aliases IREE users type
(`vmvx` is weir's `reference`, so the seeds' command lines work)."""

from __future__ import annotations

from weir.compiler.targets.interface import Target
from weir.compiler.targets.llvm_cpu.target import LLVMCPUTarget
from weir.compiler.targets.null.target import NullTarget
from weir.compiler.targets.reference.target import ReferenceTarget
from weir.errors import UsageError

_TARGETS: dict[str, type[Target]] = {
    ReferenceTarget.name: ReferenceTarget,
    NullTarget.name: NullTarget,
    LLVMCPUTarget.name: LLVMCPUTarget,
}
_ALIASES: dict[str, str] = {"vmvx": ReferenceTarget.name}


def canonical_target_name(name: str) -> str:
    """The registered name `name` stands for; raises UsageError listing what is available."""
    canonical = _ALIASES.get(name, name)
    if canonical not in _TARGETS:
        known = ", ".join(sorted([*_TARGETS, *_ALIASES]))
        raise UsageError(f"unknown target backend '{name}' (available: {known})")
    return canonical


def get_target(name: str) -> Target:
    return _TARGETS[canonical_target_name(name)]()
