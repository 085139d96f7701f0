"""A context links modules in order: the built-in `hal` module first, then the given modules,
each one's imports resolved against those already added (by `module.function`, checking the
calling convention). Per-context state (globals, native module state) lives here, so contexts
are independent.

Threads: once its modules are added, a context's functions may be called from several threads
at once, and each call computes what it would alone. Nothing needs a lock for that: a call's
values live in the call (VM registers are locals of the translated function, each call makes its
own buffers and fences), compiled programs write globals only in their initializer (which runs
in `add_module`), the `hal` module's state is read-only, and devices, allocators and executables
are safe to use from several threads. Not covered: adding modules while calls run, a module
file whose exports store globals (each store is atomic; their order between calls is not
defined), and the state of a native module written in Python, which is its author's to guard.
Order between concurrent calls is only what their fences impose.

`close()` (or `with`) shuts down the devices the context owns, so their threads end at a known
point rather than when the garbage collector finds the context."""

from __future__ import annotations

from typing import Iterable, Self, Sequence

from weir.errors import LoadError, UsageError
from weir.format.image import ImportDef
from weir.runtime.hal.device import Device
from weir.runtime.vm.awaited_executes import AWAITED
from weir.runtime.vm.instance import Instance
from weir.runtime.vm.module import ExportInfo, Module, ModuleInstance, VMCallable


class Context:
    def __init__(self, instance: Instance, devices: Sequence[Device] = (),
                 modules: Iterable[Module] = (), owns_devices: bool = False) -> None:
        """`owns_devices`: the devices were made for this context alone (`weir.api.load`), so
        `close()` shuts them down; otherwise they are the caller's, who may share them."""
        # Imported here: modules.hal imports this module, so a top-level import is circular.
        from weir.runtime.modules.hal import HalModule

        self.instance = instance
        self.devices: tuple[Device, ...] = tuple(devices)
        self._owns_devices = owns_devices
        self._closed = False
        self._modules: dict[str, Module] = {}
        self._instances: dict[str, ModuleInstance] = {}
        self._order: list[str] = []
        self.add_module(HalModule())
        for module in modules:
            self.add_module(module)

    def close(self, timeout_s: float | None = None) -> None:
        """Shuts down the devices this context owns: their threads end (each joined for at most
        `timeout_s`), their pooled memory is freed, operations still waiting fail. Idempotent.
        Afterwards adding modules or looking up functions is a `UsageError`; a function looked up
        before fails its calls with "device shut down" on local-task (local-sync, which holds
        no threads, keeps running them). Devices the caller passed in are left running."""
        if self._closed:
            return
        self._closed = True
        if self._owns_devices:
            for device in self.devices:
                device.shutdown(wait=True, timeout_s=timeout_s)

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise UsageError(f"cannot {what}: the context is closed")

    @property
    def modules(self) -> tuple[Module, ...]:
        return tuple(self._modules[n] for n in self._order)

    def module(self, name: str) -> Module:
        try:
            return self._modules[name]
        except KeyError:
            raise LoadError(f"no module '{name}' in the context (loaded: "
                            f"{', '.join(self._order)})") from None

    def add_module(self, module: Module) -> None:
        self._check_open(f"add module '{module.name}'")
        if module.name in self._modules:
            raise LoadError(f"a module named '{module.name}' is already loaded in this context")
        self._add_on_demand_modules(module)
        for dep in module.dependencies:
            if dep not in self._modules:
                raise LoadError(f"module '{module.name}' depends on module '{dep}', which is not "
                                f"loaded: pass it with --module before '{module.name}'")
        resolved: dict[str, VMCallable] = {}
        for imp in module.imports:
            fn = self._resolve(module, imp)
            if fn is not None:
                resolved[imp.name] = fn
        for name, base, variant in module.variant_imports:
            if base in resolved:
                target, _, fn_name = base.partition(".")
                fn = self._instances[target].variant(fn_name, variant, module)
                if fn is None and variant != AWAITED:  # only `awaited` takes the import's args
                    raise LoadError(f"module '{target}' has no '{variant}' form of "
                                    f"'{fn_name}', which module '{module.name}' calls")
                resolved[name] = fn or resolved[base]
        inst = module.instantiate(self, resolved)
        self._modules[module.name] = module
        self._instances[module.name] = inst
        self._order.append(module.name)
        inst.initialize()

    def _add_on_demand_modules(self, module: Module) -> None:
        """Built-in modules that `module` uses (`check`) are created here when nothing of their
        name is loaded, so a test program runs without naming them and its checks never go
        unresolved (IREE's check imports are optional and silently skipped when missing)."""
        from weir.runtime.modules import ON_DEMAND

        wanted = [*module.dependencies, *(imp.name.partition(".")[0] for imp in module.imports)]
        for name in dict.fromkeys(wanted):
            if name not in self._modules and name in ON_DEMAND:
                self.add_module(ON_DEMAND[name]())

    def _resolve(self, module: Module, imp: ImportDef) -> VMCallable | None:
        target_name, _, fn_name = imp.name.partition(".")
        target = self._modules.get(target_name)
        if target is None:
            if imp.optional:
                return None
            raise LoadError(f"module '{module.name}' needs module '{target_name}' (for import "
                            f"'{imp.name}'), which is not loaded: pass it with --module before "
                            f"'{module.name}'")
        export = target.exports.get(fn_name)
        if export is None:
            if imp.optional:
                return None
            raise LoadError(f"module '{module.name}' imports '{imp.name}', but module "
                            f"'{target_name}' has no function '{fn_name}'")
        _check_signature(module.name, imp, export)
        return self._instances[target_name].function(fn_name, module)

    def lookup_export(self, qualified: str) -> tuple[Module, ExportInfo, VMCallable]:
        """`module.function` -> (module, export, callable) for calls from outside the VM."""
        self._check_open(f"look up '{qualified}'")
        module_name, _, fn_name = qualified.partition(".")
        if not fn_name:
            raise LoadError(f"'{qualified}' is not 'module.function'")
        module = self.module(module_name)
        export = module.exports.get(fn_name)
        if export is None:
            raise LoadError(f"module '{module_name}' has no function '{fn_name}' (exports: "
                            f"{', '.join(module.exports) or 'none'})")
        return module, export, self._instances[module_name].function(fn_name, None)

    def module_state(self, name: str) -> object:
        """What a native module's `create_state` returned for this context (None for compiled
        modules): lets a host inspect a custom module it loaded."""
        self.module(name)  # a clear error for a module that is not loaded
        return getattr(self._instances[name], "state", None)

    def last_module(self) -> Module:
        return self._modules[self._order[-1]]


def _check_signature(importer: str, imp: ImportDef, export: ExportInfo) -> None:
    where = f"module '{importer}' imports '{imp.name}'"
    if imp.model != export.model:
        # Checked first: a model mismatch also changes the signature (the fences), and the model
        # is what the user has to fix.
        raise LoadError(f"{where} with call model '{imp.model}', but the function uses "
                        f"'{export.model}': declare the import with iree.abi.model = "
                        f"\"{export.model}\" or compile both with the same "
                        f"--iree-execution-model")
    if export.arity_only:
        if (len(imp.signature.args), len(imp.signature.results)) != \
                (len(export.signature.args), len(export.signature.results)):
            raise LoadError(f"{where} with signature {imp.signature.cconv}, but it takes "
                            f"{len(export.signature.args)} argument(s) and returns "
                            f"{len(export.signature.results)} result(s)")
    elif imp.signature != export.signature:
        raise LoadError(f"{where} with signature {imp.signature.cconv}, but the function has "
                        f"signature {export.signature.cconv}")
