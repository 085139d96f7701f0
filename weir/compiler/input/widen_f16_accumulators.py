"""`--weir-accumulate-f16-in-f32`: an f16 or bf16 matmul (or batch_matmul) accumulates in f32 and
is rounded to its type once, at the end: extf of the init, the matmul into f32, truncf of the
result. Without it weir accumulates in the result's type, rounding after each step of k, which
is what IREE computes (its large_linalg_matmul test: 2048 x 0.01 in f16 is 20.28, not 20.48);
with it, results are more accurate and llvm-cpu runs the f32 GEMM microkernel, which is much
faster than the rounding loops. IREE has no such flag; weir's is off by default."""

from __future__ import annotations

from weir.compiler.pass_base import Pass
from weir.compiler.state import CompilationState
from weir.dialects import linalg_ext
from weir.ir.upstream import arith, Builder, Float32Type, InsertPoint, ModuleOp, TensorType

_NARROW = ("f16", "bf16")


class WidenF16Accumulators(Pass):
    flag = "widen-f16-accumulators"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        if not state.options.accumulate_f16_in_f32:
            return
        for op in [op for op in module.walk()
                   if type(op) in (linalg_ext.MatmulOp, linalg_ext.BatchMatmulOp)]:
            init = op.outputs[0]
            narrow = init.type
            assert isinstance(narrow, TensorType)
            if str(narrow.element_type) not in _NARROW or \
                    (isinstance(op, linalg_ext.MatmulOp) and op.has_explicit_maps()):
                continue
            wide = TensorType(Float32Type(), narrow.get_shape())
            b = Builder(InsertPoint.before(op))
            widened = b.insert(arith.ExtFOp(init, wide))
            if isinstance(op, linalg_ext.MatmulOp):
                product = linalg_ext.MatmulOp(list(op.inputs), [widened.result], [wide])
            else:
                product = linalg_ext.BatchMatmulOp(list(op.inputs), [widened.result], [wide])
            b.insert(product)
            rounded = b.insert(arith.TruncFOp(product.results[0], narrow))
            for created in (widened, product, rounded):
                created.location = op.location
            op.results[0].replace_all_uses_with(rounded.result)
            op.detach()
            op.erase()
