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
`RuntimeFault("module.function: ExceptionType: message")`; when a coarse-fences export raises,
its signal fence is failed with that message too, so work queued behind the call (and any other
waiter on the fence) ends with the cause instead of waiting for a signal that never comes.

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
from weir.runtime.hal.fence import Fence
from weir.runtime.vm.bare_imports import register
from weir.runtime.vm.bytecode_module import BytecodeModule
from weir.runtime.vm.module import ExportInfo, Module, ModuleInstance, VMCallable
from weir.runtime.vm.native_results import result_check

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


def variant_of(name: str, variant: str) -> Callable[[F], F]:
    """Marks a method as the `variant` form of export `name` (`ModuleInstance.variant`): not an
    export of its own; linked as the export is, its faults named after the export. What it
    takes is the variant's to define (vm/awaited_executes.py)."""
    def mark(fn: F) -> F:
        fn.__weir_variant__ = (name, variant)  # type: ignore[attr-defined]
        return fn
    return mark


class NativeModule(Module):
    module_name: ClassVar[str] = ""
    # Whether what each method returns is checked against its signature (native_results.py).
    # Only the runtime's own modules, whose results are their cconv by construction, opt out.
    checks_results: ClassVar[bool] = True
    # Whether compiled programs call the methods without the wrapper frame (bare_imports.py):
    # only for the runtime's own modules, whose methods take exactly their cconv's arguments.
    links_bare: ClassVar[bool] = False

    def __init__(self) -> None:
        if not self.module_name or "." in self.module_name:
            raise TypeError(f"{type(self).__name__}.module_name must be a non-empty name without '.'")
        self._methods: dict[str, tuple[str, _ExportSpec]] = {}
        self._exports: dict[str, ExportInfo] = {}
        self._variants: dict[tuple[str, str], str] = {}
        for attr in dir(type(self)):
            variant = getattr(getattr(type(self), attr, None), "__weir_variant__", None)
            if variant is not None:
                self._variants[variant] = attr
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
        return self._link(self.module._methods[name][0], name, caller)

    def variant(self, name: str, variant: str, caller: Module | None) -> VMCallable | None:
        attr = self.module._variants.get((name, variant))
        if attr is None or name not in self.module._methods:
            return None
        return self._link(attr, name, caller)

    def _link(self, attr: str, name: str, caller: Module | None) -> VMCallable:
        """The callable of method `attr`, linked as export `name` is."""
        spec = self.module._methods[name][1]
        leading = (self.state, CallerInfo(caller or self.module, self.context)) \
            if spec.pass_caller else (self.state,)
        qualified = f"{self.module.name}.{name}"
        signature = self.module._exports[name].signature
        arity = len(signature.args)
        fails_signal = spec.model == "coarse-fences" and arity >= 2
        check = result_check(qualified, signature) if self.module.checks_results else None
        method = getattr(self.module, attr)
        if self.module.links_bare and check is None and not fails_signal \
                and isinstance(caller, BytecodeModule) \
                and register(method.__func__.__code__, qualified):
            # Called only by translated code, whose handler names what fails in it. The plain
            # function with the module first: one indirection fewer than the bound method.
            return functools.partial(method.__func__, self.module, *leading)
        call: VMCallable = _caller_factory(arity, len(leading), fails_signal, check is not None)(
            method, *leading, qualified, check)
        call.__name__ = qualified
        return call


def _fail_signal(signal: Any, error: WeirError) -> None:
    """A coarse-fences export raised: its signal fence (the last argument) carries the error to
    whatever waits on it."""
    if isinstance(signal, Fence):
        signal.fail(error)


@functools.cache
def _caller_factory(arity: int, leading: int, fails_signal: bool,
                    checked: bool) -> Callable[..., VMCallable]:
    """Makes the wrappers that call an exported method with its leading arguments (state, and
    caller if asked) and report any exception that is not a `WeirError` as a `RuntimeFault`
    naming the function; with `checked`, what the method returned passes its result check
    (native_results.py) first; with `fails_signal` (coarse-fences exports) an error also fails
    the last argument, the signal fence. The wrapper takes exactly `arity` parameters, as the
    VM and the API always pass (imports are linked and API calls checked by arity): a `*args`
    wrapper costs a quarter of a microsecond more per call to pack and unpack, and a compiled
    program calls the hal module about ten times per invocation. Generated from two integers and two
    flags only."""
    params = "".join(f"a{i}, " for i in range(arity))
    lead = "".join(f"l{i}, " for i in range(leading))
    fail = f"            fail(a{arity - 1}, error)\n" if fails_signal else ""
    invoke = f"method({lead}{params})"
    source = (f"def make(method, {lead}qualified, check):\n"
              f"    def call({params}):\n"
              f"        try:\n"
              f"            return {f'check({invoke})' if checked else invoke}\n"
              f"        except WeirError as error:\n"
              f"{fail}"
              f"            raise\n"
              f"        except Exception as e:\n"
              f"            error = RuntimeFault(f'{{qualified}}: {{type(e).__name__}}: {{e}}')\n"
              f"{fail}"
              f"            raise error from e\n"
              f"    return call\n")
    namespace: dict[str, Any] = {"WeirError": WeirError, "RuntimeFault": RuntimeFault,
                                 "fail": _fail_signal}
    exec(compile(source, f"<weir native call, {arity} argument(s)>", "exec"), namespace)  # noqa: S102
    return namespace["make"]  # type: ignore[no-any-return]
