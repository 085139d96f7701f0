"""Which ops weir accepts as input, by phase of support. An op outside this set is a compile
error at its location (`... is not supported`), never a run-time surprise."""

from __future__ import annotations

# Elementwise scalar ops (on scalars or, elementwise, on tensors): arith/math name -> the kernel
# scalar op of weir/format/reference_kernel.py.
ELEMENTWISE_OPS: dict[str, str] = {
    "arith.addf": "addf", "arith.subf": "subf", "arith.mulf": "mulf", "arith.divf": "divf",
    "arith.remf": "remf", "arith.negf": "negf", "arith.maximumf": "maximumf",
    "arith.minimumf": "minimumf", "arith.maxnumf": "maxnumf", "arith.minnumf": "minnumf",
    "arith.cmpf": "cmpf", "arith.addi": "addi", "arith.subi": "subi", "arith.muli": "muli",
    "arith.divsi": "divsi", "arith.divui": "divui", "arith.remsi": "remsi", "arith.remui": "remui",
    "arith.andi": "andi", "arith.ori": "ori", "arith.xori": "xori", "arith.shli": "shli",
    "arith.shrsi": "shrsi", "arith.shrui": "shrui", "arith.maxsi": "maxsi", "arith.minsi": "minsi",
    "arith.maxui": "maxui", "arith.minui": "minui", "arith.cmpi": "cmpi", "arith.select": "select",
    "arith.extf": "extf", "arith.truncf": "truncf", "arith.sitofp": "sitofp",
    "arith.uitofp": "uitofp", "arith.fptosi": "fptosi", "arith.fptoui": "fptoui",
    "arith.extsi": "extsi", "arith.extui": "extui", "arith.trunci": "trunci",
    "arith.bitcast": "bitcast", "arith.index_cast": "index_cast",
    "math.absf": "absf", "math.absi": "absi", "math.exp": "exp", "math.exp2": "exp2",
    "math.log": "log", "math.log2": "log2", "math.log1p": "log1p", "math.tanh": "tanh",
    "math.sqrt": "sqrt", "math.rsqrt": "rsqrt", "math.powf": "pow", "math.sin": "sin",
    "math.cos": "cos", "math.erf": "erf", "math.floor": "floor", "math.ceil": "ceil",
    "math.round": "round", "math.roundeven": "roundeven", "math.fma": "fma",
}

# Ops that carry structure rather than math; each is handled by a named pass.
STRUCTURAL_OPS: frozenset[str] = frozenset(
    {
        "builtin.module", "func.func", "func.return", "func.call", "arith.constant",
        "tensor.empty", "tensor.dim",
        "linalg.generic", "linalg.yield", "linalg.index", "linalg.fill", "linalg.matmul",
        "linalg.transpose", "linalg.broadcast", "linalg.reduce", "linalg.conv_2d_nhwc_hwcf",
        "linalg.pooling_nchw_max",
        "flow.tensor.transfer",
    }
)


def is_supported(op_name: str) -> bool:
    return op_name in STRUCTURAL_OPS or op_name in ELEMENTWISE_OPS
