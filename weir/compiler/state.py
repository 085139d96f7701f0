"""What a compilation carries besides the IR: its options, the source name for diagnostics, and
the blob store for constants and executable payloads (kept out of the IR so they are never
printed and re-parsed, and never land in xDSL's process-wide resource store)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from weir.compiler.devices import DeviceTable
from weir.compiler.options import CompilerOptions


@dataclass
class BlobStore:
    blobs: dict[str, bytes] = field(default_factory=dict)
    # Each distinct content once: a weight two functions (or two constants) share is one
    # segment of the module file, mapped once at run time.
    by_content: dict[bytes, str] = field(default_factory=dict)

    def add(self, stem: str, data: bytes) -> str:
        """The key of `data`: an existing one if the same bytes were added before."""
        data = bytes(data)
        if data in self.by_content:
            return self.by_content[data]
        key = stem
        n = 0
        while key in self.blobs:
            n += 1
            key = f"{stem}_{n}"
        self.blobs[key] = data
        self.by_content[data] = key
        return key


@dataclass
class CompilationState:
    options: CompilerOptions
    filename: str
    module_name: str
    blobs: BlobStore = field(default_factory=BlobStore)

    @cached_property
    def devices(self) -> DeviceTable:
        """The program's devices, in binding order (from `options.target_devices`)."""
        return DeviceTable.of(self.options)
