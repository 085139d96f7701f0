"""An elementwise dispatch's workgroups are sized by the work of an element: a chain of
exponentials and divisions over a few thousand elements (an LSTM step's gates) is cut into
several workgroups, so the threads of a device share it, where the same count of additions
stays one workgroup. Results of the split chain: tests/e2e/test_costly_elementwise.py."""

from __future__ import annotations

from lowered import lowered_entry

import weir.api as weir
from weir.compiler.codegen.translate import EntryTranslator
from weir.compiler.targets.llvm_cpu.elementwise import COSTLY_OP_WORK, element_work
from weir.compiler.targets.llvm_cpu.kernel_values import KernelValues
from weir.ir import parse_module
from weir.ir.upstream import func


def _program(body: str) -> str:
    return f"""
    func.func @f(%x: tensor<8x256xf32>, %y: tensor<8x256xf32>) -> tensor<8x256xf32> {{
      %e = tensor.empty() : tensor<8x256xf32>
      %r = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}} ins(%x, %y : tensor<8x256xf32>, tensor<8x256xf32>) outs(%e : tensor<8x256xf32>) {{
      ^bb0(%a: f32, %b: f32, %o: f32):
        {body}
      }} -> tensor<8x256xf32>
      return %r : tensor<8x256xf32>
    }}"""


# sigmoid(a) * tanh(b): two exponentials' worth of polynomials and a division.
GATES = _program("""%one = arith.constant 1.0 : f32
        %n = arith.negf %a : f32
        %e1 = math.exp %n : f32
        %d = arith.addf %e1, %one : f32
        %s = arith.divf %one, %d : f32
        %t = math.tanh %b : f32
        %v = arith.mulf %s, %t : f32
        linalg.yield %v : f32""")
SUM = _program("""%v = arith.addf %a, %b : f32
        linalg.yield %v : f32""")


def test_costly_elements_split_into_workgroups() -> None:
    entry = lowered_entry(GATES).entry
    assert entry.grid_extent == 8 and entry.grid_tile < 8  # rows in several workgroups


def test_cheap_elements_stay_one_workgroup() -> None:
    entry = lowered_entry(SUM).entry
    assert entry.grid_extent == 8 and entry.grid_tile >= 8  # one workgroup of all 8 rows


def test_element_work_weighs_costly_ops() -> None:
    def work(src: str) -> int:
        flow = weir.compile_to_phase(src, "w.mlir", weir.CompilerOptions(
            target_backends=("llvm-cpu",)), "flow")
        (fn,) = [op for op in parse_module(flow, "flow.mlir").walk()
                 if isinstance(op, func.FuncOp) and "weir.binding_dims" in op.attributes]
        return element_work(KernelValues(EntryTranslator(fn, "llvm-cpu").translate()))
    # negf, addf, mulf and the yield's element: simple; exp, divf, tanh: costly.
    assert work(GATES) == 1 + 3 + 3 * COSTLY_OP_WORK
    assert work(SUM) == 1 + 1
