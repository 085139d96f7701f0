"""weir's own store for `dense_resource` blobs, one per parsed module.

Defect fix (DESIGN.md §3): xDSL 0.74 keeps resource blobs in the builtin dialect's
`OpAsmDialectInterface`, one process-wide dict. Two parses that use the same blob name
overwrite (or silently rename) each other's data. weir keeps blobs in a `ConstantStore`
created per parse and attached to the module instead, and never touches xDSL's store.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.ir import Operation

DEFAULT_ALIGNMENT = 4
"""MLIR's blob text format starts with a little-endian u32 alignment; 4 when we pick one."""


@dataclass(frozen=True)
class Blob:
    """The bytes of one resource and the alignment MLIR's text format recorded for them."""

    data: bytes
    alignment: int = DEFAULT_ALIGNMENT

    @staticmethod
    def from_hex(text: str) -> Blob:
        """Decode MLIR's `"0x<align u32 LE><data>"` blob text; ValueError if malformed."""
        if not text.startswith(("0x", "0X")):
            raise ValueError("resource blob must be a hex string starting with 0x")
        raw = bytes.fromhex(text[2:])
        if len(raw) < 4:
            raise ValueError("resource blob is shorter than its 4-byte alignment header")
        alignment = int.from_bytes(raw[:4], "little")
        return Blob(raw[4:], alignment)

    def to_hex(self) -> str:
        return "0x" + (self.alignment.to_bytes(4, "little") + self.data).hex().upper()


class ConstantStore:
    """Named blobs referenced by `dense_resource<name>` attributes of one module.

    A name may be declared (referenced) without data: MLIR allows eliding blobs, e.g.
    `dense_resource<__elided__>`; `get` then returns None.
    """

    def __init__(self) -> None:
        self._blobs: dict[str, Blob | None] = {}

    def declare(self, name: str) -> None:
        self._blobs.setdefault(name, None)

    def set(self, name: str, blob: Blob) -> None:
        self._blobs[name] = blob

    def get(self, name: str) -> Blob | None:
        return self._blobs.get(name)

    def data(self, name: str) -> bytes | None:
        blob = self._blobs.get(name)
        return None if blob is None else blob.data

    def add(self, data: bytes, name_hint: str = "blob", alignment: int = DEFAULT_ALIGNMENT) -> str:
        """Store new data under a fresh name derived from `name_hint`; returns the name."""
        name, n = name_hint, 0
        while name in self._blobs:
            name = f"{name_hint}_{n}"
            n += 1
        self._blobs[name] = Blob(bytes(data), alignment)
        return name

    def __contains__(self, name: object) -> bool:
        return name in self._blobs

    def __iter__(self) -> Iterator[str]:
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)


_stores: weakref.WeakKeyDictionary[Operation, ConstantStore] = weakref.WeakKeyDictionary()


def attach_constants(module: Operation, store: ConstantStore) -> None:
    """Associate `store` with `module` (a side table: xDSL ops have no spare slot for it)."""
    _stores[module] = store


def constants_of(module: Operation) -> ConstantStore:
    """The store of `module`, created empty (and attached) if it has none yet."""
    store = _stores.get(module)
    if store is None:
        store = ConstantStore()
        _stores[module] = store
    return store
