"""The executable interface every payload loader implements, and the typed registry of loaders
keyed by payload format (`reference`, later `llvm-cpu`). Devices run dispatches only through this
interface, so a new target needs a loader and nothing in the HAL or VM changes."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

from weir.errors import LoadError, RuntimeFault
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.workgroups import WorkgroupRunner


class NativeCall(NamedTuple):
    """A dispatch already checked against its bindings, as native code runs it: the entry
    point's address called with the bindings' addresses, the push constants and the workgroup
    range [0, count). A command buffer's replay runs consecutive ones in one native call."""
    fn: int
    addresses: tuple[int, ...]
    constants: tuple[int, ...]
    count: int
    keep: tuple[object, ...]  # what the addresses point into, alive as long as the call
    # (binding, end byte offset, writes) of each access: what any other buffer bound in the
    # same place must offer for the same call to be safe.
    needs: tuple[tuple[int, int, bool], ...]
    # The message of a failed run-time check, from the fault record the entry point wrote.
    fault_message: Callable[[tuple[int, int, int, int]], str]


class Executable(ABC):
    # The module's name for this executable (`ExecutableDef.name`) when whoever loaded it passed
    # one to `ExecutableLoaderRegistry.load`, else None; statistics key dispatches by it. A class
    # attribute, so loaders need no constructor change to support it.
    name: str | None = None
    # The statistics' keys of the entry points (`statistics.dispatch_names`), filled in by the
    # first dispatch a device counts: building them costs more than counting, on every dispatch.
    _dispatch_names: tuple[str, ...] | None = None

    @property
    @abstractmethod
    def entry_points(self) -> tuple[str, ...]: ...

    @abstractmethod
    def dispatch(self, entry: int, workgroups: tuple[int, ...], constants: Sequence[int],
                 bindings: Sequence[Buffer], runner: WorkgroupRunner) -> None:
        """Runs one dispatch to completion before returning; an executable that splits its work
        into workgroups runs them through `runner`, the device's."""

    def native_call(self, entry: int, workgroups: tuple[int, ...], constants: Sequence[int],
                    bindings: Sequence[Buffer]) -> NativeCall | None:
        """The dispatch as a checked native call, for executables of native code; None where
        there is none (the replay then calls `dispatch`). Raises what `dispatch` would."""
        return None


def check_dispatch_arity(entry: str, bindings: Sequence[Buffer], constants: Sequence[int],
                         num_bindings: int, num_push_constants: int) -> None:
    """What every loader checks before running an entry point: a module whose host code passes
    the wrong number of bindings or constants is a fault, not an index error or a wild read."""
    if len(bindings) != num_bindings:
        raise RuntimeFault(f"dispatch of '{entry}': {len(bindings)} binding(s) given, "
                           f"the entry point takes {num_bindings}")
    if len(constants) != num_push_constants:
        raise RuntimeFault(f"dispatch of '{entry}': {len(constants)} push constant(s) given, "
                           f"the entry point takes {num_push_constants}")


ExecutableLoader = Callable[[memoryview], Executable]


@dataclass(frozen=True)
class LoaderInfo:
    format: str
    load: ExecutableLoader
    description: str = ""


class ExecutableLoaderRegistry:
    def __init__(self) -> None:
        self._loaders: dict[str, LoaderInfo] = {}

    def register(self, info: LoaderInfo) -> None:
        if info.format in self._loaders:
            raise ValueError(f"an executable loader for '{info.format}' is already registered")
        self._loaders[info.format] = info

    def has(self, format: str) -> bool:
        return format in self._loaders

    def formats(self) -> tuple[str, ...]:
        return tuple(self._loaders)

    def load(self, format: str, payload: memoryview, name: str | None = None) -> Executable:
        """`name`: the module's name for the executable, kept on it as `Executable.name`."""
        info = self._loaders.get(format)
        if info is None:
            raise LoadError(f"no executable loader for format '{format}' (available: "
                            f"{', '.join(self._loaders) or 'none'})")
        executable = info.load(payload)
        if name is not None:
            executable.name = name
        return executable
