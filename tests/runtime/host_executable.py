"""An executable whose entry points are Python functions, for runtime tests that need a dispatch
to count, block, record order or fail without compiling anything."""

from __future__ import annotations

from typing import Callable, Sequence

from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.executable import Executable
from weir.runtime.hal.workgroups import WorkgroupRunner

Body = Callable[[Sequence[Buffer]], None]


class HostExecutable(Executable):
    def __init__(self, entries: dict[str, Body], name: str | None = None) -> None:
        self._names = tuple(entries)
        self._bodies = tuple(entries.values())
        self.name = name

    @property
    def entry_points(self) -> tuple[str, ...]:
        return self._names

    def dispatch(self, entry: int, workgroups: tuple[int, ...], constants: Sequence[int],
                 bindings: Sequence[Buffer], runner: WorkgroupRunner) -> None:
        self._bodies[entry](bindings)
