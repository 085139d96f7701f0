"""Modules written in Python. Subclass `NativeModule`, set `module_name`, and decorate each
exported method with `@export(cconv)`:

    class Custom(NativeModule):
        module_name = "custom"

        def create_state(self, context):          # optional: one state object per context
            return {"calls": 0}

        @export("0rr_r")
        def mul(self, state, a: BufferView, b: BufferView) -> BufferView:
            out = a.to_numpy() * b.to_numpy()
            return BufferView.from_numpy(out)

Methods receive `(self, state, *args)`; with `pass_caller=True`, `(self, state, caller, *args)`
where `caller` is a `CallerInfo` (the importing module and the context). Tensors arrive and leave
as `BufferView`s (`.to_numpy()` maps them without a copy); i/I/f/F values are Python ints/floats.
A `coarse-fences` export (`model="coarse-fences"`) receives a wait fence and a signal fence as its
two trailing arguments (they are part of its cconv, e.g. `0rrrr_r`) and must signal (or fail) the
signal fence once its results are ready. Exceptions that are not `WeirError`s are reported as
`RuntimeFault("module.function: message")`.

Load one from a file with `weir.runtime.vm.python_module_loader.load_python_module(
"python:file.py:ClassName")`, or `weir-run-module --module=python:file.py:ClassName`; the full
guide is docs/custom_modules.md.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, TypeVar

from weir.errors import RuntimeFault, WeirError
from weir.format.image import CallModel, Signature
from weir.runtime.vm.module import ExportInfo, Module, ModuleInstance, VMCallable

if TYPE_CHECKING:
    from weir.runtime.vm.context import Context

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class CallerInfo:
    module: Module
    context: Context


@dataclass(frozen=True)
class _ExportSpec:
    name: str | None
    cconv: str
    model: CallModel
    arity_only: bool
    pass_caller: bool
    reflection: tuple[tuple[str, str], ...]


def export(cconv: str, *, name: str | None = None, model: CallModel = "sync",
           arity_only: bool = False, pass_caller: bool = False,
           reflection: tuple[tuple[str, str], ...] = ()) -> Callable[[F], F]:
    """Marks a method as exported under `name` (default: the method name)."""
    Signature.parse(cconv)  # fail at class definition, not at link time

    def mark(fn: F) -> F:
        fn.__weir_export__ = _ExportSpec(name, cconv, model, arity_only, pass_caller,  # type: ignore[attr-defined]
                                         reflection)
        return fn
    return mark


class NativeModule(Module):
    module_name: ClassVar[str] = ""

    def __init__(self) -> None:
        if not self.module_name or "." in self.module_name:
            raise TypeError(f"{type(self).__name__}.module_name must be a non-empty name without '.'")
        self._methods: dict[str, tuple[str, _ExportSpec]] = {}
        self._exports: dict[str, ExportInfo] = {}
        for attr in dir(type(self)):
            spec = getattr(getattr(type(self), attr, None), "__weir_export__", None)
            if isinstance(spec, _ExportSpec):
                export_name = spec.name or attr
                self._methods[export_name] = (attr, spec)
                self._exports[export_name] = ExportInfo(export_name, Signature.parse(spec.cconv),
                                                        spec.model, spec.reflection, spec.arity_only)

    @property
    def name(self) -> str:
        return self.module_name

    @property
    def exports(self) -> Mapping[str, ExportInfo]:
        return self._exports

    def create_state(self, context: Context) -> Any:
        """Per-context state handed to every call; override to keep some."""
        return None

    def instantiate(self, context: Context, imports: Mapping[str, VMCallable]) -> ModuleInstance:
        return _NativeInstance(self, context, self.create_state(context))


class _NativeInstance(ModuleInstance):
    def __init__(self, module: NativeModule, context: Context, state: Any) -> None:
        self.module = module
        self.context = context
        self.state = state

    def function(self, name: str, caller: Module | None) -> VMCallable:
        attr, spec = self.module._methods[name]
        method = getattr(self.module, attr)
        bound = functools.partial(method, self.state, CallerInfo(caller or self.module, self.context)) \
            if spec.pass_caller else functools.partial(method, self.state)
        qualified = f"{self.module.name}.{name}"

        def call(*args: Any) -> Any:
            try:
                return bound(*args)
            except WeirError:
                raise
            except Exception as e:
                raise RuntimeFault(f"{qualified}: {type(e).__name__}: {e}") from e
        call.__name__ = qualified
        return call
