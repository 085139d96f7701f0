"""torch-mlir's `tm_tensor` ops: the same ops as IREE's `iree_linalg_ext` with the same syntax
and meaning (torch-mlir emits them for sort/topk, cumsum, scatter/index_put and attention), so
each is the `iree_linalg_ext` class under torch-mlir's name and one implementation serves both."""

from __future__ import annotations

from xdsl.dialects.utils import AbstractYieldOperation
from xdsl.ir import Attribute, Dialect
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.traits import IsTerminator

from weir.dialects import iree_linalg_ext as ext


@irdl_op_definition
class YieldOp(AbstractYieldOperation[Attribute]):
    name = "tm_tensor.yield"
    traits = traits_def(IsTerminator())


SortOp = ext.define(ext.Sort, "tm_tensor.sort")


TopkOp = ext.define(ext.Topk, "tm_tensor.topk")


ScanOp = ext.define(ext.Scan, "tm_tensor.scan")


ScatterOp = ext.define(ext.Scatter, "tm_tensor.scatter")


AttentionOp = ext.define(ext.Attention, "tm_tensor.attention")


DIALECT = Dialect("tm_tensor", [YieldOp, SortOp, TopkOp, ScanOp, ScatterOp, AttentionOp], [])
