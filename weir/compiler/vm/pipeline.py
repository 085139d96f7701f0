"""Phase `vm`: the host program as VM functions calling the runtime's `hal` module."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.vm.convert_to_vm import ConvertToVM
from weir.compiler.vm.lower_host_control_flow import LowerHostControlFlow
from weir.compiler.vm.verify import verify_vm

PASSES: tuple[Pass, ...] = (
    # Structured host control flow to blocks and branches, now that only scalars and references
    # cross them; the conversion below then maps branches one to one.
    LowerHostControlFlow(),
    # One walk from hal/func/arith to vm: the VM dialect mirrors the runtime's instruction set.
    ConvertToVM(),
)
VERIFY = verify_vm
