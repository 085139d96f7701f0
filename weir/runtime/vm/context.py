"""A context links modules in order: the built-in `hal` module first, then the given modules,
each one's imports resolved against those already added (by `module.function`, checking the
calling convention). Per-context state (globals, native module state) lives here, so contexts
are independent; a context is thread-compatible, not thread-safe."""

from __future__ import annotations

from typing import Iterable, Sequence

from weir.errors import LoadError
from weir.format.image import ImportDef
from weir.runtime.hal.device import Device
from weir.runtime.vm.instance import Instance
from weir.runtime.vm.module import ExportInfo, Module, ModuleInstance, VMCallable


class Context:
    def __init__(self, instance: Instance, devices: Sequence[Device] = (),
                 modules: Iterable[Module] = ()) -> None:
        # Imported here: modules.hal imports this module, so a top-level import is circular.
        from weir.runtime.modules.hal import HalModule

        self.instance = instance
        self.devices: tuple[Device, ...] = tuple(devices)
        self._modules: dict[str, Module] = {}
        self._instances: dict[str, ModuleInstance] = {}
        self._order: list[str] = []
        self.add_module(HalModule())
        for module in modules:
            self.add_module(module)

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
