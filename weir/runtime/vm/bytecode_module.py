"""A module loaded from a module file: verified, then translated to Python once; each context
gets its own globals and resolved imports bound to the same compiled code."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from weir.errors import LoadError
from weir.format.image import ImportDef, ModuleImage
from weir.runtime.vm.module import ExportInfo, Module, ModuleInstance, VMCallable
from weir.runtime.vm.translator import TranslatedModule, instantiate_functions, translate_module

if TYPE_CHECKING:
    from weir.runtime.vm.context import Context


class BytecodeModule(Module):
    def __init__(self, image: ModuleImage) -> None:
        # translate_module verifies the image before anything else reads it.
        self.translated: TranslatedModule = translate_module(image)
        self.image = image
        self._exports = {
            e.name: ExportInfo(e.name, image.functions[e.function].signature, e.model, e.reflection)
            for e in image.exports
        }
        self._export_index = {e.name: e.function for e in image.exports}

    @property
    def name(self) -> str:
        return self.image.name

    @property
    def imports(self) -> tuple[ImportDef, ...]:
        return self.image.imports

    @property
    def dependencies(self) -> tuple[str, ...]:
        return self.image.dependencies

    @property
    def variant_imports(self) -> tuple[tuple[str, str, str], ...]:
        return self.translated.variants

    @property
    def exports(self) -> Mapping[str, ExportInfo]:
        return self._exports

    def instantiate(self, context: Context, imports: Mapping[str, VMCallable]) -> ModuleInstance:
        # Devices bind in order; a missing one is reported now, by name, not at first use.
        wanted = self.image.devices
        if len(context.devices) < len(wanted):
            missing = wanted[len(context.devices)]
            raise LoadError(
                f"module '{self.name}' was compiled for {len(wanted)} device(s) "
                f"({', '.join(d.name for d in wanted)}) but {len(context.devices)} "
                f"{'was' if len(context.devices) == 1 else 'were'} given: device "
                f"'{missing.name}' has none bound (pass --device once per device, in order)")
        return _BytecodeInstance(self, imports)


def _missing_optional(name: str) -> VMCallable:
    def call(*args: Any) -> Any:
        raise LoadError(f"optional import '{name}' was not resolved in this context")
    return call


class _BytecodeInstance(ModuleInstance):
    def __init__(self, module: BytecodeModule, imports: Mapping[str, VMCallable]) -> None:
        image = module.image
        self.module = module
        self.globals: list[Any] = [g.initial for g in image.globals]
        bases = {name: base for name, base, _ in module.translated.variants}
        table = [imports.get(name) or _missing_optional(bases.get(name, name))
                 for name in module.translated.imports]
        rodata = tuple(image.segments[r.segment] for r in image.rodata)
        self.functions = instantiate_functions(module.translated, table, self.globals, rodata)

    def function(self, name: str, caller: Module | None) -> VMCallable:
        return self.functions[self.module._export_index[name]]  # type: ignore[no-any-return]

    def initialize(self) -> None:
        init = self.module.image.initializer
        if init is not None:
            self.functions[self.module.image.function_index(init)]()
