"""IREE's `iree_encoding` tensor encodings that weir's input may carry.

Only `#iree_encoding.packed_storage` is accepted: on a tensor of i1 it says the elements are
packed eight to a byte (the first in the lowest bit), as i2/i4 always are. The layout is only
visible through a `flow.tensor.bitcast` to or from a byte-sized type, which the input phase
lowers to packing and unpacking (`lower-tensor-bitcasts`); `drop-packed-storage` then removes the
encoding, so no later phase sees it."""

from __future__ import annotations

from xdsl.ir import Attribute, Dialect, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition

from weir.ir.upstream import TensorType


@irdl_attr_definition
class PackedStorageAttr(ParametrizedAttribute):
    """The elements of a sub-byte tensor packed densely into bytes."""

    name = "iree_encoding.packed_storage"


def is_packed_storage(t: Attribute) -> bool:
    return isinstance(t, TensorType) and isinstance(t.encoding, PackedStorageAttr)


DIALECT = Dialect("iree_encoding", [], [PackedStorageAttr])
