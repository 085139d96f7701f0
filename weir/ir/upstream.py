"""The xDSL surface the compiler builds on, re-exported from one place (DESIGN.md §3): passes
import IR classes, dialect modules and the builder from here, so an xDSL upgrade is one
deliberate change inside `weir/ir` and a name xDSL moves or deprecates is fixed once."""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import (
    arith,
    cf,
    func,
    math,
    scf,
    tensor,
)
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    BFloat16Type,
    DYNAMIC_INDEX,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
)
from xdsl.dialects.linalg import (
    attrs as linalg_attrs,
    ops as linalg,
)
from xdsl.dialects.linalg.abstract_ops import NamedOperation as LinalgNamedOp
from xdsl.dialects.tensor import (
    DimOp,
    EmptyOp,
)
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    OpResult,
    Operation,
    Region,
    SSAValue,
)
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.rewriter import InsertPoint, Rewriter

__all__ = [
    "AffineBinaryOpExpr",
    "AffineBinaryOpKind",
    "AffineConstantExpr",
    "AffineDimExpr",
    "AffineExpr",
    "AffineMap",
    "AffineMapAttr",
    "AnyFloat",
    "arith",
    "cf",
    "ArrayAttr",
    "Attribute",
    "BFloat16Type",
    "Block",
    "BlockArgument",
    "Builder",
    "ConstantOp",
    "DenseArrayBase",
    "LinalgNamedOp",
    "math",
    "DenseIntOrFPElementsAttr",
    "DenseResourceAttr",
    "DictionaryAttr",
    "DimOp",
    "DYNAMIC_INDEX",
    "EmptyOp",
    "Float16Type",
    "Float32Type",
    "Float64Type",
    "FloatAttr",
    "func",
    "FunctionType",
    "IndexType",
    "InsertPoint",
    "Rewriter",
    "IntegerAttr",
    "IntegerType",
    "linalg",
    "linalg_attrs",
    "ModuleOp",
    "Operation",
    "OpResult",
    "Region",
    "scf",
    "SSAValue",
    "StringAttr",
    "SymbolRefAttr",
    "tensor",
    "TensorType",
    "UnitAttr",
]
