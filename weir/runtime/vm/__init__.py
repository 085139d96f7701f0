"""The VM: modules (bytecode and native), instance, context, and the translator that turns
verified VM functions into Python once."""

from weir.runtime.vm.bytecode_module import BytecodeModule
from weir.runtime.vm.context import Context
from weir.runtime.vm.instance import Instance
from weir.runtime.vm.module import ExportInfo, Module, ModuleInstance
from weir.runtime.vm.native_module import CallerInfo, NativeModule, export

__all__ = ["BytecodeModule", "CallerInfo", "Context", "ExportInfo", "Instance", "Module",
           "ModuleInstance", "NativeModule", "export"]
