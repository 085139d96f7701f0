"""The module interface the context links: a name, imports to resolve, exports with signatures,
and per-context instantiation. Bytecode modules (from module files) and native modules (Python
classes) both implement it, so a context never cares which kind it links.

The VM calling convention, used by every callable a module instance hands out: positional
arguments in signature order (tuples for variadic `hal.*` operands); the return value is None for
no result, the value itself for one result, a tuple for several.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

from weir.format.image import CallModel, ImportDef, Signature

if TYPE_CHECKING:
    from weir.runtime.vm.context import Context

VMCallable = Callable[..., Any]


@dataclass(frozen=True)
class ExportInfo:
    name: str
    signature: Signature
    model: CallModel = "sync"
    reflection: tuple[tuple[str, str], ...] = ()
    # Functions taking str/tuple operands have no exact cconv; importers are checked by arity.
    arity_only: bool = False

    def reflection_dict(self) -> dict[str, str]:
        return dict(self.reflection)


class ModuleInstance(ABC):
    """A module linked into one context: its per-context state and its callable functions."""

    @abstractmethod
    def function(self, name: str, caller: Module | None) -> VMCallable:
        """The callable for export `name`; `caller` is the importing module (None from the API),
        which functions that act on the caller's image (hal.executable.create) are bound to."""

    def variant(self, name: str, variant: str, caller: Module | None) -> VMCallable | None:
        """A form of export `name` for one known use by `caller` (`awaited`: its signal fence
        is awaited right after; vm/awaited_executes.py), or None when the module has none and
        the export itself serves."""
        return None

    def initialize(self) -> None:
        """Runs once after linking (a bytecode module's initializer)."""


class Module(ABC):
    @property
    @abstractmethod
    def name(self) -> str: ...

    @property
    def imports(self) -> tuple[ImportDef, ...]:
        return ()

    @property
    def dependencies(self) -> tuple[str, ...]:
        return ()

    @property
    def variant_imports(self) -> tuple[tuple[str, str, str], ...]:
        """(name, import, variant): the forms of its imports the module calls besides the
        imports themselves, each resolved to the variant where the imported module has one,
        else to the import."""
        return ()

    @property
    @abstractmethod
    def exports(self) -> Mapping[str, ExportInfo]: ...

    @abstractmethod
    def instantiate(self, context: Context, imports: Mapping[str, VMCallable]) -> ModuleInstance:
        """Creates per-context state; `imports` maps each import name to its resolved callable."""

    def __repr__(self) -> str:
        return f"<vm.module {self.name}>"
