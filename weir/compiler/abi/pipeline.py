"""Phase `abi`: the module's boundary in the runtime's terms (buffer views, fences, imports)."""

from __future__ import annotations

from weir.compiler.abi.lower_checks import LowerChecks
from weir.compiler.abi.materialize_target_devices import MaterializeTargetDevices
from weir.compiler.abi.verify import verify_abi
from weir.compiler.abi.wrap_entry_points import WrapEntryPoints
from weir.compiler.abi.wrap_imports import WrapImports
from weir.compiler.pass_base import Pass

PASSES: tuple[Pass, ...] = (
    # Devices named first, so every affinity the program states is checked against them.
    MaterializeTargetDevices(),
    # Check ops become calls of the runtime's check module, which then go through WrapImports.
    LowerChecks(),
    # Imports first: the entry-point wrappers then only see calls already in buffer-view form.
    WrapImports(),
    # Public functions become buffer-view stubs around a private tensor body.
    WrapEntryPoints(),
)
VERIFY = verify_abi
