"""The work of a local-task `queue_execute` as an object rather than a closure, so an operation
that is still waiting can name the dispatches it would run (wait-cycle reports) without the
device keeping anything per operation."""

from __future__ import annotations

from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.command_buffer import CommandBuffer, DispatchCommand
from weir.runtime.hal.command_execution import execute_command_buffers
from weir.runtime.hal.statistics import DeviceStatistics, dispatch_names
from weir.runtime.hal.workgroups import WorkgroupRunner


class ExecuteWork:
    __slots__ = ("command_buffers", "_statistics", "_runner", "_bindings")

    def __init__(self, command_buffers: tuple[CommandBuffer, ...], statistics: DeviceStatistics,
                 runner: WorkgroupRunner, bindings: tuple[Buffer, ...] | None = None) -> None:
        self.command_buffers = command_buffers
        self._bindings = bindings
        # Captured instead of the device: pending work must not pin it.
        self._statistics = statistics
        self._runner = runner

    def __call__(self) -> None:
        execute_command_buffers(self.command_buffers, self._statistics, self._runner,
                                self._bindings)

    def dispatch_names(self) -> list[str]:
        """`executable::entry` of each dispatch recorded, in order."""
        return recorded_dispatch_names(self.command_buffers)


def recorded_dispatch_names(command_buffers: tuple[CommandBuffer, ...]) -> list[str]:
    """`executable::entry` of each dispatch the command buffers recorded, in order."""
    names = []
    for cb in command_buffers:
        for cmd in cb.commands if isinstance(cb, CommandBuffer) else ():
            if type(cmd) is DispatchCommand:
                names.append(dispatch_names(cmd.executable)[cmd.entry])
    return names
